// torchweb's browser driver, JS half: GPU objects in tables addressed by integer ids, and
// one call per flush that decodes the command stream of backends/webgpu/commands.py.
// Python (backends/webgpu/driver_browser.py) imports this file through a data: URL.
// No `window` here: it must also run inside a module Web Worker.

// Opcodes and usage codes: keep in step with commands.py.
const CREATE = 1, DESTROY = 2, WRITE = 3, DISPATCH = 4, COPY = 5;
const USAGE_UNIFORM = 2;

// The limits torchweb asks for: the adapter's real values, not WebGPU's small defaults.
const LIMITS = {
  "max-storage-buffer-binding-size": "maxStorageBufferBindingSize",
  "max-buffer-size": "maxBufferSize",
  "max-storage-buffers-per-shader-stage": "maxStorageBuffersPerShaderStage",
  "max-compute-workgroups-per-dimension": "maxComputeWorkgroupsPerDimension",
  "max-compute-workgroup-storage-size": "maxComputeWorkgroupStorageSize",
  "max-compute-invocations-per-workgroup": "maxComputeInvocationsPerWorkgroup",
  "max-compute-workgroup-size-x": "maxComputeWorkgroupSizeX",
  "max-compute-workgroup-size-y": "maxComputeWorkgroupSizeY",
  "max-compute-workgroup-size-z": "maxComputeWorkgroupSizeZ",
  "max-uniform-buffer-binding-size": "maxUniformBufferBindingSize",
  "max-bind-groups": "maxBindGroups",
};
const WANTED_FEATURES = ["shader-f16", "subgroups", "timestamp-query"];
const BIND_CACHE_MAX = 4096;

let device = null;
let queue = null;
const buffers = new Map();     // id -> {buf, gen}; gen tells a re-created id apart in cache keys
const pipelines = new Map();   // id -> {pipeline, bgl, uniform: [bool per binding]}
const layouts = new Map();     // "uniform,read,write" -> {bgl, layout}
const bindCache = new Map();   // key of (pipeline, buffers, offsets, sizes) -> GPUBindGroup
let generation = 0;
const errors = [];             // uncaptured device errors, until Python takes them
let lost = null;               // the device-lost message, once lost

let initInfo = null;

// Out of memory: each flush that creates buffers does so inside one 'out-of-memory' error scope
// (not one per buffer); the scope's promise settles later, so it is reported at the next read()
// or sync(). Which buffer of the flush failed is not known: all the flush's new buffers are
// destroyed then and made again when next used (revive), and values computed since are undefined.
const memChecks = new Set();   // the flushes' popErrorScope promises, until they settle
let oom = null;                // "BYTES: message" of the first out-of-memory since Python heard
const failed = new Map();      // id -> {size, usage} of buffers given up after an out-of-memory
let givenUp = [];              // their ids, since Python last asked (takeGivenUp): never computed
export function takeGivenUp() { const ids = givenUp; givenUp = []; return ids; }
let failNextCreations = 0;     // a test hook: the next n flushes with creations (failMinBytes 0),
let failMinBytes = 0;          // or createNow calls of failMinBytes or more, report out of memory
export function setFailNextCreations(n, minBytes = 0) { failNextCreations = n; failMinBytes = minBytes; }

function createBuffer(id, size, usage) {
  buffers.set(id, { buf: device.createBuffer({ size, usage }), gen: ++generation, size, usage });
  failed.delete(id);
}

function revive(id) {   // a buffer given up after an out-of-memory, used again: made again
  const f = failed.get(id);
  if (f) createBuffer(id, f.size, f.usage);
  return buffers.get(id);
}

function bufferOf(id) { return buffers.get(id) || revive(id); }

function scopeCreations(created) {
  const dev = device;
  track(dev.popErrorScope().then((err) => {
    if (failNextCreations > 0 && !failMinBytes && !err) { failNextCreations--; err = { message: "Not enough memory left (test hook)" }; }
    if (!err || device !== dev) return;
    let bytes = 0;
    for (const [id, size] of created) {
      const b = buffers.get(id);
      // (not the params uniform (id 1) nor the error words (0xFFFFFFF0): tiny, and their
      // contents are kept by the runtime across flushes)
      if (b && id > 1 && id < 0xFFFFFFF0) { buffers.delete(id); b.buf.destroy(); failed.set(id, { size: b.size, usage: b.usage }); givenUp.push(id); }
      bytes += size;
    }
    if (!oom) oom = `${bytes}: ${err.message}`;
  }));
}

