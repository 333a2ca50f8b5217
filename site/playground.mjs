// The Playground page (playground.html)'s script, a file of its own: the site's CSP runs no inline script.
import { shareHash, readHash } from "./demos/playground/share.mjs";
import { drawFigure } from "./demos/playground/plot.mjs";
import { makeEditor } from "./playground_editor.mjs";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const out = $("output");
const secs = (s) => s.toFixed(1) + " s";
const state = globalThis.torchwebPlayground = { ready: false, adapter: null, device: null, runs: 0, running: false,
  readySeconds: null, firstOutputSeconds: null, figures: [], images: 0, last: null, errors: [] };
window.addEventListener("error", (e) => state.errors.push(String(e.message)));
window.addEventListener("unhandledrejection", (e) => state.errors.push(String(e.reason)));

// ---- output and plots
const write = (text, cls) => {
  const last = out.lastChild;
  if (last && last.className === (cls || "")) last.textContent += text;
  else { const s = document.createElement("span"); s.className = cls || ""; s.textContent = text; out.append(s); }
  out.scrollTop = out.scrollHeight;
};
const canvases = new Map();   // title -> canvas: a plot with the same title is redrawn (live curves)
function showPlot(fig) {
  let c = canvases.get(fig.title);
  if (!c) { c = document.createElement("canvas"); c.width = 440; c.height = 240; c.dataset.title = fig.title;
            $("plots").append(c); canvases.set(fig.title, c); }
  drawFigure(c, fig);
  const i = state.figures.findIndex((f) => f.title === fig.title);
  if (i >= 0) state.figures[i] = fig; else state.figures.push(fig);
}

