// torchweb in Pyodide: the wheel and Pyodide's core come from build/ (run.py publishes them);
// each workload is measured in Python (../torchweb_bench.py) inside one runPythonAsync, so
// readback blocks on the GPU through JSPI as it does in a notebook cell.
export const name = "torchweb";
let py = null, started = false;

export const ready = () => started;   // (peers/floor.mjs times the Python floor in this Pyodide)

export async function init(files) {
  // (bench/gpu/dawn.mjs, the page in node on Dawn, starts Pyodide before navigator exists:
  // with a navigator there, node's Pyodide takes the browser's paths and fails)
  py = globalThis.__benchPyodide ?? await (await import("../build/pyodide/pyodide.mjs")).loadPyodide(
    { indexURL: new URL("../build/pyodide/", import.meta.url).href });
  const latest = await (await fetch("build/wheels/latest.json")).json();
  await py.loadPackage(new URL(`build/wheels/${latest.wheel}`, location.href).href);
  for (const f of files) {   // python files next to the bench: torchweb_bench, model_files, nanogpt_model
    py.FS.writeFile(`/home/pyodide/${f.split("/").pop()}`, await (await fetch(f)).text());
  }
  await py.runPythonAsync("import torchweb, torchweb_bench");
  const info = (await py.runPythonAsync(
    "import sys; from pyodide.ffi import to_js; to_js({'torchweb': torchweb.__version__, " +
    "'python': sys.version.split()[0]}, dict_converter=__import__('js').Object.fromEntries)",
  ));
  started = true;
  return { ...info, pyodide: py.version };
}

export async function measure(kind, p, d, warm, reps) {
  py.globals.set("_bench_args", py.toPy({ kind, p, warm, reps }, { depth: 1 }));
  py.globals.set("_bench_data", d);
  const res = await py.runPythonAsync(
    "from pyodide.ffi import to_js\n" +
    "_r = torchweb_bench.run_workload(_bench_args['kind'], _bench_args['p'], _bench_data, _bench_args['warm'], _bench_args['reps'])\n" +
    "to_js(_r, dict_converter=__import__('js').Object.fromEntries)");
  const outputs = res.outputs.map((o) =>
    typeof o === "number" ? o : new Float32Array(o.buffer, o.byteOffset, o.byteLength / 4));
  return { outputs, times_ms: Array.from(res.times_ms), compile_stats: res.compile_stats, note: res.note, wrong: res.wrong };
}
