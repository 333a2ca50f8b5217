// The platform's floor: what each workload must at least cost on this WebGPU implementation,
// measured in plain JS with no library, on a GPUDevice of its own from the same requestAdapter()
// the page and the libraries use. Per kind:
//   readback / readback_list  the tensor's bytes (x + rep, made by a dispatch before the clock)
//                             copied to a reused MAP_READ buffer, mapAsync, getMappedRange into a
//                             Float32Array / into a JS Array; the list's floor for a Python list
//                             adds the Python floor (4 MB of float32 bytes already in Pyodide ->
//                             memoryview.cast('f').tolist(), timed in torchweb's Pyodide):
//                             parts_ms.float32array + parts_ms.python_tolist (run.py's summarize)
//   matmul                    the product's readback alone (the round trip, after an untimed
//                             dispatch): a lower bound; a simple 16x16-tiled one-dispatch WGSL
//                             matmul plus that readback is timed once too (parts_ms.tiled_matmul)
//                             and its product is what the page checks
//   chain                     one dispatch doing the whole chain in registers, and its readback
//   mlp / gpt / lm            one dispatch, submit and a 4-byte readback (what .item() or a
//                             token ends with): the round trip; nothing to check
export const name = "floor";
let device = null;
const WG = 256;

export async function init() {
  const adapter = await navigator.gpu.requestAdapter();
  const l = adapter.limits;
  device = await adapter.requestDevice({ requiredLimits: {
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize } });
  return { api: "WebGPU in plain JS, no library (its own device)" };
}

