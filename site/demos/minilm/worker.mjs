// The "MiniLM" page's module Web Worker: loads Pyodide and the torchweb wheel (site/boot.mjs),
// fetches demos/minilm/model.py and tokenizer.py (plain PyTorch code), downloads all-MiniLM-L6-v2's
// weights from data/minilm/ (kept in the browser's Cache API "torchweb-minilm", so a second visit
// reads them from there), loads them with torchweb.safetensors.load, embeds the corpus, then answers
// searches. Messages in: {type: "start", sentences, pyodideURL} | {type: "search", query, topK}.
// Messages out, all {type, ...}:
//   log {text} | stage {text, done, total} | download {file, loaded, total, fromCache}
//   | adapter {...info} | timing {name, seconds} | ready {device, n, dim}
//   | results {query, hits: [[index, score]], seconds} | error {text}
import { boot, fetchText } from "../../boot.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });
export const CACHE = "torchweb-minilm";
const FILES = ["config.json", "vocab.txt", "tokenizer_config.json", "model.safetensors"];

// The bytes of data/minilm/<name>: from the Cache API when there, else downloaded with a
// ReadableStream reader (progress counted against Content-Length) and put in the cache.
async function cachedBytes(name, onProgress) {
  const url = new URL("../../data/minilm/" + name, import.meta.url).href;
  const cache = self.caches ? await self.caches.open(CACHE) : null;
  const hit = cache && await cache.match(url);
  if (hit) {
    const bytes = new Uint8Array(await hit.arrayBuffer());
    onProgress(bytes.length, bytes.length, true);
    return { bytes, fromCache: true };
  }
  const r = await fetch(url);
  if (!r.ok) {
    throw new Error(`fetch data/minilm/${name}: ${r.status}: the weights are missing ` +
                    "(run scripts/site_minilm.py, which fetches them and copies them into site/data/minilm/)");
  }
  const total = parseInt(r.headers.get("Content-Length") || "0", 10);
  const reader = r.body.getReader();
  const chunks = [];
  let loaded = 0, last = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value); loaded += value.length;
    const now = performance.now();
    if (now - last > 100) { last = now; onProgress(loaded, total, false); }
  }
  const bytes = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) { bytes.set(c, off); off += c.length; }
  onProgress(loaded, total || loaded, false);
  if (cache) {
    try {
      await cache.put(url, new Response(bytes, { headers: { "Content-Type": "application/octet-stream",
                                                             "Content-Length": String(bytes.length) } }));
    } catch (e) { post("log", { text: `could not cache ${name}: ${e.message || e}` }); }
  }
  return { bytes, fromCache: false };
}

const SETUP = `
import json, time
import pyodide.ffi
import torchweb
torchweb.install_torch_alias()
import torch
import torchweb.safetensors

if not pyodide.ffi.can_run_sync():
    raise RuntimeError("this browser cannot block on the GPU (no JSPI): the search reads scores with .tolist()")
await torchweb.webgpu.init_async()
report("adapter", json.dumps(torchweb.webgpu.adapter_info()))

import sys, types
for _name, _src in (("tokenizer", TOKENIZER_SRC), ("model", MODEL_SRC)):
    _mod = types.ModuleType(_name)
    _mod.__file__ = "demos/minilm/" + _name + ".py"
    exec(compile(_src, _mod.__file__, "exec"), _mod.__dict__)
    sys.modules[_name] = _mod
from model import BertConfig, BertModel, encode, semantic_search
from tokenizer import BertTokenizer

t0 = time.perf_counter()
tok = BertTokenizer.from_text(VOCAB_TEXT, json.loads(TOKENIZER_CONFIG_TEXT))
model = BertModel(BertConfig.from_dict(json.loads(CONFIG_TEXT))).eval()
tensors = torchweb.safetensors.load(WEIGHTS.to_bytes(), device="webgpu")
del WEIGHTS
model.load_state_dict(tensors)
del tensors
torchweb.webgpu.synchronize()
DEVICE = str(next(model.parameters()).device)
report("timing", json.dumps({"name": "model built and weights loaded", "seconds": time.perf_counter() - t0}))

t0 = time.perf_counter()
SENTENCES = list(SENTENCES_JS.to_py())
corpus = encode(model, tok, SENTENCES)
corpus.tolist()   # wait for the GPU
report("timing", json.dumps({"name": f"{len(SENTENCES)} sentences embedded", "seconds": time.perf_counter() - t0}))
report("ready", json.dumps({"device": DEVICE, "n": corpus.shape[0], "dim": corpus.shape[1]}))

def search(query, top_k):
    t = time.perf_counter()
    hits = semantic_search(encode(model, tok, [query]), corpus, top_k=top_k)[0]
    return json.dumps({"query": query, "hits": hits, "seconds": time.perf_counter() - t})
`;

