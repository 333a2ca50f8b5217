// The Complete page (lm.html)'s script, a file of its own: the site's CSP runs no inline script.
import { pageOutcome } from "./demo_page.mjs";
import { firstTokenClock, showFirstToken } from "./lm_phases.mjs";
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// firstToken: the time to first token and its phases (lm_phases.mjs), once per load
const summary = globalThis.torchwebLM = { adapter: null, model: null, generations: [], errors: [], firstToken: null };
const { log, done, fail } = pageOutcome(summary);
const mib = (b) => (b / 1048576).toFixed(1) + " MiB";
let worker = null;
const clock = firstTokenClock();
if (params.get("model")) $("model").value = params.get("model");
if (params.get("prompt")) $("prompt").value = params.get("prompt");
if (params.get("n")) $("n").value = params.get("n");
if (params.get("greedy") === "1") $("greedy").checked = true;

const generate = (byPage = false) => {
  clock.asked(byPage);
  $("go").disabled = true;
  $("completion").textContent = "";
  const p = document.createElement("span"); p.className = "prompt"; p.textContent = $("prompt").value;
  $("completion").append(p);
  $("speed").textContent = "generating\u2026";
  worker.postMessage({ type: "generate", prompt: $("prompt").value, maxNew: +$("n").value,
                       temperature: +$("temperature").value, topK: +$("topk").value, topP: 0,
                       greedy: $("greedy").checked });
};
$("form").onsubmit = (e) => { e.preventDefault(); generate(); };

const load = (fromNavigation = false) => {
  if (worker) worker.terminate();
  clock.start(fromNavigation);
  summary.firstToken = null;
  $("go").disabled = true;
  const t0 = performance.now();
  const base = new URL($("model").value, location.href).href;
  worker = new Worker(new URL("./demos/lm/worker.mjs", import.meta.url), { type: "module" });
  worker.onerror = (e) => fail(`worker: ${e.message || "failed to start"}`);
  worker.onmessage = ({ data: m }) => {
    if (m.type === "log") log(m.text);
    else if (m.type === "mark") m.name === "prefill" ? clock.prefilled(m) : clock.mark(m);
    else if (m.type === "stage") { $("stage").textContent = m.text; log(m.text); }
    else if (m.type === "download") {
      $("download-bar").max = m.total || 1; $("download-bar").value = m.loaded;
      $("download-label").textContent = `File ${mib(m.loaded)} of ${mib(m.total)}`;
    } else if (m.type === "adapter") {
      const name = [m.vendor, m.architecture, m.device, m.description].filter(Boolean).join(" / ") || "(unnamed adapter)";
      summary.adapter = name; $("adapter").textContent = "WebGPU: " + name; log("adapter: " + name);
    } else if (m.type === "ready") {
      summary.model = { type: m.modelType, parameters: m.parameters, seconds: m.seconds };
      $("info").textContent = `${m.modelType}, ${(m.parameters / 1e6).toFixed(1)} M parameters, loaded in ${m.seconds.toFixed(1)} s ` +
                              `(${((performance.now() - t0) / 1000).toFixed(1)} s since Load)`;
      $("source").textContent = m.source;
      $("stage").textContent = "ready"; $("go").disabled = false;
      clock.ready();
      log($("info").textContent);
      if (params.get("prompt")) generate(true);
    } else if (m.type === "token") {
      $("completion").append(document.createTextNode(m.text));
      const first = clock.firstToken();
      if (first) {
        summary.firstToken = first;
        showFirstToken(first, $("ttft"), $("phases"));
        log($("ttft").textContent + ": " + first.phases.map((p) => `${p.name} ${p.seconds.toFixed(2)} s`).join(", "));
      }
    } else if (m.type === "done") {
      summary.generations.push(m);
      const tps = m.tokensPerSecond ? `${m.tokensPerSecond.toFixed(1)} tokens/s` : "";
      $("speed").textContent = `${m.n} tokens, first after ${(m.firstSeconds * 1000).toFixed(0)} ms, then ${tps}`;
      log(`generated ${m.n} tokens: ${$("speed").textContent}`);
      $("stage").textContent = "ready"; $("go").disabled = false;
      done();
    } else if (m.type === "error") { $("go").disabled = false; fail(m.text); }
  };
  worker.postMessage({ type: "load", base, pyodideURL: params.get("pyodide") || undefined });
};
$("load").onclick = () => load(false);
if (params.get("model")) load(true);
