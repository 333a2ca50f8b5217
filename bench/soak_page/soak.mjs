// The long mode of the soak scripts (bench/soak_page.py): each script runs with
// TORCHWEB_SOAK_STEPS steps, on this page's thread or in the demos' module worker. The figures
// land in globalThis.torchwebSoak: per script its result and soak_runs (snapshots after warm-up
// and at the end), and with ?worker=1 this thread's frame times (requestAnimationFrame deltas)
// while the worker trains.
import { runHere, runInWorker, outputLog } from "../../site/run.mjs";
import { fetchText } from "../../site/boot.mjs";

const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const steps = parseInt(params.get("steps") || "1000", 10);
const scripts = (params.get("scripts") || "soak_mlp,soak_gpt").split(",");
const inWorker = params.get("worker") === "1";

const PROGRAM = `
import json, os, sys, types
os.environ["TORCHWEB_SOAK_STEPS"] = str(SOAK_STEPS)
import torchweb
torchweb.install_torch_alias()
torchweb.set_default_device("webgpu")
_out = {}
for _name, _code, _mods in json.loads(SOAK_SCRIPTS):
    for _path, _src in _mods:   # the modules named on the script's "# modules:" line
        _m = types.ModuleType(_path.rsplit("/", 1)[-1][:-3])
        sys.modules[_m.__name__] = _m
        exec(compile(_src, _path, "exec"), _m.__dict__)
    _ns = {"__name__": "__script__"}
    exec(compile(_code, _name, "exec"), _ns)
    _out[_name] = {"result": _ns["result"], "runs": _ns["soak_runs"]}
json.dumps(_out)
`;

async function load(name) {
  const code = await fetchText(`../tests/browser/scripts/${name}.py`);   // relative to site/
  const line = code.split("\n").find((l) => l.startsWith("# modules:")) || "# modules:";
  const mods = [];
  for (const path of line.slice("# modules:".length).trim().split(/\s+/).filter(Boolean)) {
    mods.push([path, await fetchText("../" + path)]);
  }
  return [name, code, mods];
}

function frameTimes() {   // requestAnimationFrame deltas of this thread, until stopped
  const deltas = [];
  let last = null, on = true;
  const tick = (t) => {
    if (last !== null) deltas.push(t - last);
    last = t;
    if (on) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return () => {
    on = false;
    const s = [...deltas].sort((a, b) => a - b);
    const q = (p) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null);
    return { frames: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s.length ? s[s.length - 1] : null,
             over50ms: s.filter((d) => d > 50).length };
  };
}

try {
  const globals = { SOAK_STEPS: steps, SOAK_SCRIPTS: JSON.stringify(await Promise.all(scripts.map(load))) };
  const url = URL.createObjectURL(new Blob([PROGRAM], { type: "text/plain" }));
  const stop = frameTimes();
  const t0 = performance.now();
  const opts = { log, globals };
  const out = JSON.parse(inWorker ? await runInWorker(url, opts) : await runHere(url, opts));
  const seconds = (performance.now() - t0) / 1000;
  const frames = stop();
  URL.revokeObjectURL(url);
  globalThis.torchwebSoak = { steps, worker: inWorker, seconds, frames, scripts: out };
  log(`frame times of this thread (${inWorker ? "training in a worker" : "training on this thread"}): ${JSON.stringify(frames)}`);
  finish(true);
} catch (e) {
  finish(false, (e && e.message) || String(e));
}