// Make storage buffer `id` now, in its own error scope (a big one, at the op that needs it):
// the promise rejects with "out of memory: BYTES: message" if the device had no room for it.
export async function createNow(id, size) {
  checkLost();
  submitHeld();
  const dev = device;
  dev.pushErrorScope("out-of-memory");
  createBuffer(id, size, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
  let err = await dev.popErrorScope();
  if (failNextCreations > 0 && size >= failMinBytes && !err) { failNextCreations--; err = { message: "Not enough memory left (test hook)" }; }
  if (err) {
    const b = buffers.get(id);
    if (b) { buffers.delete(id); b.buf.destroy(); }
    throw new Error(`out of memory: ${size}: ${err.message}`);
  }
}

// A flush's error scope, awaited by the next read or sync (checkMemory); dropped once settled,
// so a run that never reads back keeps none.
function track(promise) {
  memChecks.add(promise);
  const drop = () => { memChecks.delete(promise); };
  promise.then(drop, drop);   // (not finally: its own promise would reject unhandled)
}

// A flush's validation errors (a copy past a buffer's end, ...) in a scope of its own, around
// its encoding and submit: reported into `errors` when the scope settles, which the next read
// awaits. As uncaptured errors they arrived as events some time after the work: one read could
// miss them and a later one get them (and an invalid command buffer's submit, a second report).
function scopeValidation() {
  const dev = device;
  track(dev.popErrorScope().then((err) => {
    if (err && device === dev && errors.length < 100) errors.push(`${err.constructor.name}: ${err.message}`);
  }));
}

// Throw the out-of-memory error reported since the last check (read and sync call this).
async function checkMemory() {
  if (memChecks.size) await Promise.all([...memChecks]);
  if (oom) {
    const m = oom;
    oom = null;
    errors.length = 0;   // (validation errors of work that bound the failed buffers follow from it)
    throw new Error(`out of memory: ${m}`);
  }
}

// Idempotent while the device lives: a second runtime in the same page shares the device
// (the tables are keyed by ids that each runtime allocates from the same counters' start,
// so only one runtime at a time should be used). After a device loss it starts afresh.
export async function init() {
  if (device && !lost) return initInfo;
  buffers.clear(); pipelines.clear(); layouts.clear(); bindCache.clear(); dropStaging();
  errors.length = 0; lost = null; failed.clear(); memChecks.clear(); oom = null; givenUp = [];
  const gpu = globalThis.navigator && globalThis.navigator.gpu;
  if (!gpu) throw new Error("this browser has no WebGPU (navigator.gpu is missing)");
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() found no adapter");
  const requiredLimits = {};
  for (const js of Object.values(LIMITS)) {
    if (adapter.limits[js] !== undefined) requiredLimits[js] = adapter.limits[js];
  }
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  queue = device.queue;
  const dev = device;   // an old device's late events must not mark the new one
  dev.addEventListener("uncapturederror", (e) => {
    if (device === dev && errors.length < 100) errors.push(`${e.error.constructor.name}: ${e.error.message}`);
  });
  dev.lost.then((info) => { if (device === dev) lost = `${info.reason}: ${info.message}`; });
  const ai = adapter.info || {};
  const limits = {};
  for (const [name, js] of Object.entries(LIMITS)) {
    if (device.limits[js] !== undefined) limits[name] = device.limits[js];
  }
  initInfo = {
    info: {
      vendor: ai.vendor || "", architecture: ai.architecture || "", device: ai.device || "",
      description: ai.description || "", backend: "browser-webgpu",
      adapter_type: ai.isFallbackAdapter ? "fallback" : "",
      is_fallback_adapter: !!ai.isFallbackAdapter,
    },
    limits,
    features: [...device.features],
  };
  return initInfo;
}

// Uncaptured errors and device loss, for Python to query (takeErrors empties the list).
export function deviceState() { return { errors: [...errors], lost }; }
export function takeErrors() { return errors.splice(0, errors.length); }

// Device loss. A lost device's calls do nothing (WebGPU raises no errors for them), and its
// `lost` promise settles on a later turn of the event loop: every entry point below throws once
// `lost` is set, and a failed map waits for the promise, so the next op that reaches the GPU
// fails with the reason WebGPU gave (Python raises DeviceLostError with it).
function lostError() { return new Error(`the WebGPU device was lost (${lost})`); }
function checkLost() { if (lost) throw lostError(); }

// Test hook (torchweb.webgpu._destroy_device): device.destroy(), as a GPU loss does it.
export function destroyDevice() { if (device) device.destroy(); }

// Drop the device and every GPU object of it (after a loss, or torchweb.webgpu.reset()); the
// next init() requests a new one. Its late `lost` event is ignored (init's check of `device`).
export function release() {
  const dev = device;
  held = null; holdForRead = false;
  device = null; queue = null; initInfo = null; lost = null;
  buffers.clear(); pipelines.clear(); layouts.clear(); bindCache.clear(); dropStaging();
  errors.length = 0; failed.clear(); memChecks.clear(); oom = null; givenUp = [];
  if (dev) dev.destroy();
}

// A PyProxy of a memoryview, or a typed array: (view as Ctor, release function).
function borrow(x, Ctor) {
  if (x == null) return [new Ctor(0), () => {}];
  if (typeof x.getBuffer === "function") {
    const b = x.getBuffer();
    const d = b.data;
    return [new Ctor(d.buffer, d.byteOffset, d.byteLength / Ctor.BYTES_PER_ELEMENT), () => b.release()];
  }
  if (ArrayBuffer.isView(x)) return [new Ctor(x.buffer, x.byteOffset, x.byteLength / Ctor.BYTES_PER_ELEMENT), () => {}];
  return [new Ctor(x), () => {}];
}

function kindList(kinds) {
  if (typeof kinds === "string") return kinds ? kinds.split(",") : [];
  return Array.from(kinds);
}

function layoutFor(kinds) {
  const key = kinds.join(",");
  let l = layouts.get(key);
  if (!l) {
    // Uniform bindings take dynamic offsets: every dispatch's params live in one buffer at
    // different offsets, and a dynamic offset keeps the bind group reusable across them.
    const entries = kinds.map((k, i) => ({
      binding: i, visibility: GPUShaderStage.COMPUTE,
      buffer: k === "uniform" ? { type: "uniform", hasDynamicOffset: true }
        : { type: k === "read" ? "read-only-storage" : "storage" },
    }));
    const bgl = device.createBindGroupLayout({ entries });
    l = { bgl, layout: device.createPipelineLayout({ bindGroupLayouts: [bgl] }) };
    layouts.set(key, l);
  }
  return l;
}

// Make pipeline `id`. It is usable at once; the returned promise settles when the GPU process
// has checked it, rejecting with the compiler's messages. With wait=false nothing is returned
// and a failure lands in the error list instead (for pages that cannot block).
export function createPipeline(id, code, kinds, wait = true) {
  checkLost();
  kinds = kindList(kinds);
  const { bgl, layout } = layoutFor(kinds);
  device.pushErrorScope("internal");
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code });
  const pipeline = device.createComputePipeline({ layout, compute: { module, entryPoint: "main" } });
  pipelines.set(id, { pipeline, bgl, uniform: kinds.map((k) => k === "uniform") });
  const check = (async () => {
    const v = await device.popErrorScope();
    const i = await device.popErrorScope();
    const err = v || i;
    if (!err) return true;
    let msgs = [];
    try {  // Chromium's message already quotes the compiler; others may not
      const ci = await module.getCompilationInfo();
      msgs = ci.messages.filter((m) => !err.message.includes(m.message))
        .map((m) => `${m.type} at line ${m.lineNum}:${m.linePos}: ${m.message}`);
    } catch (e) { /* no compilation info: the error message is all we have */ }
    throw new Error([err.message.trim(), ...msgs].join("\n"));
  })();
  if (wait) return check;
  check.catch((e) => { errors.push(`pipeline ${id}: ${e.message}`); });
  return undefined;
}

