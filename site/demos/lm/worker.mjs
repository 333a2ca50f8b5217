// The "Complete" page's module Web Worker: loads Pyodide and the torchweb wheel (site/boot.mjs),
// then a Hugging Face checkpoint (GPT-2 or Llama-style) with torchweb.models.from_pretrained_async
// from a base URL (files kept in the browser's Cache Storage "torchweb-models") and its
// tokenizer.json, and generates with torchweb.models.generate, posting each token as it comes.
// Messages in: {type: "load", base, pyodideURL} | {type: "generate", prompt, maxNew, temperature,
//   topK, topP, greedy}.
// Messages out, all {type, ...}: log {text} | stage {text} | download {loaded, total} | adapter {...}
//   | ready {modelType, parameters, seconds, source, eos} | token {id, text}
//   | done {ids, promptIds, text, firstSeconds, tokensPerSecond, n} | error {text}
//   | mark {name, at[, timings]}: a phase of the time to first token ended (site/lm_phases.mjs)
import { boot } from "../../boot.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });
const mark = (name) => post("mark", { name, at: performance.timeOrigin + performance.now() });

const SETUP = `
import json, time
from js import performance
import pyodide.ffi

def mark(name, **extra):
    report("mark", json.dumps({"name": name, "at": performance.timeOrigin + performance.now(), **extra}))

import inspect
import torchweb
import torchweb.models.gpt2, torchweb.models.llama
from torchweb.models import Tokenizer, from_pretrained_async, generate
mark("import")

if not pyodide.ffi.can_run_sync():
    raise RuntimeError("this browser cannot block on the GPU (no JSPI): generation reads each token back")
await torchweb.webgpu.init_async()
report("adapter", json.dumps(torchweb.webgpu.adapter_info()))
mark("device")

def _progress(done, total):
    report("download", json.dumps({"loaded": done, "total": total or done}))

t0 = time.perf_counter()
timings = {}
model = await from_pretrained_async(BASE, device="webgpu", progress=_progress, timings=timings)
torchweb.webgpu.synchronize()       # the weights' copies done on the GPU: part of the model's load
mark("checkpoint", timings=timings)
tok = await Tokenizer.from_pretrained_async(BASE)
mark("tokenizer")
eos = model.config.eos_token_id
report("ready", json.dumps({
    "modelType": model.config.model_type, "seconds": time.perf_counter() - t0,
    "parameters": sum(p.numel() for p in model.parameters()), "eos": eos,
    "source": inspect.getsource(torchweb.models.gpt2 if model.config.model_type == "gpt2" else torchweb.models.llama)}))

def complete(prompt, max_new, temperature, top_k, top_p, greedy):
    ids = tok.encode(prompt, add_special_tokens=True)
    stream, stamps = tok.stream(), []
    t = time.perf_counter()
    def prefilled(module, args, output):       # the prompt's forward, waited for on the GPU
        hook.remove()
        torchweb.webgpu.synchronize()
        mark("prefill")
    def on_token(values):
        stamps.append(time.perf_counter())
        report("token", json.dumps({"id": values[0], "text": stream.feed(values[0])}))
    with model.register_forward_hook(prefilled) as hook:
        out = generate(model, [ids], max_new, temperature=temperature, top_k=top_k or None, top_p=top_p or None,
                       greedy=greedy, eos_token_id=eos, callback=on_token)[0].tolist()
    tail = stream.flush()      # bytes of a character the last token left incomplete
    if tail:
        report("token", json.dumps({"id": None, "text": tail}))
    n = len(stamps)
    return json.dumps({"ids": out, "promptIds": ids, "text": tok.decode(out), "n": n,
                       "firstSeconds": stamps[0] - t if n else None,
                       "tokensPerSecond": (n - 1) / (stamps[-1] - stamps[0]) if n > 1 else None})
`;

let pyodide = null;
let ready = false;

async function load({ base, pyodideURL }) {
  const log = (text) => post("log", { text });
  if (!("gpu" in navigator)) {
    throw new Error("WebGPU is missing in this browser (no navigator.gpu): nothing ran. " +
                    "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu).");
  }
  mark("worker");
  post("stage", { text: "loading Pyodide and the torchweb wheel" });
  pyodide = await boot({ log, pyodideURL });
  mark("pyodide");
  pyodide.globals.set("BASE", base);
  pyodide.globals.set("report", (type, json) => post(type, JSON.parse(json)));
  post("stage", { text: "downloading the checkpoint (or reading it from the cache), building the model" });
  await pyodide.runPythonAsync(SETUP);
  ready = true;
}

self.onmessage = async ({ data: m }) => {
  try {
    if (m.type === "load") await load(m);
    else if (m.type === "generate") {
      if (!ready) throw new Error("the model is not ready yet");
      for (const [k, v] of Object.entries({ PROMPT: m.prompt, MAX_NEW: m.maxNew, TEMPERATURE: m.temperature,
                                            TOP_K: m.topK, TOP_P: m.topP, GREEDY: m.greedy })) pyodide.globals.set(k, v);
      // through runPythonAsync, so each token's readback may block on the GPU (JSPI)
      post("done", JSON.parse(await pyodide.runPythonAsync(
        "complete(PROMPT, MAX_NEW, TEMPERATURE, TOP_K, TOP_P, GREEDY)")));
    }
  } catch (err) {
    post("error", { text: String((err && err.message) || err) });
  }
};
