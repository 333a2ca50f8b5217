// webgpu-torch 0.3.5, loaded as its UMD build (global torch).
const torch = globalThis.torch;

export const name = "webgpu-torch";

export async function init() {
  if (!(await torch.initWebGPUAsync())) throw new Error("webgpu-torch found no WebGPU device");
  return {};
}

// webgpu-torch 0.3.5 builds tensors from (nested) JS arrays, not from typed arrays.
const nest = (a, shape) => shape.length === 1 ? Array.from(a)
  : Array.from({ length: shape[0] }, (_, i) => Array.from(a.subarray(i * shape[1], (i + 1) * shape[1])));
const gpu = (arr, shape) => torch.tensor(nest(arr, shape), "float32", "webgpu");
// Its binary ops take tensors only (no scalars, no broadcasting): constants are full-size tensors.
const full = (n, v) => gpu(new Float32Array(n).fill(v), [n]);

// The buffer path: map the tensor's storage and copy it into a Float32Array the caller keeps.
async function readBuffer(t) {
  await t.storage.mapReadAsync();
  const out = new Float32Array(t.storage.mappedArrayBuffer.slice(0, t.shape.reduce((a, b) => a * b, 1) * 4));
  t.storage.unmap();
  return out;
}

export function make(kind, p, d) {
  if (kind === "chain") {
    const x = gpu(d.chain_x, [p.n]), a = full(p.n, 1.0001), b = full(p.n, 0.0001);
    return { run: async () => { let y = x; for (let i = 0; i < p.ops / 2; i++) y = y.mul(a).add(b); return readBuffer(y); } };
  }
  if (kind === "matmul") {
    const a = gpu(d[`mm${p.m}_a`], [p.m, p.m]), b = gpu(d[`mm${p.m}_b`], [p.m, p.m]);
    return { run: async () => readBuffer(a.mm(b)) };
  }
  if (kind === "readback" || kind === "readback_list") {
    const x = gpu(d.rb_x, [p.n]);
    let y = null;
    // Its elementwise kernels dispatch size/8 workgroups of 64 threads (opgen.js): past 65535
    // workgroups in one dimension (n > 524280) WebGPU rejects the dispatch and the output stays zeros.
    const note = p.n / 8 > 65535 ? `webgpu-torch's add dispatches ${p.n / 8} workgroups (size/8), over WebGPU's 65535 per dimension: the dispatch is rejected and the output stays zeros` : undefined;
    return {
      note,
      prepare: async (rep) => { y = x.add(full(p.n, rep)); await y.storage.gpuDevice.queue.onSubmittedWorkDone(); },
      run: async () => (kind === "readback" ? readBuffer(y) : y.toArrayAsync()),
    };
  }
  // Checked in its 0.3.5 sources: no optimizer (nothing under optim), no log-softmax or cross-entropy,
  // Tensor.sum/mean ignore their axis argument, and nn has only Linear, Conv, GroupNorm, ReLU, SiLU, pooling.
  if (kind === "lm") throw new Error("unsupported: webgpu-torch 0.3.5 has no embedding, layer norm or softmax to run GPT-2");
  if (kind === "mlp") throw new Error("unsupported: webgpu-torch 0.3.5 has no optimizer (Adam), no cross-entropy or log-softmax, and its sum/mean ignore the axis; the step would have to be hand-built from matmuls and elementwise ops, which this suite does not do");
  throw new Error("unsupported: webgpu-torch 0.3.5 has no optimizer, embedding, layer norm or softmax (and no reduction along an axis) to train a GPT");
}
