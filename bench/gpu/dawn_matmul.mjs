// bench/matmul_variants.py's matmul kernels timed on Dawn (Chrome's WebGPU: Tint compiles the
// WGSL, with its robustness clamps) in node, with no Pyodide in between: it replays a file of
// bench/matmul_variants_export.py (each case's WGSL, bindings, parameters and grids as torchweb's
// runtime issues them), checks each result against the file's numpy reference, then times it.
// bench/matmul_variants_replay.py does the same through wgpu-native, for the comparison.
//
//   node bench/gpu/dawn_matmul.mjs FILE --dawn DIR [--out OUT.json] [--reps 5] [--budget 0.02]
//        [--most 200] [--only a,b] [--flags "enable-dawn-features=disable_robustness;..."]
//   on the GPU machine, all of it (export, native, Dawn, Dawn without robustness): bench/gpu/matmul.sh
//
// DIR holds the npm `webgpu` bindings (index.js, dist/linux-x64/dawn.node), as for dawn.mjs.
// Per case: one compute pass of N copies of the case's dispatches (as runtime.mjs encodes a flush:
// one pass, every dispatch's parameters at 256-byte dynamic offsets of one uniform buffer), N
// filling about `budget` seconds of GPU; best of `reps` submits, timed by GPU timestamps at the
// pass's ends ('timestamp-query') and by the wall clock around submit and onSubmittedWorkDone; the
// CPU time of encoding (setPipeline, setBindGroup, dispatchWorkgroups) per dispatch beside them.
// Dawn quantizes timestamps unless told not to: --flags adds to disable-dawn-features=timestamp_quantization.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
const args = {};
const files = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith("--")) args[argv[i].slice(2)] = argv[++i];
  else files.push(argv[i]);
}
if (files.length !== 1) { console.error("usage: node dawn_matmul.mjs FILE --dawn DIR [--out OUT]"); process.exit(2); }
const reps = +(args.reps || 5), budgetMs = 1e3 * +(args.budget || 0.02), most = +(args.most || 200);
const only = args.only ? args.only.split(",") : null;
const flags = ["disable-dawn-features=timestamp_quantization"].concat(args.flags ? args.flags.split(";") : []);

const dawnDir = path.resolve(args.dawn || "/tmp/dawn");
const dawn = await import(pathToFileURL(path.join(dawnDir, "index.js")).href);
Object.assign(globalThis, dawn.globals);
const dawnVersion = JSON.parse(fs.readFileSync(path.join(dawnDir, "package.json"), "utf8")).version;

// the device as runtime.mjs makes it: the adapter's limits, its features among these
const LIMITS = ["maxStorageBufferBindingSize", "maxBufferSize", "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupsPerDimension", "maxComputeWorkgroupStorageSize", "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ",
  "maxUniformBufferBindingSize", "maxBindGroups"];
const gpu = dawn.create(flags);
const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
if (!adapter) { console.error("Dawn found no adapter"); process.exit(1); }
const requiredLimits = {};
for (const k of LIMITS) if (adapter.limits[k] !== undefined) requiredLimits[k] = adapter.limits[k];
const requiredFeatures = ["shader-f16", "subgroups", "timestamp-query"].filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
const ai = adapter.info || {};
const adapterInfo = { vendor: ai.vendor, architecture: ai.architecture, device: ai.device,
  description: ai.description, features: requiredFeatures, flags };
const timestamps = device.features.has("timestamp-query");
const U = GPUBufferUsage;
const ALIGN = 256;

