// The Hello page (hello.html): demo.py on the main thread, then in a module Web Worker.
import { runHere, runInWorker, outputLog } from "./run.mjs";
const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const opts = { log, pyodideURL: params.get("pyodide") || undefined };
try {
  log("== main thread ==");
  await runHere("demo.py", opts);
  if (params.get("worker") !== "0") {
    log("== module Web Worker ==");
    await runInWorker("demo.py", opts);
  }
  finish(true);
} catch (e) {
  finish(false, (e && e.message) || String(e));
}
