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
    const chain = jit((y) => { for (let i = 0; i < p.ops / 2; i++) y = y.mul(1.0001).add(0.0001); return y; });
    return { run: async () => chain(x.ref).data() };
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
  throw new Error("unsupported: no GPT written for jax-js in this suite");
}
