// The GPT page (gpt.html)'s script, a file of its own: the site's CSP runs no inline script.
import { outputLog } from "./run.mjs";
import { plot } from "./demos/digits/plot.mjs";
import { $, secs, startWorker, collectErrors, showError, showStage, showAdapter } from "./demo_page.mjs";
const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const int = (k, d) => Math.max(0, parseInt(params.get(k) ?? String(d), 10) || 0);
const args = { steps: int("steps", 300), batch: Math.max(1, int("batch", 16)), every: Math.max(1, int("every", 10)),
               sampleEvery: int("sampleEvery", 100), length: Math.max(1, int("length", 200)), seed: int("seed", 0),
               prompt: params.get("prompt") ?? "Shall I ", temperature: Math.max(0, parseFloat(params.get("temperature") ?? "0.8")),
               lr: parseFloat(params.get("lr") ?? "0.003") || 0.003, config: {} };
// the model's size: only the parameters given (model.py's CONFIG has the defaults)
for (const [k, key] of [["layers", "n_layer"], ["embd", "n_embd"], ["heads", "n_head"], ["block", "block_size"]]) {
  if (params.has(k)) args.config[key] = Math.max(1, int(k, 1));
}
$("prompt").value = args.prompt; $("temperature").value = args.temperature; $("length").value = args.length;
const points = Math.ceil(args.steps / args.every);
$("loss-caption").textContent = `training loss (mean of each ${args.every} steps, ${args.batch} windows of ` +
                                `${args.config.block_size || 64} characters a step)`;
// The test reads this object: the run's settings, what the page showed, and what went wrong.
const summary = globalThis.torchwebGPT = { ...args, adapter: null, device: null, history: [], samples: [], errors: [],
                                           finished: false, saved: null, loaded: null };
const t0 = performance.now();
const losses = [];
const redraw = () => plot($("loss-plot"), losses, { xmax: Math.max(points, losses.length, 1), color: "#c0392b", label: (v) => v.toFixed(2) });
redraw();
const fail = (text) => {
  summary.errors.push(text); showError(text);
  if ($("output").dataset.status === "running") finish(false, text); else log("ERROR " + text);
};
collectErrors(summary.errors);
const show = (label, text) => { $("sample-label").textContent = label; $("sample").textContent = text; };
const enable = (on) => { for (const id of ["sample-btn", "save-btn", "load-input"]) $(id).disabled = !on; };
const current = () => ({ prompt: $("prompt").value, length: Math.max(1, parseInt($("length").value, 10) || 1),
                         temperature: Math.max(0, parseFloat($("temperature").value) || 0) });

