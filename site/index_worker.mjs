// The landing page's module Web Worker: loads Pyodide and the torchweb wheel (boot.mjs), trains
// the "Train" demo's CNN (demos/digits/train.py, unchanged) on the 8x8 digits, and classifies
// digits while it learns: after each epoch, a few held-out test digits and the visitor's latest
// drawing; once trained, each drawing as it comes. Messages in: {type: "start", epochs, nTrain,
// pyodideURL} | {type: "classify", pixels} (64 values 0..16). Messages out, all {type, ...}:
//   stage {text} | adapter {...info} | batch {epoch, step, steps} | epoch {epoch, loss, accuracy,
//   seconds} | samples {labels, images, preds, probs} | probs {probs, id} | done {...} | error {text}
import { boot } from "./boot.mjs";
import { setDigitsGlobals } from "./demos/digits/sources.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

const RUN = `
import json, time
exec(compile(SETUP_SRC, "demos/digits/page_setup.py", "exec"))
await start(report)
import torch        # torchweb, since start()
ns, images, labels = load(report, DIGITS_JSON, TRAIN_SRC, N_TRAIN)
_, (test_images, test_labels) = ns["split"](images, labels)
SAMPLES = 8
samples = torch.tensor(test_images[:SAMPLES], dtype=torch.float32).div(16.0).view(-1, 1, 8, 8)

model = None
_make_model = ns["make_model"]
def make_model():
    global model        # train.py makes the model; the page classifies with it as it learns
    model = _make_model()
    return model
ns["make_model"] = make_model

def probabilities(x):
    model.eval()
    with torch.no_grad():
        p = torch.softmax(model(x), dim=1)
    model.train()
    return p

def classify(pixels, ident):
    x = torch.tensor([float(v) for v in pixels], dtype=torch.float32).div(16.0).view(1, 1, 8, 8)
    report("probs", json.dumps({"probs": probabilities(x).view(-1).tolist(), "id": ident}))

t0 = time.perf_counter()
def progress(epoch, loss, acc):
    report("epoch", json.dumps({"epoch": epoch, "loss": loss, "accuracy": acc, "seconds": time.perf_counter() - t0}))
    p = probabilities(samples)
    report("samples", json.dumps({"labels": test_labels[:SAMPLES], "images": test_images[:SAMPLES],
                                  "preds": p.argmax(dim=1).tolist(), "probs": p.tolist()}))
    drawn = take_pending()          # the visitor drew while the model was learning
    if drawn:
        classify(drawn.pixels.to_py(), drawn.id)

report("stage", json.dumps({"text": "training"}))
model, history = ns["train"](images, labels, epochs=EPOCHS, progress=progress)
report("done", json.dumps({"accuracy": history[-1]["accuracy"], "epochs": EPOCHS, "seconds": time.perf_counter() - t0,
                           "n_train": len(labels) - ns["N_TEST"], "n_test": ns["N_TEST"]}))
`;

let pending = null;      // the latest drawing not yet classified
let pyodide = null, trained = false, busy = Promise.resolve();

function classifyNow({ pixels, id }) {
  // one at a time: each call runs Python that reads the GPU back
  busy = busy.then(async () => {
    pyodide.globals.set("PIX", pixels);
    pyodide.globals.set("PIX_ID", id);
    await pyodide.runPythonAsync("classify(PIX.to_py(), PIX_ID)");
  }).catch((err) => post("error", { text: String((err && err.message) || err) }));
}

async function start({ epochs = 4, nTrain = 0, pyodideURL }) {
  if (!("gpu" in navigator)) {
    throw new Error("WebGPU is missing in this browser (no navigator.gpu): nothing ran. " +
                    "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu).");
  }
  post("stage", { text: "loading Pyodide and torchweb" });
  const log = (text) => post("log", { text });
  pyodide = await boot({ log, pyodideURL });
  await setDigitsGlobals(pyodide, {
    EPOCHS: epochs, N_TRAIN: nTrain,
    report: (type, json) => post(type, JSON.parse(json)),
    take_pending: () => { const p = pending; pending = null; return p; },
  });
  await pyodide.runPythonAsync(RUN);
  trained = true;
  if (pending) { classifyNow(pending); pending = null; }
}

self.onmessage = ({ data: m }) => {
  if (m.type === "start") start(m).catch((err) => post("error", { text: String((err && err.message) || err) }));
  else if (m.type === "classify") {
    if (trained) classifyNow(m);
    else pending = m;            // picked up at the end of the current epoch
  }
};
