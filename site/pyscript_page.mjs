// The PyScript pages' display: site/pyscript_train.py sends JSON messages, by calling
// window.twShow on the main thread or through the "torchweb-pyscript" BroadcastChannel from a
// worker. #output follows the pages' protocol (data-status DONE/ERROR, read by scripts/run_page.py);
// its data-result holds the final message as JSON.
const t0 = performance.now();
const $ = (id) => document.getElementById(id);
const out = $("output");
let firstResult = null;

const log = (text) => { out.textContent += text + "\n"; };
const progress = (value, label) => {
  if (value !== undefined) $("progress").value = value;
  if (label) $("stage").textContent = label;
};
const secs = () => ((performance.now() - t0) / 1000).toFixed(2) + " s";

function plot(losses) {
  // log scale: the loss falls by orders of magnitude
  const w = 320, h = 120, n = Math.max(losses.length - 1, 1);
  const logs = losses.map((l) => Math.log10(Math.max(l, 1e-12)));
  const hi = Math.max(...logs), lo = Math.min(...logs), span = Math.max(hi - lo, 1e-6);
  const pts = logs.map((l, i) => `${(i / n * w).toFixed(1)},${(4 + (hi - l) / span * (h - 8)).toFixed(1)}`);
  $("curve").innerHTML = `<polyline fill="none" stroke="#2a6" stroke-width="2" points="${pts.join(" ")}"/>`;
}

const losses = [];
window.twShow = (text) => {
  const m = JSON.parse(text);
  progress(m.progress);
  if (m.kind === "stage") { progress(undefined, m.text); log(`[${secs()}] ${m.text}`); }
  else if (m.kind === "adapter") { $("adapter").textContent = m.text; log(`adapter: ${m.text}`); }
  else if (m.kind === "step") {
    if (firstResult === null) {
      firstResult = secs();
      $("first").textContent = firstResult;
      log(`first result after ${firstResult}`);
    }
    losses.push(m.loss);
    progress(undefined, `training: step ${m.step}/${m.steps}`);
    $("losses").textContent = losses.map((l) => l.toPrecision(4)).join(", ");
    plot(losses);
  } else if (m.kind === "done") {
    $("device").textContent = m.device;
    progress(100, `done in ${secs()}`);
    log(`device: ${m.device}`);
    log(`losses: ${m.losses.map((l) => l.toPrecision(4)).join(" ")}`);
    log(`weight: ${JSON.stringify(m.weight)} bias: ${JSON.stringify(m.bias)}`);
    log(`training took ${m.seconds} s in Python; page -> done ${secs()}`);
    out.dataset.result = text;
    out.dataset.status = "DONE";
  } else if (m.kind === "error") {
    progress(undefined, "error");
    log(`ERROR: ${m.text}`);
    out.dataset.status = "ERROR";
  }
};
new BroadcastChannel("torchweb-pyscript").onmessage = ({ data }) => window.twShow(data);

// PyScript's own failures (no interpreter, a bad config) arrive as errors on the page
addEventListener("error", (e) => { if (!out.dataset.status) { log(`ERROR: ${e.message}`); out.dataset.status = "ERROR"; } });
progress(10, "loading PyScript, Pyodide and the torchweb wheel…");
log(`[${secs()}] loading PyScript, Pyodide and the torchweb wheel`);