const w = startWorker("./demos/chargpt/worker.mjs", fail);
w.onmessage = ({ data: m }) => {
  if (m.type === "log") log(m.text);
  else if (m.type === "stage") showStage(m, log, t0);
  else if (m.type === "adapter") {
    summary.adapter = showAdapter(m, log); $("stage").textContent = args.steps ? "training" : "ready (no training: ?steps=0)";
    if (m.is_fallback_adapter && !Object.keys(args.config).length && args.steps > 20) {
      // a CPU pretending to be a GPU: the default model takes many seconds a step there
      $("note").textContent = "This is a software WebGPU adapter (no GPU in use): the default model takes many seconds a step here. " +
        "A tiny model trains at a few seconds a step: ?steps=60&batch=64&every=2&lr=0.01&layers=1&embd=32&heads=2&block=16&length=40";
    }
  } else if (m.type === "ready") {
    summary.device = m.device; summary.vocab = m.vocab; summary.params = m.params;
    $("device").textContent = `${m.device} (${m.params.toLocaleString()} parameters, ${m.vocab.length} characters)`;
    log(`model: ${m.params} parameters on ${m.device}, ${JSON.stringify(m.config)}, alphabet of ${m.vocab.length} characters`);
    $("load-input").disabled = false;    // a file can be picked now; it loads after the training
  } else if (m.type === "loss") {
    if (!losses.length) {
      summary.firstResultSeconds = (performance.now() - t0) / 1000;
      $("first").textContent = `${secs(performance.now() - t0)} (page start to the first loss point)`;
    }
    losses.push(m.loss); redraw();
    summary.history.push({ step: m.step, loss: m.loss });
    $("step-label").textContent = `Step ${m.step} of ${args.steps}`; $("step-bar").max = args.steps; $("step-bar").value = m.step;
    log(`step ${m.step}/${args.steps}: loss ${m.loss.toFixed(4)} (${m.seconds.toFixed(1)} s training)`);
  } else if (m.type === "sample") {
    summary.samples.push(m);
    show(m.step === null ? `sample at temperature ${m.temperature}:` : `sample after step ${m.step} (temperature ${m.temperature}):`,
         $("prompt").value + m.text);
    log(`sample${m.step === null ? "" : " at step " + m.step}: ${JSON.stringify(m.text)}`);
    if (m.step === null) enable(true);
  } else if (m.type === "done") {
    Object.assign(summary, { trainSeconds: m.seconds, greedy: m.greedy, finalSample: m.sample, prompt: m.prompt,
                             totalSeconds: (performance.now() - t0) / 1000, finished: true });
    const last = summary.history.length ? summary.history[summary.history.length - 1].loss : null;
    if (m.steps) {
      $("final").textContent = `${m.steps} steps in ${m.seconds.toFixed(1)} s, last loss ${last.toFixed(3)}`;
      $("stage").textContent = "done: sample, save or load";
      show(`after training, temperature ${m.temperature} (greedy: ${JSON.stringify(m.greedy)}):`, m.prompt + m.sample);
      log(`greedy sample: ${JSON.stringify(m.greedy)}`);
      log(`sample at temperature ${m.temperature}: ${JSON.stringify(m.sample)}`);
    } else {
      $("final").textContent = "none (?steps=0)";
      $("stage").textContent = "ready: load a saved model";
      $("device").textContent = "webgpu (no model yet)";
    }
    enable(true); finish(true);
  } else if (m.type === "saved") {
    const blob = new Blob([m.bytes], { type: "application/octet-stream" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob); a.download = "chargpt.pt";
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
    summary.saved = { bytes: m.bytes.byteLength };
    log(`saved chargpt.pt (${m.bytes.byteLength} bytes)`); enable(true);
  } else if (m.type === "loaded") {
    summary.loaded = { greedy: m.greedy, sample: m.sample, device: m.device, params: m.params };
    $("device").textContent = `${m.device} (${m.params.toLocaleString()} parameters, ${m.vocab.length} characters; loaded from a file)`;
    $("stage").textContent = "loaded a saved model";
    show(`from the loaded file, temperature ${current().temperature} (greedy: ${JSON.stringify(m.greedy)}):`, current().prompt + m.sample);
    log(`loaded: greedy sample ${JSON.stringify(m.greedy)}`); enable(true);
  } else if (m.type === "error") {
    if (m.cmd === "train") w.terminate();
    fail(m.cmd && m.cmd !== "train" ? `${m.cmd}: ${m.text}` : m.text); enable(m.cmd !== "train");
  }
};
w.postMessage({ cmd: "train", ...args, pyodideURL: params.get("pyodide") || undefined });
$("sample-btn").onclick = () => { enable(false); $("sample-label").textContent = "sampling…"; w.postMessage({ cmd: "sample", ...current() }); };
$("save-btn").onclick = () => { enable(false); w.postMessage({ cmd: "save" }); };
$("load-input").onchange = async (e) => {
  const file = e.target.files[0];
  if (!file) return;
  enable(false); $("stage").textContent = `loading ${file.name}`;
  const bytes = await file.arrayBuffer();
  e.target.value = "";
  w.postMessage({ cmd: "load", bytes, ...current() }, [bytes]);
};
