// The playground's module Web Worker: boots Pyodide and the torchweb wheel (site/boot.mjs), binds
// `import torch` to torchweb, starts WebGPU, then runs the code the page sends, streaming its
// stdout and stderr back as it prints. One worker runs one program at a time; the page's Stop
// terminates it and starts a fresh one. Messages out, all {type, ...}:
//   log {text} | ready {adapter, device, seconds, gpu_error} | stdout {text} | stderr {text}
//   | plot {title, xs, ys} | image {png} | done {ok, seconds, device} | fatal {text}
// Messages in: {type: "start", pyodideURL} once, then {type: "run", code, weights}.
import { boot, fetchText } from "../../boot.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

// Defined once in Python: the runner of each program, and the matplotlib hook.
const SETUP = `
import ast, base64, inspect, io, json, linecache, os, sys, time, traceback, types
os.environ["MPLBACKEND"] = "agg"           # matplotlib, where it loads: no DOM in a worker
import torchweb
torchweb.install_torch_alias()
import torch

_pg = types.ModuleType("playground")
_pg.__file__ = "playground.py"
exec(compile(PLAYGROUND_SRC, "playground.py", "exec"), _pg.__dict__)
sys.modules["playground"] = _pg
_pg._send = lambda s: _report("plot", s)

async def _start_device(has_gpu):
    """(adapter info or None, the error that left no GPU or None)."""
    if has_gpu:
        try:
            await torchweb.webgpu.init_async()
            return torchweb.webgpu.adapter_info(), None
        except Exception as e:
            return None, f"{type(e).__name__}: {e}"
    return None, "no navigator.gpu"

def _show_matplotlib():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in plt.get_fignums():
        buf = io.BytesIO()
        plt.figure(num).savefig(buf, format="png")
        _report("image", json.dumps({"png": base64.b64encode(buf.getvalue()).decode()}))
    plt.close("all")

async def _run(code, weights_url):
    linecache.cache["<playground>"] = (len(code), None, code.splitlines(True), "<playground>")
    ns = {"__name__": "__main__", "__builtins__": __builtins__, "WEIGHTS_URL": weights_url or None}
    _pg.figures.clear()
    t0 = time.perf_counter()
    ok = True
    try:
        c = compile(code, "<playground>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        r = eval(c, ns)
        if inspect.iscoroutine(r):
            await r
        _show_matplotlib()
    except SystemExit as e:
        ok = e.code in (None, 0)
    except BaseException as e:
        ok = False
        tb = e.__traceback__       # start the traceback at the person's code, not this runner
        while tb is not None and tb.tb_frame.f_code.co_filename != "<playground>":
            tb = tb.tb_next
        sys.stdout.flush()
        traceback.print_exception(type(e), e, tb, file=sys.stderr)
    sys.stdout.flush(); sys.stderr.flush()
    return json.dumps({"ok": ok, "seconds": time.perf_counter() - t0,
                       "device": str(torch.get_default_device())})
`;

let pyodide = null;
let ready = null;

async function start(pyodideURL) {
  const t0 = performance.now();
  const log = (text) => post("log", { text });
  pyodide = await boot({ log, pyodideURL });
  // raw writes, not lines: print(..., end="") and progress dots show as they come
  for (const [set, type] of [["setStdout", "stdout"], ["setStderr", "stderr"]]) {
    const dec = new TextDecoder();
    pyodide[set]({ write: (buf) => { post(type, { text: dec.decode(buf, { stream: true }) }); return buf.length; } });
  }
  pyodide.globals.set("PLAYGROUND_SRC", await fetchText("demos/playground/playground.py"));
  pyodide.globals.set("_report", (type, json) => post(type, JSON.parse(json)));
  await pyodide.runPythonAsync(SETUP);
  const hasGPU = "gpu" in navigator;
  const [adapter, gpuError] = (await pyodide.runPythonAsync(
    `json.dumps(await _start_device(${hasGPU ? "True" : "False"}))`).then(JSON.parse));
  let device = adapter ? "webgpu" : null;
  if (!adapter) {
    // torchweb's cpu device needs numpy: Pyodide fetches it from its CDN where it can
    try {
      await pyodide.loadPackage("numpy", { messageCallback: () => {}, errorCallback: () => {} });
      pyodide.runPython("import numpy; torch.set_default_device('cpu')");
      device = "cpu";
    } catch (e) { device = null; }
  }
  post("ready", { adapter, gpu_error: gpuError, device, seconds: (performance.now() - t0) / 1000 });
}

async function run(code, weights) {
  await ready;
  // packages the code imports that Pyodide knows (matplotlib where it can be fetched)
  const failed = [];
  try {
    await pyodide.loadPackagesFromImports(code, { messageCallback: () => {}, errorCallback: (m) => failed.push(m) });
  } catch (e) { failed.push(String(e.message || e)); }
  if (failed.length) {
    post("stderr", { text: `(Pyodide could not load a package this code imports: ${failed.join(" ").replace(/\s+/g, " ").slice(0, 300)}; ` +
                           "plots need none: `from playground import plot`)\n" });
  }
  pyodide.globals.set("CODE", code);
  pyodide.globals.set("WEIGHTS", weights || "");
  const result = JSON.parse(await pyodide.runPythonAsync("await _run(CODE, WEIGHTS)"));
  post("done", result);
}

self.onmessage = async ({ data: m }) => {
  try {
    if (m.type === "start") { ready = start(m.pyodideURL); await ready; }
    else if (m.type === "run") await run(m.code, m.weights);
  } catch (err) {
    post("fatal", { text: String((err && err.message) || err) });
  }
};