function bindGroup(pid, p, words, j, nb, offsets) {
  let key = String(pid);
  for (let k = 0; k < nb; k++, j += 3) {
    const b = bufferOf(words[j]);
    if (!b) throw new Error(`torchweb: dispatch binds unknown buffer ${words[j]}`);
    key += p.uniform[k] ? `|${b.gen}:${words[j + 2]}` : `|${b.gen}:${words[j + 1]}:${words[j + 2]}`;
    if (p.uniform[k]) offsets.push(words[j + 1]);
  }
  let bg = bindCache.get(key);
  if (!bg) {
    j -= 3 * nb;
    const entries = [];
    for (let k = 0; k < nb; k++, j += 3) {
      const buf = buffers.get(words[j]).buf;
      entries.push({ binding: k, resource: { buffer: buf, offset: p.uniform[k] ? 0 : words[j + 1], size: words[j + 2] } });
    }
    bg = device.createBindGroup({ layout: p.bgl, entries });
    if (bindCache.size >= BIND_CACHE_MAX) bindCache.clear();
    bindCache.set(key, bg);
  }
  return bg;
}

const SUBMIT_EVERY = 64;

// GPU time of the compute passes, for benchmarks (off unless gpuTiming(true) asked for it, on an
// adapter with 'timestamp-query'): each pass writes timestamps at its start and end, resolved
// and read back after its submit without blocking; stats() gives their sum once they land
// (gpuPending counts those still in flight), with the time execute() took in JS (encodeMs:
// decoding, encoding, submitting), the dispatches it made, and the submits and readbacks (round
// trips). Chrome quantizes timestamps (100 us), so there only long passes (a replayed program's)
// read true.
let timing = null;
export function gpuTiming(on) {
  timing = on && device.features.has("timestamp-query")
    ? { ns: 0, passes: 0, pending: 0, encodeMs: 0, dispatches: 0, submits: 0, reads: 0 } : null;
  return timing !== null;
}