const median = (a) => { const s = [...a].sort((x, y) => x - y), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const U = () => GPUBufferUsage;

function upload(f32) {
  const buf = device.createBuffer({ size: Math.max(16, f32.byteLength), usage: U().STORAGE | U().COPY_SRC, mappedAtCreation: true });
  new Float32Array(buf.getMappedRange(), 0, f32.length).set(f32);
  buf.unmap();
  return buf;
}

const storage = (n) => device.createBuffer({ size: Math.max(16, 4 * n), usage: U().STORAGE | U().COPY_SRC });

// y[i] = chain(x[i] + add), the chain being `iters` times v * 1.0001 + 0.0001 (0 for a plain add)
const ADD_WGSL = `
struct P { add: f32, iters: u32, n: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nw: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = (wg.y * nw.x + wg.x) * ${WG}u + li;
  if (i >= p.n) { return; }
  var v = x[i] + p.add;
  for (var k = 0u; k < p.iters; k++) { v = v * 1.0001 + 0.0001; }
  y[i] = v;
}`;

// c = a @ b, n x n, one output a thread, 16x16 tiles of a and b in workgroup memory
const MATMUL_WGSL = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4u;
var<workgroup> ta: array<f32, 256>;
var<workgroup> tb: array<f32, 256>;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(local_invocation_id) l: vec3u) {
  let n = dims.x;
  let row = g.y;
  let col = g.x;
  var acc = 0.0;
  for (var k0 = 0u; k0 < n; k0 += 16u) {
    var av = 0.0;
    var bv = 0.0;
    if (row < n && k0 + l.x < n) { av = a[row * n + k0 + l.x]; }
    if (col < n && k0 + l.y < n) { bv = b[(k0 + l.y) * n + col]; }
    ta[l.y * 16u + l.x] = av;
    tb[l.y * 16u + l.x] = bv;
    workgroupBarrier();
    for (var k = 0u; k < 16u; k++) { acc += ta[l.y * 16u + k] * tb[k * 16u + l.x]; }
    workgroupBarrier();
  }
  if (row < n && col < n) { c[row * n + col] = acc; }
}`;

function kernel(code, uniformBytes) {
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module: device.createShaderModule({ code }), entryPoint: "main" } });
  const uniform = device.createBuffer({ size: uniformBytes, usage: U().UNIFORM | U().COPY_DST });
  return { pipeline, uniform };
}

const bindGroup = (k, buffers) => device.createBindGroup({ layout: k.pipeline.getBindGroupLayout(0),
  entries: [...buffers, k.uniform].map((buffer, binding) => ({ binding, resource: { buffer } })) });

// One dispatch of k with bind group bg, in a fresh encoder (its readback's copy goes after it).
function dispatch(k, bg, grid) {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(k.pipeline);
  pass.setBindGroup(0, bg);
  pass.dispatchWorkgroups(...grid);
  pass.end();
  return enc;
}

function addGrid(n) {   // 1-D grids past 65535 workgroups fold into 2-D
  const g = Math.ceil(n / WG);
  return g <= 65535 ? [g, 1] : [65535, Math.ceil(g / 65535)];
}

// y = chain(x + add) over n floats (s: the workload's buffers and bind group)
function runAdd(s, n, add, iters) {
  device.queue.writeBuffer(s.add.uniform, 0, new Uint32Array([new Uint32Array(new Float32Array([add]).buffer)[0], iters, n, 0]));
  return dispatch(s.add, s.bg, addGrid(n));
}

// Copy n floats of `src` out through `staging` (MAP_READ, reused) after the work in `enc` (or
// none): into a Float32Array, or a JS Array.
async function readback(enc, src, staging, n, asList) {
  const e = enc || device.createCommandEncoder();
  e.copyBufferToBuffer(src, 0, staging, 0, 4 * n);
  device.queue.submit([e.finish()]);
  await staging.mapAsync(GPUMapMode.READ, 0, 4 * n);
  const mapped = new Float32Array(staging.getMappedRange(0, 4 * n));
  let out;
  if (asList) {
    out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = mapped[i];
  } else {
    out = mapped.slice();
  }
  staging.unmap();
  return out;
}

const stagingOf = (n) => device.createBuffer({ size: Math.max(16, 4 * n), usage: U().MAP_READ | U().COPY_DST });

async function time(fn) {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
}

// The buffers of one workload: x (the input), y (n floats out), a staging buffer and the add
// kernel's bind group over x and y.
function setup(x, n) {
  const add = kernel(ADD_WGSL, 16), y = storage(n);
  const s = { add, x: upload(x), y, st: stagingOf(n) };
  s.bg = bindGroup(add, [s.x, y]);
  s.buffers = [add.uniform, s.x, y, s.st];
  return s;
}

function setupMatmul(p, d) {
  const m = p.m, mk = kernel(MATMUL_WGSL, 16);
  device.queue.writeBuffer(mk.uniform, 0, new Uint32Array([m, 0, 0, 0]));
  const a = upload(d[`mm${m}_a`]), b = upload(d[`mm${m}_b`]), c = storage(m * m);
  const s = { mk, c, st: stagingOf(m * m), bg: bindGroup(mk, [a, b, c]), grid: [Math.ceil(m / 16), Math.ceil(m / 16)] };
  s.buffers = [mk.uniform, a, b, c, s.st];
  return s;
}

export async function measure(kind, p, d, warm, reps) {
  const outputs = [], times = [], parts = {};
  const part = (k, ms) => (parts[k] = parts[k] || []).push(ms);
  let note, unchecked;
  if (kind === "readback_list") {
    // the Python floor, in torchweb's Pyodide when it runs in this page (first: the JS Arrays
    // timed below leave V8 garbage whose collection would land in the Python's time)
    const tw = await import("./torchweb.mjs");
    if (tw.ready()) {
      parts.python_tolist = (await tw.measure("python_floor", p, d, warm, reps)).times_ms;
      note = "floor = max(this JS Array, parts_ms.float32array + parts_ms.python_tolist): a Python list " +
             "needs the bytes read (a Float32Array's cost) and then memoryview.cast('f').tolist() in Pyodide";
    } else {
      note = "no Python floor: torchweb's Pyodide did not start in this page";
    }
  }
  const s = kind.startsWith("readback") ? setup(d.rb_x, p.n) : kind === "chain" ? setup(d.chain_x, p.n)
          : kind === "matmul" ? setupMatmul(p, d) : setup(new Float32Array([1]), 1);
  try {
    for (let rep = 0; rep < warm + reps; rep++) {
      let out, ms;
      if (kind === "readback" || kind === "readback_list") {
        device.queue.submit([runAdd(s, p.n, rep, 0).finish()]);
        await device.queue.onSubmittedWorkDone();   // before the clock, as the libraries' prepare
        [out, ms] = await time(() => readback(null, s.y, s.st, p.n, kind === "readback_list"));
        if (kind === "readback_list" && rep >= warm) {   // the Float32Array, for the Python list's floor
          part("float32array", (await time(() => readback(null, s.y, s.st, p.n, false)))[1]);
        }
      } else if (kind === "chain") {
        [out, ms] = await time(() => readback(runAdd(s, p.n, 0, p.ops / 2), s.y, s.st, p.n, false));
      } else if (kind === "matmul") {
        // the tiled matmul once (SwiftShader takes 20 s at 1024): its product is the one checked
        const nn = p.m * p.m;
        if (rep === 0) {
          let full;
          [out, full] = await time(() => readback(dispatch(s.mk, s.bg, s.grid), s.c, s.st, nn, false));
          part("tiled_matmul", full);
        }
        [, ms] = await time(() => readback(null, s.c, s.st, nn, false));   // the product's round trip alone
        note = "floor = the product's readback alone (a lower bound); parts_ms.tiled_matmul: a 16x16-tiled " +
               "one-dispatch WGSL matmul and its readback (once, its first call), whose product is the one checked";
      } else {   // mlp, gpt, lm: the round trip a step or a token ends with
        [out, ms] = await time(() => readback(runAdd(s, 1, rep, 0), s.y, s.st, 1, false));
        unchecked = "the round trip alone (one dispatch, submit, a 4-byte readback): no step computed, nothing checked";
      }
      if (rep < warm) { if (out) outputs.push(out); } else times.push(ms);
    }
  } finally {
    for (const b of s.buffers) b.destroy();
  }
  const partsMs = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, median(v)]));
  return { outputs, times_ms: times, note, unchecked, parts_ms: Object.keys(partsMs).length ? partsMs : undefined };
}