// ---- the worker
let worker = null, runStart = 0;
function startWorker() {
  state.ready = false;
  $("stage").textContent = "loading Pyodide and torchweb";
  worker = new Worker(new URL("./demos/playground/worker.mjs", import.meta.url), { type: "module" });
  worker.onerror = (e) => { state.errors.push(`worker: ${e.message}`); finish(false, `worker: ${e.message || "failed to start"}`); };
  worker.onmessage = ({ data: m }) => {
    if (m.type === "log") console.log(m.text);
    else if (m.type === "stdout" || m.type === "stderr") {
      if (state.running && state.firstOutputSeconds === null) {
        state.firstOutputSeconds = performance.now() / 1000;
        state.firstOutputAfterRun = (performance.now() - runStart) / 1000;
        $("first").textContent = `${secs(state.firstOutputSeconds)} from page open to the first output ` +
          `(${secs(state.firstOutputAfterRun)} after Run; worker ready after ${secs(state.readySeconds)})`;
      }
      write(m.text, m.type === "stderr" ? "stderr" : "");
    } else if (m.type === "plot") showPlot(m);
    else if (m.type === "image") {
      const img = document.createElement("img"); img.src = "data:image/png;base64," + m.png; $("plots").append(img); state.images++;
    } else if (m.type === "ready") onReady(m);
    else if (m.type === "done") finish(m.ok, "", m);
    else if (m.type === "fatal") { state.errors.push(m.text); write(m.text + "\n", "stderr"); finish(false, m.text); }
  };
  worker.postMessage({ type: "start", pyodideURL: params.get("pyodide") || undefined });
}
function onReady(m) {
  Object.assign(state, { ready: true, adapter: m.adapter, device: m.device, readySeconds: performance.now() / 1000 });
  const a = m.adapter;
  if (a) {
    state.adapterName = [a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(" / ") || "(unnamed adapter)";
    $("adapter").textContent = "WebGPU: " + state.adapterName + (a.is_fallback_adapter ? " (software fallback adapter)" : "");
  } else {
    $("adapter").innerHTML = "";
    const s = document.createElement("span"); s.className = "error";
    s.textContent = `No WebGPU here (${m.gpu_error}): this browser lacks WebGPU or gives no adapter. ` +
      "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu)." +
      (m.device ? " Tensors run on the cpu device (numpy) instead." : " numpy could not load either, so torch tensors cannot run here; plain Python still runs.");
    $("adapter").append(s);
  }
  $("device").textContent = m.device ? `${m.device} (torch's default device)` : "none";
  $("stage").textContent = state.running ? "running" : `ready (${secs(m.seconds)} to load)`;
}
function finish(ok, text, m) {
  state.running = false;
  $("run").disabled = false; $("stop").disabled = true;
  if (m) {
    state.last = m;
    $("device").textContent = `${m.device} (torch's default device: the last program ran there)`;
  }
  $("stage").textContent = ok ? `finished in ${secs(m ? m.seconds : 0)}` : (m ? `failed after ${secs(m.seconds)} (see the traceback)` : "stopped: " + text);
  out.dataset.status = ok ? "DONE" : "ERROR";
}

function run() {
  if (state.running) return;
  out.textContent = ""; $("plots").textContent = ""; canvases.clear(); state.figures = []; state.images = 0;
  state.running = true; state.runs++; runStart = performance.now();
  out.dataset.status = "running";
  $("run").disabled = true; $("stop").disabled = false;
  $("stage").textContent = state.ready ? "running" : "waiting for Pyodide, then running";
  worker.postMessage({ type: "run", code: editor.get(), weights: $("weights").value.trim() });
}
function stop() {
  worker.terminate();
  write("\n[stopped: a fresh worker is starting]\n", "stderr");
  finish(false, "by the Stop button");
  startWorker();
}

// ---- code in and out of the link
let examples = [];
async function loadExample(name) {
  const r = await fetch(new URL(`./demos/playground/examples/${encodeURIComponent(name)}.py`, location.href));
  if (!r.ok) throw new Error(`no example named ${name} (${r.status})`);
  editor.set(await r.text());
  $("examples").value = examples.some((e) => e.name === name) ? name : "";
  state.example = name;
  for (const b of document.querySelectorAll("#gallery button")) b.setAttribute("aria-pressed", String(b.dataset.name === name));
}
async function openHash() {
  let h;
  try { h = await readHash(location.hash); }
  catch (e) { $("note").textContent = "this link's code could not be read: " + e.message; return; }
  $("weights").value = h.weights || "";
  if (h.code !== undefined) {
    editor.set(h.code); $("examples").value = ""; state.example = null;
    for (const b of document.querySelectorAll("#gallery button")) b.setAttribute("aria-pressed", "false");
    $("note").textContent = "Opened from a link: press Run to run it.";
  } else await loadExample(h.example || "tensor_tour");
  state.loaded = true;
}
async function share() {
  const h = await shareHash(editor.get(), $("weights").value.trim());
  history.replaceState(null, "", location.pathname + h);   // no ?autorun in a shared link
  $("link").value = location.href;
  state.shared = location.href;
  $("note").textContent = `Link made (${location.href.length} characters).`;
}

$("run").onclick = run;
$("stop").onclick = stop;
$("share").onclick = share;
$("copy").onclick = async () => {
  if (!$("link").value) await share();
  try { await navigator.clipboard.writeText($("link").value); $("note").textContent = "Link copied."; }
  catch { $("link").select(); document.execCommand("copy"); $("note").textContent = "Link selected (copy it)."; }
};
$("examples").onchange = () => { if ($("examples").value) location.hash = "example=" + $("examples").value; };
window.addEventListener("hashchange", openHash);

if (!("gpu" in navigator)) $("adapter").innerHTML = '<span class="error">WebGPU is missing in this browser (no navigator.gpu).</span>';
startWorker();     // Pyodide loads while the person reads the code; nothing runs before Run
const editor = await makeEditor($("editor"), { onRun: run });
state.editor = editor.kind;
globalThis.torchwebPlaygroundEditor = editor;    // the page tests set code through it
examples = await (await fetch(new URL("./demos/playground/examples/index.json", location.href))).json();
for (const e of examples) {
  $("examples").append(new Option(e.title, e.name));
  const b = document.createElement("button");    // the gallery: one card per example
  b.type = "button"; b.dataset.name = e.name; b.setAttribute("aria-pressed", "false");
  const t = document.createElement("b"); t.textContent = e.title;
  const d = document.createElement("span"); d.textContent = e.about || "";
  b.append(t, d); b.onclick = () => { location.hash = "example=" + e.name; };
  const li = document.createElement("li"); li.append(b); $("gallery").append(li);
}
await openHash();
// ?autorun (tests) runs only the site's own examples: code that came in a link never runs before Run.
if (params.get("autorun") === "1" && state.example) run();