// One query set per submit (a pair of slots a pass, at most MAX_TIMED_PASSES passes: a submit
// holds at most SUBMIT_EVERY dispatches), resolved and read back once, its objects reused: the
// timing itself costs a copy and a map a submit, not objects a pass.
const MAX_TIMED_PASSES = SUBMIT_EVERY;
const timers = [];   // idle {qs, resolved, read}

function takeTimer() {
  const t = timers.pop();
  if (t && t.dev === device) { t.used = 0; return t; }
  const bytes = 16 * MAX_TIMED_PASSES;
  return { dev: device, used: 0,
           qs: device.createQuerySet({ type: "timestamp", count: 2 * MAX_TIMED_PASSES }),
           resolved: device.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }),
           read: device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) };
}

function timedPassDesc(timer) {   // the next pass's timestamp writes, or none when the set is full
  if (timer.used >= MAX_TIMED_PASSES) return undefined;
  const i = 2 * timer.used++;
  return { timestampWrites: { querySet: timer.qs, beginningOfPassWriteIndex: i, endOfPassWriteIndex: i + 1 } };
}

function resolveTimer(encoder, timer) {   // before the encoder's finish
  encoder.resolveQuerySet(timer.qs, 0, 2 * timer.used, timer.resolved, 0);
  encoder.copyBufferToBuffer(timer.resolved, 0, timer.read, 0, 16 * timer.used);
}

function readTimer(timer) {   // after the submit
  const t = timing;
  t.pending++;
  timer.read.mapAsync(GPUMapMode.READ, 0, 16 * timer.used).then(() => {
    const stamps = new BigUint64Array(timer.read.getMappedRange(0, 16 * timer.used));
    for (let i = 0; i < timer.used; i++) t.ns += Number(stamps[2 * i + 1] - stamps[2 * i]);
    t.passes += timer.used;
    timer.read.unmap();
    timers.push(timer);
  }).finally(() => { t.pending--; });
}

