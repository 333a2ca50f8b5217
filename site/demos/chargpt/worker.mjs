// The "GPT" page's module Web Worker: loads Pyodide and the torchweb wheel (site/boot.mjs), runs
// site/demos/chargpt/model.py (plain PyTorch code, `import torch` resolving to torchweb) on
// WebGPU and keeps the model between commands. Commands in (one at a time, in order):
//   {cmd: "train", steps, batch, lr, every, sampleEvery, prompt, length, temperature, seed, config, pyodideURL}
//   (config: model.py's GPT arguments, block_size/n_layer/n_head/n_embd; missing ones from gpt.CONFIG)
//   {cmd: "sample", prompt, length, temperature} | {cmd: "save"} | {cmd: "load", bytes}
// Messages out, all {type, ...}: log {text} | stage {text, done, total} | adapter {info...}
//   | ready {device, vocab, params} | loss {step, loss, seconds} | sample {step, text, temperature}
//   | done {steps, seconds, greedy, sample} | saved {bytes} | loaded {greedy, sample, params}
//   | error {text, cmd}
import { boot, fetchText } from "../../boot.mjs";

const post = (type, data = {}, transfer = []) => self.postMessage({ type, ...data }, transfer);

// Runs once: WebGPU, model.py as a module `gpt`, the text.
const SETUP = `
import json, time, types
import pyodide.ffi
import torchweb
torchweb.install_torch_alias()
import torch

if not pyodide.ffi.can_run_sync():
    raise RuntimeError("this browser cannot block on the GPU (no JSPI): model.py reads values with .item()")
report("stage", json.dumps({"text": "starting WebGPU", "done": 3, "total": 4}))
await torchweb.webgpu.init_async()
report("adapter", json.dumps(torchweb.webgpu.adapter_info()))
gpt = types.ModuleType("chargpt_model")
exec(compile(MODEL_SRC, "demos/chargpt/model.py", "exec"), gpt.__dict__)
DEVICE = "webgpu"
model = None

def describe(m):
    return {"device": str(next(m.parameters()).device), "vocab": m.vocab, "config": m.config,
            "params": sum(p.numel() for p in m.parameters())}

def samples(m, prompt, length, temperature):
    """(greedy, sampled): the same prompt, argmax and multinomial at the temperature."""
    g = torch.Generator(device=DEVICE).manual_seed(0)
    return (gpt.sample(m, prompt, length, temperature=0),
            gpt.sample(m, prompt, length, temperature=temperature, generator=g))
`;

const TRAIN = `
if A["steps"] > 0:
    torch.manual_seed(A["seed"])
    model = gpt.GPT(gpt.make_vocab(TEXT), **{**gpt.CONFIG, **A["config"]}).to(DEVICE)
    report("ready", json.dumps(describe(model)))
    t0 = time.perf_counter()
    def progress(step, loss):
        report("loss", json.dumps({"step": step, "loss": loss, "seconds": time.perf_counter() - t0}))
        if A["sampleEvery"] and step % A["sampleEvery"] == 0 and step < A["steps"]:
            text = gpt.sample(model, A["prompt"], A["length"], temperature=A["temperature"])
            report("sample", json.dumps({"step": step, "text": text, "temperature": A["temperature"]}))
    gpt.train(model, TEXT, steps=A["steps"], batch_size=A["batch"], lr=A["lr"], every=A["every"],
              seed=A["seed"], progress=progress)
    seconds = time.perf_counter() - t0
    greedy, sampled = samples(model, A["prompt"], A["length"], A["temperature"])
    report("done", json.dumps({"steps": A["steps"], "seconds": seconds, "greedy": greedy, "sample": sampled,
                               "prompt": A["prompt"], "temperature": A["temperature"]}))
else:   # ?steps=0: no model until a file is loaded
    report("done", json.dumps({"steps": 0, "seconds": 0, "greedy": None, "sample": None,
                               "prompt": A["prompt"], "temperature": A["temperature"]}))
`;

const SAMPLE = `
if model is None:
    raise RuntimeError("no model yet: train one or load a file")
report("sample", json.dumps({"step": None, "temperature": A["temperature"],
                             "text": gpt.sample(model, A["prompt"], A["length"], temperature=A["temperature"])}))
`;

const LOAD = `
model = gpt.load_bytes(LOAD_BYTES.to_py(), DEVICE)
del LOAD_BYTES
greedy, sampled = samples(model, A["prompt"], A["length"], A["temperature"])
report("loaded", json.dumps({**describe(model), "greedy": greedy, "sample": sampled}))
`;

let pyodide = null;

async function setup(pyodideURL) {
  if (pyodide) return pyodide;
  if (!("gpu" in navigator)) {
    throw new Error("WebGPU is missing in this browser (no navigator.gpu): nothing ran. " +
                    "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu).");
  }
  const log = (text) => post("log", { text });
  post("stage", { text: "loading Pyodide and the torchweb wheel", done: 0, total: 4 });
  const py = await boot({ log, pyodideURL });
  post("stage", { text: "fetching model.py and the text", done: 1, total: 4 });
  const [src, text] = await Promise.all([fetchText("demos/chargpt/model.py"), fetchText("demos/chargpt/text.txt")]);
  post("stage", { text: "model.py and text fetched", done: 2, total: 4 });
  py.globals.set("MODEL_SRC", src);
  py.globals.set("TEXT", text);
  py.globals.set("report", (type, json) => post(type, JSON.parse(json)));
  await py.runPythonAsync(SETUP);
  pyodide = py;
  return py;
}

async function run(msg) {
  const py = await setup(msg.pyodideURL);
  const { bytes, ...args } = msg;
  py.globals.set("A", py.toPy(args));     // the command's arguments, as a Python dict
  if (msg.cmd === "train") await py.runPythonAsync(TRAIN);
  else if (msg.cmd === "sample") await py.runPythonAsync(SAMPLE);
  else if (msg.cmd === "load") {
    py.globals.set("LOAD_BYTES", new Uint8Array(bytes));
    await py.runPythonAsync(LOAD);
  } else if (msg.cmd === "save") {
    const px = await py.runPythonAsync("gpt.save_bytes(model) if model is not None else None");
    if (!px) throw new Error("no model to save yet");
    const buf = px.getBuffer("u8");        // the Python bytes' memory, copied out once
    const bytes = buf.data.slice().buffer;
    buf.release(); px.destroy();
    post("saved", { bytes }, [bytes]);
  } else throw new Error(`unknown command ${msg.cmd}`);
}

// Commands run one after another (the model is shared); an error is reported and the queue goes on.
let queue = Promise.resolve();
self.onmessage = ({ data: msg }) => {
  queue = queue.then(() => run(msg)).catch((err) => {
    post("error", { text: String((err && err.message) || err), cmd: msg.cmd });
  });
};
