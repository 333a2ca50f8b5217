// jax-js (npm @jax-js/jax), its ES module build, on its WebGPU device. The chain and the MLP step
// run under jit (fused kernels), as jax-js code would be written. jax-js counts references: an
// argument is consumed by the call it is passed to, so inputs kept across calls are passed as `.ref`.
import { init as jaxInit, defaultDevice, jit, valueAndGrad, numpy as np, nn, tree }
  from "../node_modules/@jax-js/jax/dist/index.js";

export const name = "jax-js";

export async function init() {
  const devs = await jaxInit();
  if (!devs.includes("webgpu")) throw new Error(`jax-js has no webgpu device (has ${devs})`);
  defaultDevice("webgpu");
  return { device: "webgpu" };
}

const arr = (data, shape) => np.array(data, { shape });

export function make(kind, p, d) {
  if (kind === "chain") {
    const x = arr(d.chain_x, [p.n]);
    const body = (y) => { for (let i = 0; i < p.ops / 2; i++) y = y.mul(1.0001).add(0.0001); return y; };
    const chain = jit(body);
    // jax-js 0.1.25 fuses the whole chain into one WGSL expression; at 200 ops Tint rejects it
    // ("maximum parser recursive depth reached"). Then it runs without jit, and says so.
    const impl = { run: async () => {
      if (impl.note) return body(x.ref).data();
      try { return await chain(x.ref).data(); } catch (e) {
        if (!String(e.message).includes("recursive depth")) throw e;
        impl.note = "jit failed (WGSL: maximum parser recursive depth reached); timed without jit";
        return body(x.ref).data();
      }
    } };
    return impl;
  }
  if (kind === "matmul") {
    const a = arr(d[`mm${p.m}_a`], [p.m, p.m]), b = arr(d[`mm${p.m}_b`], [p.m, p.m]);
    return { run: async () => np.matmul(a.ref, b.ref).data() };
  }
  if (kind === "readback" || kind === "readback_list") {
    const x = arr(d.rb_x, [p.n]);
    let y = null;
    return {
      prepare: async (rep) => { y = await x.ref.add(rep).blockUntilReady(); },
      run: async () => (kind === "readback" ? y.data() : y.jsAsync()),
    };
  }
  if (kind === "mlp") {
    const [I, H, O, B] = p.sizes;
    let params = { w1: arr(d.mlp_0_weight, [H, I]), b1: arr(d.mlp_0_bias, [H]),
                   w2: arr(d.mlp_2_weight, [O, H]), b2: arr(d.mlp_2_bias, [O]) };
    let m = tree.map((a) => np.zerosLike(a.ref), params), v = tree.map((a) => np.zerosLike(a.ref), params);
    const x = arr(d.mlp_x, [B, I]), y1h = arr(d.mlp_onehot, [B, O]);
    const lossFn = (q, x, y1h) => {
      const h = nn.relu(np.matmul(x, np.transpose(q.w1)).add(q.b1));
      const logits = np.matmul(h, np.transpose(q.w2)).add(q.b2);
      return nn.logSoftmax(logits, -1).mul(y1h).sum().mul(-1 / B);
    };
    const [b1, b2, eps, lr] = [0.9, 0.999, 1e-8, p.lr];
    // One jitted step: loss and grads, then Adam (bias corrections passed in, so no recompiles).
    const step = jit((q, m, v, c1, c2, x, y1h) => {
      const [loss, g] = valueAndGrad(lossFn)(tree.map((a) => a.ref, q), x, y1h);
      const out = { loss, q: {}, m: {}, v: {} };
      for (const k of Object.keys(q)) {
        const gk = g[k];
        const mk = m[k].mul(b1).add(gk.ref.mul(1 - b1));
        const vk = v[k].mul(b2).add(gk.ref.mul(gk).mul(1 - b2));
        const upd = mk.ref.div(c1.ref).mul(lr).div(np.sqrt(vk.ref.div(c2.ref)).add(eps));
        out.q[k] = q[k].sub(upd); out.m[k] = mk; out.v[k] = vk;
      }
      c1.dispose(); c2.dispose();
      return out;
    });
    let t = 0;
    return { run: async () => {
      t += 1;
      const o = step(params, m, v, np.array(1 - b1 ** t), np.array(1 - b2 ** t), x.ref, y1h.ref);
      params = o.q; m = o.m; v = o.v;
      return (await o.loss.data())[0];
    } };
  }
  if (kind === "gpt") return gpt(p, d);
  if (kind === "lm") throw new Error("unsupported: torchweb only: GPT-2 generation with a KV cache is PyTorch model code (torchweb.models); not ported to jax-js");
  throw new Error(`unsupported: ${kind}`);
}

