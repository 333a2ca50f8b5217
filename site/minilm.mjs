// The Search page (minilm.html)'s script, a file of its own: the site's CSP runs no inline script.
import { outputLog } from "./run.mjs";
import { showError } from "./demo_page.mjs";   // (a lost GPU device's error offers a restart)
const { log, finish } = outputLog();
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const CACHE = "torchweb-minilm";
const SENTENCES = [
  "A man is eating food.",
  "A man is eating a piece of bread.",
  "The girl is carrying a baby.",
  "A man is riding a horse.",
  "A woman is playing violin.",
  "Two men pushed carts through the woods.",
  "A man is riding a white horse on an enclosed ground.",
  "A monkey is playing drums.",
  "A cheetah is running behind its prey.",
  "The new movie is awesome.",
  "The cat sits outside.",
  "The new movie is so great.",
  "I love pasta.",
  "Do you like pizza?",
  "The weather is lovely today.",
  "It's so sunny outside!",
  "He drove to the stadium.",
  "A plane is taking off.",
  "Someone is slicing a tomato in the kitchen.",
  "The stock market fell sharply this morning.",
  "Python is a popular programming language.",
  "The GPU computes the embeddings in the browser.",
];
for (const s of SENTENCES) { const li = document.createElement("li"); li.textContent = s; $("corpus").append(li); }
const summary = globalThis.torchwebMiniLM = { adapter: null, device: null, timings: {}, searches: [], errors: [], fromCache: null };
const t0 = performance.now();
const secs = (t) => (t / 1000).toFixed(1) + " s";
const mib = (b) => (b / 1048576).toFixed(1) + " MiB";
let finished = false;
const fail = (text) => {
  summary.errors.push(text);
  showError(text);
  if (!finished) { finished = true; finish(false, text); }
};
window.addEventListener("error", (e) => summary.errors.push(String(e.message)));
window.addEventListener("unhandledrejection", (e) => summary.errors.push(String(e.reason)));

$("clear").onclick = async () => {
  const gone = self.caches ? await caches.delete(CACHE) : false;
  $("cache-status").textContent = gone ? "cache cleared: the next visit downloads the weights again" : "nothing cached";
  log(`cache "${CACHE}" ${gone ? "deleted" : "was empty"}`);
};

const timings = [];
const showTimings = () => { $("times").textContent = timings.map(([n, s]) => `${n}: ${s.toFixed(1)} s`).join("; "); };
const downloads = {};
const w = new Worker(new URL("./demos/minilm/worker.mjs", import.meta.url), { type: "module" });
w.onerror = (e) => fail(`worker: ${e.message || "failed to start"}`);
const search = (query) => {
  $("search").disabled = true;
  $("result-info").textContent = "searching\u2026";
  w.postMessage({ type: "search", query, topK: SENTENCES.length });
};
$("search-form").onsubmit = (e) => { e.preventDefault(); search($("query").value); };
w.onmessage = ({ data: m }) => {
  if (m.type === "log") log(m.text);
  else if (m.type === "stage") {
    $("stage").textContent = m.text; $("setup-bar").value = m.done; log(`[${secs(performance.now() - t0)}] ${m.text}`);
  } else if (m.type === "download") {
    downloads[m.file] = m;
    const all = Object.values(downloads);
    const loaded = all.reduce((a, d) => a + d.loaded, 0), total = all.reduce((a, d) => a + (d.total || d.loaded), 0);
    $("download-bar").max = total || 1; $("download-bar").value = loaded;
    const cached = all.length && all.every((d) => d.fromCache);
    $("download-label").textContent = cached ? "Weights (from cache)" : `Download ${mib(loaded)} of ${mib(total)}`;
    if (m.file === "model.safetensors" && m.loaded === m.total) {
      summary.fromCache = m.fromCache;
      $("weights").textContent = `model.safetensors, ${mib(m.total)}, ` +
        (m.fromCache ? "from cache (the browser's Cache API, no download)" : "downloaded (now cached for the next visit)");
      log(`model.safetensors: ${mib(m.total)} ${m.fromCache ? "from cache" : "downloaded"}`);
    }
  } else if (m.type === "adapter") {
    const info = m; delete info.type;
    const name = ([info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(" / ") || "(unnamed adapter)") +
                 (info.is_fallback_adapter ? " (software fallback adapter)" : "");
    summary.adapter = name; $("adapter").textContent = "WebGPU: " + name; log("adapter: " + name);
  } else if (m.type === "timing") {
    timings.push([m.name, m.seconds]); summary.timings[m.name] = m.seconds; showTimings();
    log(`${m.name}: ${m.seconds.toFixed(1)} s`);
  } else if (m.type === "ready") {
    summary.device = m.device;
    $("device").textContent = `${m.device} (torchweb), ${m.n} sentences \u00d7 ${m.dim} dimensions`;
    $("setup-bar").value = 5; $("stage").textContent = "ready: type a query";
    $("query").disabled = false;
    if (params.get("q")) $("query").value = params.get("q");
    search($("query").value);
  } else if (m.type === "results") {
    const body = $("results"); body.innerHTML = "";
    for (const [i, score] of m.hits) {
      const tr = document.createElement("tr");
      const td1 = document.createElement("td"); td1.className = "score";
      const bar = document.createElement("span"); bar.className = "bar"; bar.style.width = Math.max(0, score) * 4 + "rem";
      td1.textContent = score.toFixed(4) + " "; td1.append(bar);
      const td2 = document.createElement("td"); td2.textContent = SENTENCES[i];
      tr.append(td1, td2); body.append(tr);
    }
    $("result-info").textContent = `"${m.query}": ${m.hits.length} sentences ranked in ${(m.seconds * 1000).toFixed(0)} ms`;
    $("search").disabled = false;
    summary.searches.push({ query: m.query, seconds: m.seconds, top: m.hits.slice(0, 3).map(([i, s]) => [SENTENCES[i], s]) });
    log(`search "${m.query}" (${(m.seconds * 1000).toFixed(0)} ms):`);
    for (const [i, s] of m.hits.slice(0, 3)) log(`  ${s.toFixed(4)}  ${SENTENCES[i]}`);
    if (!finished) {
      finished = true;
      summary.firstResultSeconds = (performance.now() - t0) / 1000;
      $("first").textContent = `${secs(performance.now() - t0)} (page open to the first search result)`;
      $("stage").textContent = "ready: type a query";
      finish(true);
    }
  } else if (m.type === "error") {
    $("search").disabled = false;
    fail(m.text);
  }
};
w.postMessage({ type: "start", sentences: SENTENCES, pyodideURL: params.get("pyodide") || undefined });
