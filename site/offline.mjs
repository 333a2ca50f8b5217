// Offline and fast second visits: registers site/sw.js and shows its state in a small line at
// the page's end ("Works offline: N MB cached" with a "Clear cache" button). Included by each page with one
// <script type="module" src="offline.mjs">; exposes globalThis.torchwebOffline for the tests.
//
// The worker caches what it sees once it controls the page; what the page fetched before that
// (the page, its scripts, Pyodide when a Web Worker loaded it first) is asked for once the page's
// run is over (#output DONE or ERROR, or after 30 s), so it does not compete with the first load.

const here = new URL(".", import.meta.url);
const CACHE = "torchweb-site-v1";   // site/sw.js's
const CORE = ["pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs", "pyodide/pyodide.asm.wasm",
              "pyodide/python_stdlib.zip", "pyodide/pyodide-lock.json", "wheels/latest.json"];
const state = globalThis.torchwebOffline = { state: "starting", bytes: 0, entries: 0 };

function badge() {
  let el = document.getElementById("torchweb-offline");
  if (el) return el;
  el = document.createElement("div");
  el.id = "torchweb-offline";
  el.className = "offline-badge";
  el.setAttribute("role", "status");
  // in the flow at the page's end, not an overlay: it must never cover the page's controls
  Object.assign(el.style, { margin: "1.5rem 0 0.5rem", fontSize: "0.8rem", opacity: "0.8" });
  const text = document.createElement("span");
  const clear = document.createElement("button");
  clear.type = "button";
  clear.textContent = "Clear cache";
  clear.style.marginLeft = "0.5rem";
  clear.addEventListener("click", clearCache);
  el.append(text, clear);
  document.body.append(el);
  return el;
}

function show(name, text) {
  state.state = name;
  const el = badge();
  el.dataset.state = name;
  el.firstChild.textContent = text;
}

async function coreURLs() {
  const urls = CORE.map((p) => new URL(p, here).href);
  try {
    const latest = await (await fetch(new URL("wheels/latest.json", here))).json();
    for (const f of [latest.wheel, latest.pyodide_wheel, latest.runtime]) if (f) urls.push(new URL("wheels/" + f, here).href);
  } catch (err) { /* offline: the cached copy answered or there is none */ }
  return urls;
}

function ask(message) {
  return new Promise((resolve) => {
    const worker = navigator.serviceWorker.controller;
    if (!worker) return resolve(null);
    const channel = new MessageChannel();
    channel.port1.onmessage = (e) => resolve(e.data);
    worker.postMessage(message, [channel.port2]);
  });
}

async function refresh() {
  const urls = await coreURLs();
  const missing = [];
  for (const url of urls) if (!(await caches.match(url, { cacheName: CACHE }))) missing.push(url);
  const s = (await ask({ type: "status" })) || { bytes: 0, entries: 0 };
  Object.assign(state, s, { missing });
  if (missing.length === 0) show("cached", `Works offline: ${(s.bytes / 1e6).toFixed(1)} MB cached`);
  else show("partial", `Caching for offline use (${missing.length} files to go)`);
  return missing;
}

async function topUp() {
  const seen = performance.getEntriesByType("resource").map((e) => e.name).filter((u) => u.startsWith(here.origin));
  await ask({ type: "cache", urls: [location.href, ...seen, ...(await coreURLs())] });
  await refresh();
}

async function clearCache() {
  await ask({ type: "clear" });
  await caches.delete(CACHE);
  Object.assign(state, { bytes: 0, entries: 0 });
  show("cleared", "Cache cleared: the next visit downloads everything again");
}

function runOver() {
  return new Promise((resolve) => {
    const out = document.getElementById("output");
    const done = () => !out || ["DONE", "ERROR"].includes(out.dataset.status);
    if (done()) return resolve();
    const observer = new MutationObserver(() => { if (done()) { observer.disconnect(); resolve(); } });
    observer.observe(out, { attributes: true, attributeFilter: ["data-status"] });
    setTimeout(() => { observer.disconnect(); resolve(); }, 30000);
  });
}

async function start() {
  if (!("serviceWorker" in navigator)) return show("unsupported", "Offline use needs service workers");
  try {
    await navigator.serviceWorker.register(new URL("sw.js", here), { scope: here.pathname });
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {   // first visit: claimed by sw.js's activate
      await Promise.race([new Promise((r) => navigator.serviceWorker.addEventListener("controllerchange", r, { once: true })),
                          new Promise((r) => setTimeout(r, 5000))]);   // (a hard reload bypasses it)
    }
    if ((await refresh()).length) {
      await runOver();
      await topUp();
    }
  } catch (err) {
    show("error", `Offline use unavailable: ${err.message || err}`);
  }
}

start();
