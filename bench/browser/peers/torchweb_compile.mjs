// torchweb with torch.compile (torchweb.compile: capture once, replay without Python per op), in
// the same Pyodide as ./torchweb.mjs (started first). Measured where there is a multi-op program
// to capture: the chain and the two training steps; the single-op workloads are torchweb's column.
import * as torchweb from "./torchweb.mjs";

export const name = "torchweb-compile";
const COMPILED = new Set(["chain", "mlp", "gpt", "lm"]);   // lm: generate()'s decode step

export async function init() { return { same_as: "torchweb", api: "torch.compile" }; }

export async function measure(kind, p, d, warm, reps) {
  if (!COMPILED.has(kind)) throw new Error("unsupported: not measured: one op and its readback, nothing for torch.compile to capture (see the torchweb column)");
  // calls 1-2 run eagerly (warm-up, capture): at least one replay must be among the checked ones
  const res = await torchweb.measure(kind + "_compiled", p, d, Math.max(warm, 3), reps);
  const s = res.compile_stats;
  res.note = [res.note, s && `compile: ${s.replays} replays, ${s.captures} captures, ${s.eager} eager calls` +
    (s.reasons && s.reasons.length ? `; not replayed because: ${s.reasons.join("; ")}` : "")].filter(Boolean).join("; ");
  return res;
}
