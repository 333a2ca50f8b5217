// The browser test tier's page: driver checks, then the recorded cases. The summary lands in
// globalThis.torchwebSummary (read by tests/browser/run_browser_tests.py) and in the log.
import { runHere, runInWorker, outputLog } from "./run.mjs";
import { fetchText } from "./boot.mjs";

const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const root = params.get("root") || "../tests/browser/";   // the repo root is served

async function main() {
  // One Python program: the checks and the replay run in one interpreter (one GPU device).
  const program = [
    await fetchText(root + "driver_check.py"),
    await fetchText(root + "replay.py"),
    await fetchText(root + "checkpoint_check.py"),
    "import json as _json",
    "_driver = _json.loads(await run_driver_checks())",
    "_driver = await run_checkpoint_checks(_driver)",   // checkpoints loaded from served URLs
    "_cases = await replay_cases(CASES_JSON, CASE_FILTER)",
    "_json.dumps({'adapter': _driver['adapter'], 'driver': _driver, **_cases})",
  ].join("\n");
  const globals = {
    CASES_JSON: await fetchText(root + "cases.json"),
    CASE_FILTER: params.get("filter") || "",
  };
  const opts = { log, pyodideURL: params.get("pyodide") || undefined, globals };
  // runHere/runInWorker fetch a script by path; hand them the joined program through a blob URL.
  const url = URL.createObjectURL(new Blob([program], { type: "text/plain" }));
  const result = params.get("worker") === "1"
    ? await runInWorker(url, opts) : await runHere(url, opts);
  URL.revokeObjectURL(url);
  return JSON.parse(result);
}

try {
  const s = await main();
  globalThis.torchwebSummary = s;
  log(`adapter: ${JSON.stringify(s.adapter)}`);
  log(`driver checks: ${s.driver.passed.length} passed, ${s.driver.failed.length} failed`);
  for (const [name, msg] of s.driver.failed) log(`FAIL driver ${name}\n${msg}`);
  log(`cases: ${s.passed} passed, ${s.failed.length} failed, ${s.total} run`);
  for (const [id, msg] of s.failed) log(`FAIL ${id}: ${msg}`);
  finish(true);
} catch (e) {
  finish(false, (e && e.message) || String(e));
}
