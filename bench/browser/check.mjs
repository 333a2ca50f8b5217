// Checks a library's outputs against the expected results (PyTorch on the CPU, from run.py):
// returns null when they match, else a short reason (the library is then reported "wrong").
export function check(w, outputs, data) {
  const e = w.expect;
  if (!outputs.length) return "no checked output";
  for (let rep = 0; rep < outputs.length; rep++) {
    const o = outputs[rep];
    if (e.tokens) {   // generation: e.tokens ids, each in the vocabulary, the same every run
      if (!o || o.length !== e.tokens) return `rep ${rep}: ${o ? o.length : o} ids, expected ${e.tokens}`;
      const bad = Array.from(o).findIndex((v, i) => !(Number.isInteger(v) && v >= 0 && v < e.vocab) || v !== outputs[0][i]);
      if (bad >= 0) return `rep ${rep}: id [${bad}] = ${o[bad]}, not in [0, ${e.vocab}) or not run 0's ${outputs[0][bad]}`;
      continue;
    }
    if (e.losses) {
      const want = e.losses[rep];
      if (!(Math.abs(o - want) <= e.atol + e.rtol * Math.abs(want))) return `step ${rep + 1}: loss ${o}, expected ${want}`;
      continue;
    }
    const want = data[e.array];
    if (!o || o.length !== want.length) return `rep ${rep}: ${o ? o.length : o} values, expected ${want.length}`;
    const plus = e.plus_rep ? rep : 0;
    for (let i = 0; i < want.length; i++) {
      const wv = Math.fround(want[i] + plus);
      if (!(Math.abs(o[i] - wv) <= e.atol + e.rtol * Math.abs(wv))) return `rep ${rep}: [${i}] = ${o[i]}, expected ${wv}`;
    }
  }
  return null;
}