// A readback's copy goes into the last encoder of the flush just before it: one encoder and
// one submit for both, not two. Python's runtime calls readFollows() before that flush;
// execute() then leaves its last encoder open (held) for read() to finish. Every other entry
// point, and the next microtask (Python gave control back to JS), submits a held encoder first,
// so nothing is held back past the read that asked (nor, if that read never came, for long).
let holdForRead = false;
let held = null;   // {encoder, doomed: buffers destroyed once it is submitted, dev}: its flush's
                   // validation scope stays open until it is submitted
export function readFollows() { holdForRead = true; }

function submitHeld(finishCopy) {   // finishCopy(encoder): read()'s copies, encoded last
  const h = held;
  held = null;
  if (!h || h.dev !== device) return false;
  try {   // (inside the flush's validation scope, still open: finish reports the encoding's errors)
    if (finishCopy) finishCopy(h.encoder);
    queue.submit([h.encoder.finish()]);
    if (timing) timing.submits++;
  } finally {
    scopeValidation();
    for (const buf of h.doomed) buf.destroy();
  }
  return true;
}

// Run one flush of the command stream. words: u32 rows (commands.py); blob: the bytes that
// WRITE rows point into. Both may be PyProxies of memoryviews (read in place, no copy).
export function execute(wordsArg, blobArg) {
  checkLost();
  submitHeld();
  const hold = holdForRead;
  holdForRead = false;
  const started = timing ? performance.now() : 0;
  const [words, releaseWords] = borrow(wordsArg, Uint32Array);
  const [blob, releaseBlob] = borrow(blobArg, Uint8Array);
  let encoder = null, pass = null, queued = 0, finished = false;
  let timer = null;               // with gpuTiming: the open encoder's query set
  const touched = new Set();   // buffers the unsubmitted encoder uses
  const doomed = [];           // destroyed at the end: destroy() waits for submitted work
  const created = [];          // [id, size] of this flush's new buffers, in an error scope
  device.pushErrorScope("validation");   // (popped after the submit: scopeValidation)
  const submit = () => {
    if (pass) { pass.end(); pass = null; }
    if (timer && encoder) resolveTimer(encoder, timer);
    if (encoder) { queue.submit([encoder.finish()]); encoder = null; if (timing) timing.submits++; }
    if (timer) { readTimer(timer); timer = null; }
    touched.clear();
    queued = 0;
  };
  try {
    const n = words.length;
    let i = 0;
    while (i < n) {
      const op = words[i];
      if (op === DISPATCH) {
        const pid = words[i + 1], nb = words[i + 5];
        const p = pipelines.get(pid);
        if (!p) throw new Error(`torchweb: dispatch of unknown pipeline ${pid}`);
        const offsets = [];
        const bg = bindGroup(pid, p, words, i + 6, nb, offsets);
        if (!pass) {
          if (!encoder) encoder = device.createCommandEncoder();
          if (timing && !timer) timer = takeTimer();
          pass = encoder.beginComputePass(timer ? timedPassDesc(timer) : undefined);
        }
        for (let k = 0, j = i + 6; k < nb; k++, j += 3) touched.add(words[j]);
        pass.setPipeline(p.pipeline);
        pass.setBindGroup(0, bg, offsets);
        pass.dispatchWorkgroups(words[i + 2], words[i + 3], words[i + 4]);
        if (timing) timing.dispatches++;
        i += 6 + 3 * nb;
        // a long program (a torch.compile replay: hundreds of dispatches) is submitted in parts,
        // so that the GPU starts on the first while the rest are encoded (native_encoding.py's
        // SUBMIT_EVERY, the same rule)
        if (++queued >= SUBMIT_EVERY) submit();
      } else if (op === WRITE) {
        const id = words[i + 1], dst = words[i + 2], start = words[i + 3], nbytes = words[i + 4];
        // writeBuffer lands on the queue before the unsubmitted encoder: submit first if that
        // encoder uses this buffer, so the write stays in order with the dispatches around it.
        if (touched.has(id)) submit();
        const b = bufferOf(id);
        if (!b) throw new Error(`torchweb: write to unknown buffer ${id}`);
        if (nbytes % 4 === 0) {
          queue.writeBuffer(b.buf, dst, blob, start, nbytes);
        } else {  // writeBuffer wants a multiple of 4 bytes (f16 tensors of odd length)
          const padded = new Uint8Array((nbytes + 3) & ~3);
          padded.set(blob.subarray(start, start + nbytes));
          queue.writeBuffer(b.buf, dst, padded);
        }
        i += 5;
      } else if (op === COPY) {
        const src = bufferOf(words[i + 1]), dst = bufferOf(words[i + 3]);
        if (!src || !dst) throw new Error(`torchweb: copy between unknown buffers ${words[i + 1]}, ${words[i + 3]}`);
        if (pass) { pass.end(); pass = null; }
        if (!encoder) encoder = device.createCommandEncoder();
        encoder.copyBufferToBuffer(src.buf, words[i + 2], dst.buf, words[i + 4], words[i + 5]);
        touched.add(words[i + 1]);
        touched.add(words[i + 3]);
        i += 6;
      } else if (op === CREATE) {
        const usage = words[i + 3] === USAGE_UNIFORM
          ? GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST
          : GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
        if (!created.length) device.pushErrorScope("out-of-memory");
        createBuffer(words[i + 1], words[i + 2], usage);
        created.push([words[i + 1], words[i + 2]]);
        i += 4;
      } else if (op === DESTROY) {
        const b = buffers.get(words[i + 1]);
        if (b) { buffers.delete(words[i + 1]); doomed.push(b.buf); }
        failed.delete(words[i + 1]);
        i += 2;
      } else {
        throw new Error(`torchweb: corrupt command stream (opcode ${op} at word ${i})`);
      }
    }
    finished = true;
  } finally {
    if (created.length) scopeCreations(created);
    // Submit what was encoded even after an error, so the queue stays consistent; a flush that
    // a read follows leaves its last encoder to the read (not with GPU timing: simpler).
    const keep = finished && hold && encoder !== null && timer === null;
    try {
      if (keep) {
        if (pass) { pass.end(); pass = null; }
        held = { encoder, doomed, dev: device };
        queueMicrotask(() => submitHeld());
      } else {
        submit();
      }
    } finally {
      if (!keep) {
        scopeValidation();
        for (const buf of doomed) buf.destroy();
      }
      releaseWords();
      releaseBlob();
      if (timing) timing.encodeMs += performance.now() - started;
    }
  }
}

