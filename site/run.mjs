// Run a Python file of site/ on the main thread or in the module worker; shared by the pages.
import { boot, fetchText } from "./boot.mjs";

export async function runHere(script, { log, pyodideURL, globals = {} }) {
  const pyodide = await boot({ log, pyodideURL });
  for (const [k, v] of Object.entries(globals)) pyodide.globals.set(k, v);
  const result = await pyodide.runPythonAsync(await fetchText(script));
  return result === undefined ? null : String(result);
}

export function runInWorker(script, { log, pyodideURL, globals = {} }) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("worker.mjs", import.meta.url), { type: "module" });
    w.onmessage = ({ data }) => {
      if (data.type === "log") return log(data.text);
      w.terminate();
      if (data.type === "done") resolve(data.result);
      else reject(new Error(data.text));
    };
    w.onerror = (e) => { w.terminate(); reject(new Error(`worker: ${e.message || "failed to start"}`)); };
    w.postMessage({ script, pyodideURL, globals });
  });
}

// The page protocol that scripts/run_page.py waits for: #output gets data-status DONE or ERROR.
export function outputLog() {
  const out = document.getElementById("output");
  return {
    log: (s) => { out.textContent += s + "\n"; },
    finish: (ok, text = "") => {
      out.textContent += (ok ? "DONE" : "ERROR\n" + text) + "\n";
      out.dataset.status = ok ? "DONE" : "ERROR";
    },
  };
}
