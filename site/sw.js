// The site's service worker (registered by site/offline.mjs): a second visit works offline and
// starts without downloading Pyodide again.
//
// - pyodide/: cache first (14 MB that change only with Pyodide's version; "Clear cache" drops them);
// - everything else of this origin (pages, scripts, wheels/latest.json, the wheels, data): network
//   first, so a rebuilt wheel or page is used as soon as the server has it, and the cached copy
//   when the network fails (offline, server gone);
// - JupyterLite (lite/) has its own service worker, and POSTs (CSP reports) pass through.
// Messages from the page: {type: "status"} answers {entries, bytes}; {type: "cache", urls} caches
// the URLs not cached yet (what the page fetched before this worker controlled it);
// {type: "clear"} empties the cache.

const CACHE = "torchweb-site-v1";
const SCOPE = new URL("./", self.location.href).href;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function ours(request) {
  return request.method === "GET" && request.url.startsWith(SCOPE) && !request.url.startsWith(SCOPE + "lite/");
}

const MAX_BYTES = 32e6;   // larger files (MiniLM's weights) are kept by their page's own cache

async function put(request, response) {
  const size = Number(response.headers.get("content-length")) || 0;
  if (response.ok && response.status === 200 && response.type === "basic" && size <= MAX_BYTES) {
    const cache = await caches.open(CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}

async function cacheFirst(request) {
  const hit = await caches.match(request);
  return hit || put(request, await fetch(request));
}

async function networkFirst(request) {
  try {
    return await put(request, await fetch(request));
  } catch (err) {   // offline, or the server stopped: the copy of an earlier visit
    const hit = (await caches.match(request)) ||
      (request.mode === "navigate" ? await caches.match(request, { ignoreSearch: true }) : undefined);
    if (hit) return hit;
    throw err;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (!ours(request) || request.headers.has("range")) return;
  const path = request.url.slice(SCOPE.length);
  event.respondWith(path.startsWith("pyodide/") ? cacheFirst(request) : networkFirst(request));
});

async function status() {
  const cache = await caches.open(CACHE);
  let bytes = 0, entries = 0;
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    bytes += Number(response.headers.get("content-length")) || (await response.clone().arrayBuffer()).byteLength;
    entries += 1;
  }
  return { entries, bytes };
}

async function cacheMissing(urls) {
  const cache = await caches.open(CACHE);
  for (const url of urls) {
    const request = new Request(url);
    if (!ours(request) || (await cache.match(request))) continue;
    try {
      await put(request, await fetch(request));
    } catch (err) { /* gone from the server: nothing to keep */ }
  }
}

self.addEventListener("message", (event) => {
  const { type, urls } = event.data || {};
  const reply = (value) => event.ports[0] && event.ports[0].postMessage(value);
  const work = type === "status" ? status()
    : type === "cache" ? cacheMissing(urls || []).then(status)
    : type === "clear" ? caches.delete(CACHE).then(status)
    : Promise.resolve(null);
  event.waitUntil(work.then(reply, (err) => reply({ error: String(err) })));
});
