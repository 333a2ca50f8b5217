// The bench page: loads the seeded inputs run.py wrote (build/manifest.json), starts every library
// on the same WebGPU adapter, runs each workload for each library (warm-up repetitions checked
// against PyTorch-CPU's results, then timed ones) and leaves the results in globalThis.benchResult.
import * as tfjs from "./peers/tfjs.mjs";
import * as jaxjs from "./peers/jaxjs.mjs";
import * as wgtorch from "./peers/webgpu_torch.mjs";
import * as torchweb from "./peers/torchweb.mjs";
import * as torchwebCompile from "./peers/torchweb_compile.mjs";
import * as floor from "./peers/floor.mjs";
import { check } from "./check.mjs";

const out = document.getElementById("output");
const log = (s) => { out.textContent += s + "\n"; };
const q = new URLSearchParams(location.search);
const REPS = +(q.get("reps") || 5), WARM = +(q.get("warm") || 2);
const ONLY = q.get("only") || "", LIBS = (q.get("libs") || "torchweb,torchweb-compile,tfjs,jax-js,webgpu-torch,floor").split(",");
const PEERS = [torchweb, torchwebCompile, tfjs, jaxjs, wgtorch, floor].filter((m) => LIBS.includes(m.name));
const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

async function loadArrays(manifest) {
  const d = {};
  await Promise.all(Object.entries(manifest.arrays).map(async ([k, a]) => {
    const buf = await (await fetch("build/" + a.file)).arrayBuffer();
    d[k] = a.dtype === "i32" ? new Int32Array(buf) : new Float32Array(buf);
  }));
  return d;
}

// The generic loop for the JS libraries (torchweb measures itself in Python the same way).
async function measure(impl, warm, reps) {
  const outputs = [], times_ms = [];
  for (let rep = 0; rep < warm + reps; rep++) {
    if (impl.prepare) await impl.prepare(rep);
    const t0 = performance.now();
    const o = await impl.run(rep);
    const dt = performance.now() - t0;
    if (rep < warm) outputs.push(o); else times_ms.push(dt);
  }
  return { outputs, times_ms };
}

async function adapterInfo() {
  const a = await navigator.gpu.requestAdapter();
  const i = a.info || {};
  return { vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description,
           fallback: Boolean(i.isFallbackAdapter ?? a.isFallbackAdapter),
           features: [...a.features].sort(), maxStorageBufferBindingSize: a.limits.maxStorageBufferBindingSize };
}

async function main() {
  const manifest = await (await fetch("build/manifest.json")).json();
  const data = await loadArrays(manifest);
  const result = { userAgent: navigator.userAgent, adapter: await adapterInfo(), libraries: {}, workloads: [] };
  log(`adapter: ${JSON.stringify(result.adapter)}`);
  const ready = [];
  for (const m of PEERS) {
    const t0 = performance.now();
    try {
      result.libraries[m.name] = { ...(await m.init(manifest.python_files)), init_ms: performance.now() - t0 };
      ready.push(m);
    } catch (e) {
      result.libraries[m.name] = { error: String(e && e.stack || e) };
    }
    log(`${m.name}: ${JSON.stringify(result.libraries[m.name])}`);
  }
  for (const w of manifest.workloads) {
    if (ONLY && !w.name.includes(ONLY)) continue;
    const row = { name: w.name, kind: w.kind, results: {} };
    const params = { ...w.params, shapes: Object.fromEntries(Object.entries(manifest.arrays).map(([k, a]) => [k, a.shape])) };
    const warm = w.warm ?? WARM;
    for (const m of PEERS) {
      let r;
      if (!ready.includes(m)) {
        r = { status: "unsupported", reason: "library did not start: " + result.libraries[m.name].error.split("\n")[0] };
      } else {
        try {
          const impl = m.measure ? null : m.make(w.kind, params, data);
          const reps = q.get("reps") ? REPS : w.reps ?? REPS;   // ?reps=N (smoke) wins
          const res = impl ? await measure(impl, warm, reps) : await m.measure(w.kind, params, data, warm, reps);
          // wrong: the library's own check failed; unchecked: the floor's round trips compute nothing
          const bad = res.wrong || (res.unchecked ? null : check(w, res.outputs, data));
          r = bad ? { status: "wrong", reason: bad }
                  : { status: "ok", median_ms: median(res.times_ms), min_ms: Math.min(...res.times_ms), times_ms: res.times_ms };
          const note = impl ? impl.note : [res.note, res.unchecked].filter(Boolean).join("; ");   // e.g. a fallback the library needed
          if (note) r.note = note;
          if (res.parts_ms) r.parts_ms = res.parts_ms;   // the floor's parts (run.py's summarize)
        } catch (e) {
          let msg = String(e && e.message || e);
          if (msg.includes("Traceback")) msg = msg.trim().split("\n").slice(-4).join("\n");   // Python: the end says why
          // A library that cannot run a workload (by design, or it fails) is "unsupported", with why.
          const declared = msg.startsWith("unsupported:");
          r = { status: "unsupported", reason: declared ? msg.replace(/^unsupported: /, "") : "failed: " + msg.slice(0, 600) };
          if (!declared) r.stack = String(e && e.stack || "").slice(0, 2000);
        }
      }
      row.results[m.name] = r;
      log(`${w.name} ${m.name}: ${r.status}${r.status === "ok" ? ` median ${r.median_ms.toFixed(3)} ms, min ${r.min_ms.toFixed(3)} ms` : " (" + r.reason + ")"}`);
    }
    result.workloads.push(row);
  }
  return result;
}

main().then((r) => { globalThis.benchResult = r; out.dataset.status = "DONE"; },
            (e) => { log("ERROR " + (e && e.stack || e)); globalThis.benchResult = null; out.dataset.status = "ERROR"; });