let pyodide = null;
let searchFn = null;

async function start({ sentences, pyodideURL }) {
  const log = (text) => post("log", { text });
  if (!("gpu" in navigator)) {
    throw new Error("WebGPU is missing in this browser (no navigator.gpu): nothing ran. " +
                    "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu).");
  }
  const T = 5;
  post("stage", { text: "loading Pyodide and the torchweb wheel, downloading the weights", done: 0, total: T });
  let t = performance.now();
  const weightsStart = performance.now();
  const weights = Promise.all(FILES.map((name) => cachedBytes(name, (loaded, total, fromCache) =>
    post("download", { file: name, loaded, total, fromCache })))).then((r) => {
    post("timing", { name: "weights " + (r[3].fromCache ? "read from the cache" : "downloaded"),
                     seconds: (performance.now() - weightsStart) / 1000 });
    return r;
  });
  const code = Promise.all([fetchText("demos/minilm/model.py"), fetchText("demos/minilm/tokenizer.py")]);
  pyodide = await boot({ log, pyodideURL });
  post("timing", { name: "Pyodide and the wheel loaded", seconds: (performance.now() - t) / 1000 });
  post("stage", { text: "waiting for the weights", done: 1, total: T });
  const [[config, vocab, tokConfig, model], [modelSrc, tokSrc]] = await Promise.all([weights, code]);
  const dec = new TextDecoder();
  pyodide.globals.set("CONFIG_TEXT", dec.decode(config.bytes));
  pyodide.globals.set("VOCAB_TEXT", dec.decode(vocab.bytes));
  pyodide.globals.set("TOKENIZER_CONFIG_TEXT", dec.decode(tokConfig.bytes));
  pyodide.globals.set("WEIGHTS", model.bytes);
  pyodide.globals.set("MODEL_SRC", modelSrc);
  pyodide.globals.set("TOKENIZER_SRC", tokSrc);
  pyodide.globals.set("SENTENCES_JS", sentences);
  pyodide.globals.set("report", (type, json) => {
    const m = JSON.parse(json);
    if (type === "timing" && m.name.startsWith("model built")) post("stage", { text: "embedding the sentences", done: 3, total: T });
    post(type, m);
  });
  post("stage", { text: "starting WebGPU, building the model, loading the weights", done: 2, total: T });
  await pyodide.runPythonAsync(SETUP);
  searchFn = true;
}

self.onmessage = async ({ data: m }) => {
  try {
    if (m.type === "start") await start(m);
    else if (m.type === "search") {
      if (!searchFn) throw new Error("the model is not ready yet");
      // through runPythonAsync, so the scores' readback may block on the GPU (JSPI)
      pyodide.globals.set("QUERY", m.query);
      pyodide.globals.set("TOP_K", m.topK || 5);
      post("results", JSON.parse(await pyodide.runPythonAsync("search(QUERY, TOP_K)")));
    }
  } catch (err) {
    post("error", { text: String((err && err.message) || err) });
  }
};