// Whether Tint's robustness clamps are on (--flags enable-dawn-features=disable_robustness turns
// them off; nothing says whether a toggle took): a read past a 16-byte binding of a larger buffer
// gives the binding's last element when they are, the buffer's element past it when not.
async function robustness() {
  const code = `@group(0) @binding(0) var<storage, read_write> B: array<f32>;
@group(0) @binding(1) var<storage, read_write> O: array<f32>;
@compute @workgroup_size(1) fn main() { O[1] = B[u32(O[0])]; }`;
  const p = device.createComputePipeline({ layout: "auto", compute: { module: device.createShaderModule({ code }), entryPoint: "main" } });
  const big = device.createBuffer({ size: 4096, usage: U.STORAGE | U.COPY_DST });
  device.queue.writeBuffer(big, 0, new Float32Array(1024).map((_, i) => i + 1));
  const o = device.createBuffer({ size: 16, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  device.queue.writeBuffer(o, 0, new Float32Array([100, 0, 0, 0]));
  const rd = device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST });
  const bg = device.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [
    { binding: 0, resource: { buffer: big, offset: 0, size: 16 } }, { binding: 1, resource: { buffer: o } }] });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(p); pass.setBindGroup(0, bg); pass.dispatchWorkgroups(1); pass.end();
  enc.copyBufferToBuffer(o, 0, rd, 0, 16);
  device.queue.submit([enc.finish()]);
  await rd.mapAsync(GPUMapMode.READ);
  const got = new Float32Array(rd.getMappedRange())[1];
  rd.unmap();
  for (const b of [big, o, rd]) b.destroy();
  return got === 4 ? "on" : got === 101 ? "off" : `unclear (read ${got})`;
}
adapterInfo.robustness = await robustness();
let lost = null;
device.lost.then((info) => { lost = `${info.reason}: ${info.message}`; });
console.log(`Dawn (npm webgpu ${dawnVersion}, node ${process.version}): ${JSON.stringify(adapterInfo)}; timestamps: ${timestamps}`);

// bench/matmul_variants_export.py's fill(): (k - 2048) / 4096 from a 32-bit hash of (index, seed)
function fill(numel, seed, dtype) {
  const mix = Math.imul(seed, 0x85EBCA77) >>> 0;
  const out = dtype === "f16" ? new Uint16Array(numel + (numel & 1)) : new Float32Array(numel);
  for (let i = 0; i < numel; i++) {
    let x = (Math.imul(i, 0x9E3779B1) + mix) >>> 0;
    x = (x ^ (x >>> 15)) >>> 0;
    x = Math.imul(x, 0x2C1B3C6D) >>> 0;
    x = (x ^ (x >>> 12)) >>> 0;
    x = Math.imul(x, 0x297A2D39) >>> 0;
    x = (x ^ (x >>> 15)) >>> 0;
    const v = ((x >>> 20) - 2048) / 4096;
    out[i] = dtype === "f16" ? toHalf(v) : v;
  }
  return out;
}

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function toHalf(v) {   // exact for fill()'s values (normal in f16, 11 significant bits at most)
  if (v === 0) return 0;
  f32[0] = v;
  const b = u32[0];
  return ((b >>> 16) & 0x8000) | ((((b >>> 23) & 0xff) - 112) << 10) | ((b >>> 13) & 0x3ff);
}
function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

const layouts = new Map(), pipelines = new Map(), compileMs = {};
function layoutFor(kinds) {   // runtime.mjs's layoutFor: the uniform at a dynamic offset
  const key = kinds.join(",");
  if (!layouts.has(key)) {
    const bgl = device.createBindGroupLayout({ entries: kinds.map((k, i) => ({
      binding: i, visibility: GPUShaderStage.COMPUTE,
      buffer: k === "uniform" ? { type: "uniform", hasDynamicOffset: true }
        : { type: k === "read" ? "read-only-storage" : "storage" } })) });
    layouts.set(key, { bgl, layout: device.createPipelineLayout({ bindGroupLayouts: [bgl] }) });
  }
  return layouts.get(key);
}

async function pipelineFor(p) {
  if (!pipelines.has(p.id)) {
    const { bgl, layout } = layoutFor(p.kinds);
    const t0 = performance.now();
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ code: p.code });
    const info = await module.getCompilationInfo();
    const msgs = info.messages.filter((m) => m.type === "error").map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
    let pipeline = null, err = null;
    try {
      pipeline = await device.createComputePipelineAsync({ layout, compute: { module, entryPoint: "main" } });
    } catch (e) { err = e.message; }
    const v = await device.popErrorScope();
    compileMs[p.id] = performance.now() - t0;
    pipelines.set(p.id, pipeline && !v && !msgs.length ? { pipeline, bgl }
      : { error: (msgs.join("; ") || err || (v && v.message) || "failed").slice(0, 300) });
  }
  const got = pipelines.get(p.id);
  if (got.error) throw new Error(`pipeline ${p.id}: ${got.error}`);
  return got;
}