// nanoGPT (tests/models/nanogpt_model.py, bias=False, dropout 0) written for jax-js, with the same
// weights; AdamW as nanoGPT configures it (decay on the 2-D weights). One jitted step.
function gpt(p, d) {
  const g = p.gpt, B = g.batch, T = g.block_size, C = g.n_embd, H = g.n_head, V = g.vocab_size;
  let P = Object.fromEntries(g.params.map((k) => [k, arr(d["gpt_" + k], p.shapes["gpt_" + k])]));
  const decay = Object.fromEntries(g.params.map((k) => [k, p.shapes["gpt_" + k].length >= 2]));
  let m = tree.map((a) => np.zerosLike(a.ref), P), v = tree.map((a) => np.zerosLike(a.ref), P);
  const oneHot = (ids) => { const o = new Float32Array(ids.length * V); ids.forEach((t, i) => { o[i * V + t] = 1; }); return arr(o, [ids.length, V]); };
  const idx1h = oneHot(d.gpt_idx), tgt1h = oneHot(d.gpt_tgt);
  const lin = (x, w) => np.matmul(x, np.transpose(w));
  const ln = (x, w) => {
    const mu = np.mean(x.ref, -1, { keepdims: true });
    const xc = x.sub(mu);
    const var_ = np.mean(np.square(xc.ref), -1, { keepdims: true });
    return xc.div(np.sqrt(var_.add(1e-5))).mul(w);
  };
  const attn = (x, wqkv, wproj) => {
    const [q, k, vv] = np.split(lin(x, wqkv), 3, -1).map((a) => a.reshape([B, T, H, C / H]));
    return lin(nn.dotProductAttention(q, k, vv, { isCausal: true }).reshape([B, T, C]), wproj);
  };
  const lossFn = (q, idx1h, tgt1h) => {
    const h = (i, name) => q[`transformer.h.${i}.${name}`];
    let x = np.matmul(idx1h, q["transformer.wte.weight"].ref).reshape([B, T, C]).add(q["transformer.wpe.weight"]);
    for (let i = 0; i < g.n_layer; i++) {
      x = x.ref.add(attn(ln(x, h(i, "ln_1.weight")), h(i, "attn.c_attn.weight"), h(i, "attn.c_proj.weight")));
      const f = nn.gelu(lin(ln(x.ref, h(i, "ln_2.weight")), h(i, "mlp.c_fc.weight")), { approximate: false });
      x = x.add(lin(f, h(i, "mlp.c_proj.weight")));
    }
    const logits = lin(ln(x, q["transformer.ln_f.weight"]).reshape([B * T, C]), q["transformer.wte.weight"]);
    return nn.logSoftmax(logits, -1).mul(tgt1h).sum().mul(-1 / (B * T));
  };
  const [b1, b2] = g.betas, eps = 1e-8, lr = g.lr, wd = g.weight_decay;
  const step = jit((q, m, v, c1, c2, idx1h, tgt1h) => {
    const [loss, gr] = valueAndGrad(lossFn)(tree.map((a) => a.ref, q), idx1h, tgt1h);
    const out = { loss, q: {}, m: {}, v: {} };
    for (const k of Object.keys(q)) {
      const gk = gr[k];
      const mk = m[k].mul(b1).add(gk.ref.mul(1 - b1));
      const vk = v[k].mul(b2).add(gk.ref.mul(gk).mul(1 - b2));
      const upd = mk.ref.div(c1.ref).mul(lr).div(np.sqrt(vk.ref.div(c2.ref)).add(eps));
      out.q[k] = (decay[k] ? q[k].mul(1 - lr * wd) : q[k]).sub(upd); out.m[k] = mk; out.v[k] = vk;
    }
    c1.dispose(); c2.dispose();
    return out;
  });
  let t = 0;
  return { run: async () => {
    t += 1;
    const o = step(P, m, v, np.array(1 - b1 ** t), np.array(1 - b2 ** t), idx1h.ref, tgt1h.ref);
    P = o.q; m = o.m; v = o.v;
    return (await o.loss.data())[0];
  } };
}
