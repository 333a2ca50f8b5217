// TensorFlow.js 4.22 on its WebGPU backend (tfjs-backend-webgpu), loaded as UMD scripts (global tf).
const tf = globalThis.tf;

export const name = "tfjs";

export async function init() {
  await tf.setBackend("webgpu");
  await tf.ready();
  return { backend: tf.getBackend() };
}

// Submit what tfjs has batched and wait for the GPU, without reading anything back.
async function flush() {
  const be = tf.backend();
  be.ensureCommandEncoderReady();   // what getBufferData does before it submits
  be.endComputePassEncoder();
  be.submitQueue();
  await be.device.queue.onSubmittedWorkDone();
}

export function make(kind, p, d) {
  if (kind === "chain") {
    const x = tf.tensor1d(d.chain_x);
    return { run: async () => {
      const y = tf.tidy(() => { let y = x; for (let i = 0; i < p.ops / 2; i++) y = y.mul(1.0001).add(0.0001); return y; });
      const out = await y.data(); y.dispose(); return out;
    } };
  }
  if (kind === "matmul") {
    const a = tf.tensor2d(d[`mm${p.m}_a`], [p.m, p.m]), b = tf.tensor2d(d[`mm${p.m}_b`], [p.m, p.m]);
    return { run: async () => { const c = tf.matMul(a, b); const out = await c.data(); c.dispose(); return out; } };
  }
  if (kind === "readback" || kind === "readback_list") {
    const x = tf.tensor1d(d.rb_x);
    let y = null;
    return {
      prepare: async (rep) => { if (y) y.dispose(); y = x.add(rep); await flush(); },
      run: async () => (kind === "readback" ? await y.data() : await y.array()),
    };
  }
  if (kind === "mlp") {
    const [I, H, O, B] = p.sizes;
    const w1 = tf.variable(tf.tensor2d(d.mlp_0_weight, [H, I])), b1 = tf.variable(tf.tensor1d(d.mlp_0_bias));
    const w2 = tf.variable(tf.tensor2d(d.mlp_2_weight, [O, H])), b2 = tf.variable(tf.tensor1d(d.mlp_2_bias));
    const x = tf.tensor2d(d.mlp_x, [B, I]), y1h = tf.tensor2d(d.mlp_onehot, [B, O]);
    const opt = tf.train.adam(p.lr, 0.9, 0.999, 1e-8);
    return { run: async () => {
      const loss = opt.minimize(() => {
        const h = tf.relu(tf.matMul(x, w1, false, true).add(b1));
        return tf.losses.softmaxCrossEntropy(y1h, tf.matMul(h, w2, false, true).add(b2));
      }, true);
      const v = (await loss.data())[0]; loss.dispose(); return v;
    } };
  }
  throw new Error("unsupported: no GPT written for TensorFlow.js in this suite");
}