let inputs = new Map();   // (numel, seed, dtype) -> values: the variants of one shape share them
async function prepare(c, pipes) {
  const bufs = c.buffers.map((b) => device.createBuffer({ size: b.size, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC }));
  c.buffers.forEach((b, i) => {
    if (b.seed === null) return;
    const key = `${b.numel}/${b.seed}/${b.dtype}`;
    if (!inputs.has(key)) inputs.set(key, fill(b.numel, b.seed, b.dtype));
    const data = inputs.get(key);
    device.queue.writeBuffer(bufs[i], 0, data.buffer, 0, Math.min(data.byteLength, b.size) & ~3);
  });
  const params = device.createBuffer({ size: ALIGN * c.dispatches.length, usage: U.UNIFORM | U.COPY_DST });
  const steps = [];
  for (const [i, d] of c.dispatches.entries()) {
    const raw = Buffer.from(d.params, "hex");
    const padded = new Uint8Array((raw.length + 15) & ~15);
    padded.set(raw);
    device.queue.writeBuffer(params, i * ALIGN, padded);
    const { pipeline, bgl } = await pipelineFor(pipes[d.pipeline]);
    const bound = Math.max(16, (raw.length + 15) & ~15);   // the runtime's: params rounded to 16 bytes
    const entries = [{ binding: 0, resource: { buffer: params, offset: 0, size: bound } }].concat(
      d.buffers.map((k, j) => ({ binding: j + 1, resource: { buffer: bufs[k], offset: 0, size: c.buffers[k].size } })));
    steps.push({ pipeline, bg: device.createBindGroup({ layout: bgl, entries }), off: i * ALIGN, grid: d.grid });
  }
  return { bufs: bufs.concat([params]), steps };
}

const qs = timestamps ? device.createQuerySet({ type: "timestamp", count: 2 }) : null;
const resolve = timestamps ? device.createBuffer({ size: 16, usage: U.QUERY_RESOLVE | U.COPY_SRC }) : null;
const tsRead = timestamps ? device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST }) : null;

