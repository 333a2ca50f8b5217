// What the worker demo pages (gpt.html, train.html) share: a module worker of demos/ sends
// "log", "stage" and "adapter" messages while it sets up, shown in #stage, #setup-bar (4 steps),
// #adapter and the log; errors go into the summary object the page tests read.
import { outputLog } from "./run.mjs";
export const $ = (id) => document.getElementById(id);
export const secs = (t) => (t / 1000).toFixed(1) + " s";

export function startWorker(path, fail) {
  const w = new Worker(new URL(path, import.meta.url), { type: "module" });
  w.onerror = (e) => fail(`worker: ${e.message || "failed to start"}`);
  return w;
}

// Uncaught errors and rejections count as the run's errors too.
export function collectErrors(errors) {
  window.addEventListener("error", (e) => errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => errors.push(String(e.reason)));
}

// A lost GPU device (torchweb.webgpu.DeviceLostError: the browser reset the GPU, a kernel ran too
// long, the tab was backgrounded on a phone...) takes the worker's tensors with it: the error
// comes with a button that restarts the page (a new worker, Pyodide and device) instead of
// leaving it stuck.
export const isDeviceLost = (text) => /DeviceLostError|WebGPU device (was|that was) lost/.test(String(text));

export function showError(text) {
  $("stage").innerHTML = "";
  const s = document.createElement("span"); s.className = "error"; s.textContent = text; $("stage").append(s);
  if (isDeviceLost(text)) {
    const b = document.createElement("button");
    b.id = "restart"; b.textContent = "The GPU device was lost: restart";
    b.onclick = () => location.reload();
    $("stage").append(" ", b);
  }
}

// A gallery page's outcome, for the page tests: fail(text) records the error in summary.errors,
// shows it in #stage (with the restart button after a lost device) and ends the log with ERROR;
// done() ends it with DONE. Only the first of them ends the log (later generations or errors
// only show). Uncaught errors land in summary.errors.
export function pageOutcome(summary) {
  const { log, finish } = outputLog();
  let finished = false;
  const end = (ok, text) => { if (!finished) { finished = true; finish(ok, text); } };
  collectErrors(summary.errors);
  return {
    log,
    done: () => end(true),
    fail: (text) => { summary.errors.push(text); showError(text); end(false, text); },
  };
}

export function showStage(m, log, t0) {
  $("stage").textContent = m.text; $("setup-bar").value = m.done; log(`[${secs(performance.now() - t0)}] ${m.text}`);
}

// The adapter message (its fields are the adapter's info): shown and logged; returns its name.
export function showAdapter(info, log) {
  const name = ([info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(" / ") || "(unnamed adapter)") +
               (info.is_fallback_adapter ? " (software fallback adapter)" : "");
  $("adapter").textContent = "WebGPU: " + name; log("adapter: " + name);
  if ($("setup-bar")) $("setup-bar").value = 4;     // the landing page has no setup bar
  return name;
}