// Staging buffers for read(), kept for reuse: creating (and clearing) a MAP_READ buffer per read
// costs more than the copy itself on a software adapter. Sizes are rounded up to a power of two
// (at least 256 bytes) so reads of similar sizes share one; at most STAGING_KEEP idle buffers and
// STAGING_BUDGET bytes are kept, oldest dropped first; a read larger than the budget gets a
// buffer of its own, destroyed after. Buffers of an older (lost) device are never reused.
const STAGING_KEEP = 8, STAGING_BUDGET = 64 << 20, STAGING_MIN = 256;
const stagingFree = [];   // idle, unmapped: {buf, size, dev}, oldest first
let stagingBytes = 0;     // sum of stagingFree's sizes

function takeStaging(size) {
  const cls = size <= STAGING_MIN ? STAGING_MIN : 2 ** Math.ceil(Math.log2(size));
  for (let i = stagingFree.length - 1; i >= 0; i--) {
    const s = stagingFree[i];
    if (s.size === cls && s.dev === device) {
      stagingFree.splice(i, 1);
      stagingBytes -= s.size;
      return s;
    }
  }
  const buf = device.createBuffer({ size: cls, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { buf, size: cls, dev: device };
}

function giveStaging(s) {
  if (s.dev !== device || lost || s.size > STAGING_BUDGET) { s.buf.destroy(); return; }
  stagingFree.push(s);
  stagingBytes += s.size;
  while (stagingFree.length > STAGING_KEEP || stagingBytes > STAGING_BUDGET) {
    const old = stagingFree.shift();
    stagingBytes -= old.size;
    old.buf.destroy();
  }
}

function dropStaging() {   // at init after a device loss
  for (const s of stagingFree) s.buf.destroy();
  for (const s of mappedReads.values()) s.buf.destroy();
  mappedReads.clear();
  stagingFree.length = 0;
  stagingBytes = 0;
}

// Read ranges of storage buffers in one GPU round trip: `ranges` are (id, offset, nbytes)
// triples, flat (offsets and sizes multiples of 4), copied by one encoder, packed in the order
// given, into one MAP_READ staging buffer, with one submit and one mapAsync (Python reads a
// tensor and the error words of index-checked kernels together: one round trip, not two).
// Resolves to a Uint8Array view of the packed bytes, still mapped: the caller copies it into
// memory of its own (Python: assign_to, into a bytearray: the only copy, no proxy of Python's
// buffer) and then must call readDone(view), which unmaps it and keeps the staging buffer.
const mappedReads = new Map();   // view -> its staging buffer, until readDone

export async function read(...ranges) {
  holdForRead = false;   // (asked for, but the flush had nothing to run)
  if (lost) { held = null; throw lostError(); }
  let total = 0;
  for (let k = 0; k < ranges.length; k += 3) {
    if (!bufferOf(ranges[k])) { submitHeld(); throw new Error(`torchweb: read of unknown buffer ${ranges[k]}`); }
    total += ranges[k + 2];
  }
  const size = Math.max(4, (total + 3) & ~3);
  const staging = takeStaging(size);
  let mapped = false, handed = false;
  try {
    const copy = (encoder) => {
      for (let k = 0, at = 0; k < ranges.length; at += ranges[k + 2], k += 3) {
        if (ranges[k + 2]) encoder.copyBufferToBuffer(bufferOf(ranges[k]).buf, ranges[k + 1], staging.buf, at, ranges[k + 2]);
      }
    };
    if (!submitHeld(copy)) {   // (no flush just before: an encoder of its own)
      const encoder = device.createCommandEncoder();
      copy(encoder);
      queue.submit([encoder.finish()]);
      if (timing) timing.submits++;
    }
    if (timing) timing.reads++;
    try {
      await staging.buf.mapAsync(GPUMapMode.READ, 0, size);
      mapped = true;
    } catch (e) {
      if (!lost && device) await Promise.race([device.lost, new Promise((r) => setTimeout(r, 200))]);
      throw lost ? lostError() : new Error(`mapAsync failed: ${e.message}`);
    }
    // (the flushes' error scopes have settled by now: no await unless one has not)
    if (memChecks.size || oom) await checkMemory();
    // Errors raised by earlier work (invalid bind groups, ...) surface here, not as zeros.
    if (errors.length) throw new Error(`WebGPU reported errors: ${takeErrors().join("\n")}`);
    const view = new Uint8Array(staging.buf.getMappedRange(0, size), 0, total);
    mappedReads.set(view, staging);
    handed = true;
    return view;
  } finally {
    if (!handed) {
      if (mapped) { staging.buf.unmap(); giveStaging(staging); } else staging.buf.destroy();   // (a failed map: not worth keeping)
    }
  }
}

// The caller has copied read()'s view: unmap its staging buffer and keep it for the next read.
export function readDone(view) {
  const staging = mappedReads.get(view);
  if (!staging) return;
  mappedReads.delete(view);
  staging.buf.unmap();
  giveStaging(staging);
}

// Wait until all submitted work is done (for timing).
export async function sync() {
  checkLost();
  submitHeld();
  await queue.onSubmittedWorkDone();
  checkLost();
  await checkMemory();
}

// How many GPU objects are alive: for leak checks in tests.
export function stats() {
  return { buffers: buffers.size, pipelines: pipelines.size, layouts: layouts.size, bindGroups: bindCache.size,
           staging: stagingFree.length, stagingBytes, mappedReads: mappedReads.size, heldEncoder: held !== null,
           ...(timing ? { gpuPassMs: timing.ns / 1e6, gpuPasses: timing.passes, gpuPending: timing.pending,
                             encodeMs: timing.encodeMs, dispatches: timing.dispatches,
                             submits: timing.submits, reads: timing.reads } : {}) };
}