async function run(steps, n, timed) {   // one pass of n copies of steps: [GPU ms or null, wall ms, encoding ms]
  const te = performance.now();
  const enc = device.createCommandEncoder();
  const ts = timed && timestamps;
  const pass = enc.beginComputePass(ts ? { timestampWrites: { querySet: qs,
    beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
  for (let r = 0; r < n; r++) {
    for (const s of steps) {
      pass.setPipeline(s.pipeline);
      pass.setBindGroup(0, s.bg, [s.off]);
      pass.dispatchWorkgroups(s.grid[0], s.grid[1], s.grid[2]);
    }
  }
  pass.end();
  if (ts) { enc.resolveQuerySet(qs, 0, 2, resolve, 0); enc.copyBufferToBuffer(resolve, 0, tsRead, 0, 16); }
  const cmd = enc.finish();
  const t0 = performance.now();
  const encMs = t0 - te;
  device.queue.submit([cmd]);
  await device.queue.onSubmittedWorkDone();
  const wall = performance.now() - t0;
  let gpuMs = null;
  if (ts) {
    await tsRead.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(tsRead.getMappedRange().slice(0));
    tsRead.unmap();
    if (t[1] > t[0]) gpuMs = Number(t[1] - t[0]) / 1e6;
  }
  return [gpuMs, wall, encMs];
}

async function check(c, bufs) {   // [max error at the reference's samples / max |ref|, within tol]
  const bi = c.buffers.findIndex((b) => b.role === "out"), b = c.buffers[bi];
  const rd = device.createBuffer({ size: b.size, usage: U.MAP_READ | U.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(bufs[bi], 0, rd, 0, b.size);
  device.queue.submit([enc.finish()]);
  await rd.mapAsync(GPUMapMode.READ);
  const bytes = rd.getMappedRange();
  const get = b.dtype === "f16" ? ((a) => (i) => fromHalf(a[i]))(new Uint16Array(bytes))
    : ((a) => (i) => a[i])(new Float32Array(bytes));
  const { rows, cols, ref, scale, tol, out_offset } = c.check;
  let err = 0;
  rows.forEach((r, i) => cols.forEach((col, j) => {
    const e = Math.abs(get(out_offset + r * c.N + col) - ref[i][j]);
    err = Number.isNaN(e) ? Infinity : Math.max(err, e);
  }));
  rd.unmap(); rd.destroy();
  return [err / scale, err / scale <= tol];
}

const data = JSON.parse(fs.readFileSync(files[0], "utf8"));
const pipes = Object.fromEntries(data.pipelines.map((p) => [p.id, p]));
const results = [];
const tStart = performance.now();
let lastShape = null;
device.addEventListener("uncapturederror", (e) => console.error(`  (uncaptured ${e.error.message.slice(0, 200)})`));
for (const c of data.cases) {
  const name = `${c.shape}/${c.variant}`;
  if (only && !only.some((x) => name.includes(x))) continue;
  if (lost) { console.error(`device lost: ${lost}`); break; }
  if (c.shape !== lastShape) { inputs = new Map(); lastShape = c.shape; }
  const res = { shape: c.shape, variant: c.variant, resolved: c.resolved, cls: c.cls, dtype: c.dtype };
  if (!device.features.has("shader-f16") && c.dispatches.some((d) => pipes[d.pipeline].code.startsWith("enable f16"))) {
    console.log(`  ${name.padEnd(48)} skipped (no shader-f16)`);
    results.push({ ...res, error: "skipped (no shader-f16)" });
    continue;
  }
  let bufs = [], scoped = true;
  device.pushErrorScope("validation");
  try {
    const prep = await prepare(c, pipes);
    bufs = prep.bufs;
    await run(prep.steps, 1, false);
    const [err, ok] = await check(c, bufs);
    scoped = false;
    const v = await device.popErrorScope();
    if (v) throw new Error(v.message);
    res.err = err;
    if (!ok) {
      res.error = `wrong ${err.toExponential(2)}`;
      console.log(`  ${name.padEnd(48)} WRONG: max error ${err.toExponential(2)} of max |ref|`);
    } else {
      const one = await run(prep.steps, 1, true);
      const per = one[0] ?? one[1];
      const n = Math.max(1, Math.min(most, Math.floor(budgetMs / Math.max(per, 1e-3))));
      const times = [];
      for (let r = 0; r < reps; r++) times.push(await run(prep.steps, n, true));
      const gpuT = times.map((t) => t[0]).filter((t) => t !== null);
      res.n = n;
      res.wall_ms = Math.min(...times.map((t) => t[1])) / n;
      res.gpu_ms = gpuT.length ? Math.min(...gpuT) / n : null;
      res.ms = res.gpu_ms ?? res.wall_ms;
      res.encode_us = 1e3 * Math.min(...times.map((t) => t[2])) / (n * prep.steps.length);   // per dispatch
      res.tflops = c.flops / res.ms / 1e9;
      res.compile_ms = Object.fromEntries(c.dispatches.map((d) => [d.pipeline, compileMs[d.pipeline]]));
      console.log(`  ${name.padEnd(48)} ${res.ms.toFixed(3).padStart(9)} ms ${res.tflops.toFixed(2).padStart(7)} TFLOP/s` +
        ` (wall ${res.wall_ms.toFixed(3)}, x${n}, encoding ${res.encode_us.toFixed(1)} us a dispatch)  err ${err.toExponential(1)}`);
    }
  } catch (e) {   // a kernel that fails to compile or run: reported, not fatal
    res.error = String(e.message || e).split("\n")[0].slice(0, 300);
    console.log(`  ${name.padEnd(48)} FAILED: ${res.error}`);
    if (scoped) await device.popErrorScope();
  }
  for (const b of bufs) b.destroy();
  results.push(res);
  save();   // as it goes: a run cut short keeps its cases
}
console.log(`total ${((performance.now() - tStart) / 1e3).toFixed(1)} s${args.out ? `; wrote ${args.out}` : ""}`);
process.exit(0);

function save() {
  if (!args.out) return;
  fs.writeFileSync(args.out + ".tmp", JSON.stringify({ runner: "dawn", dawn_npm_webgpu: dawnVersion, node: process.version,
    adapter: adapterInfo, export_adapter: data.adapter, timestamps, results }, null, 1));
  fs.renameSync(args.out + ".tmp", args.out);
}
