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
  if (kind === "gpt") return gpt(p, d);
  if (kind === "lm") throw new Error("unsupported: torchweb only: GPT-2 generation with a KV cache is PyTorch model code (torchweb.models); not ported to TensorFlow.js");
  throw new Error(`unsupported: ${kind}`);
}

// nanoGPT (tests/models/nanogpt_model.py, bias=False, dropout 0) written for TensorFlow.js with the
// same weights. tfjs has no AdamW: its Adam applies the gradients, and the decoupled weight decay
// of the 2-D weights is applied first, to the weights the gradients were taken at (as torch does).
function gpt(p, d) {
  const g = p.gpt, B = g.batch, T = g.block_size, C = g.n_embd, H = g.n_head, V = g.vocab_size, D = C / H;
  const P = Object.fromEntries(g.params.map((k) => [k, tf.variable(tf.tensor(d["gpt_" + k], p.shapes["gpt_" + k]), true, "gpt/" + k)]));
  const decayed = g.params.filter((k) => p.shapes["gpt_" + k].length >= 2).map((k) => P[k]);
  const idx = tf.tensor1d(d.gpt_idx, "int32"), tgt1h = tf.oneHot(tf.tensor1d(d.gpt_tgt, "int32"), V).toFloat();
  const mask = tf.linalg.bandPart(tf.ones([T, T]), -1, 0).sub(1).mul(1e9);   // 0 on and below the diagonal, -1e9 above
  const lin = (x, w) => tf.matMul(x.reshape([-1, x.shape[x.shape.length - 1]]), w, false, true).reshape([...x.shape.slice(0, -1), w.shape[0]]);
  const ln = (x, w) => { const { mean, variance } = tf.moments(x, -1, true); return x.sub(mean).div(variance.add(1e-5).sqrt()).mul(w); };
  const gelu = (x) => x.mul(0.5).mul(tf.erf(x.div(Math.SQRT2)).add(1));
  const heads = (x) => x.reshape([B, T, H, D]).transpose([0, 2, 1, 3]);
  const attn = (x, wqkv, wproj) => {
    const [q, k, v] = tf.split(lin(x, wqkv), 3, -1).map(heads);
    const att = tf.softmax(tf.matMul(q, k, false, true).mul(1 / Math.sqrt(D)).add(mask), -1);
    return lin(tf.matMul(att, v).transpose([0, 2, 1, 3]).reshape([B, T, C]), wproj);
  };
  const h = (i, name) => P[`transformer.h.${i}.${name}`];
  const lossFn = () => {
    let x = tf.gather(P["transformer.wte.weight"], idx).reshape([B, T, C]).add(P["transformer.wpe.weight"]);
    for (let i = 0; i < g.n_layer; i++) {
      x = x.add(attn(ln(x, h(i, "ln_1.weight")), h(i, "attn.c_attn.weight"), h(i, "attn.c_proj.weight")));
      x = x.add(lin(gelu(lin(ln(x, h(i, "ln_2.weight")), h(i, "mlp.c_fc.weight"))), h(i, "mlp.c_proj.weight")));
    }
    const logits = lin(ln(x, P["transformer.ln_f.weight"]).reshape([B * T, C]), P["transformer.wte.weight"]);
    return tf.losses.softmaxCrossEntropy(tgt1h, logits);
  };
  const opt = tf.train.adam(g.lr, g.betas[0], g.betas[1], 1e-8);
  return { run: async () => {
    const { value, grads } = tf.variableGrads(lossFn);
    tf.tidy(() => decayed.forEach((w) => w.assign(w.mul(1 - g.lr * g.weight_decay))));
    opt.applyGradients(grads);
    tf.dispose(grads);
    const out = (await value.data())[0]; value.dispose(); return out;
  } };
}
