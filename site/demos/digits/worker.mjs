// The "Train" page's module Web Worker: loads Pyodide and the torchweb wheel (site/boot.mjs),
// fetches site/data/digits.json and site/demos/digits/train.py (plain PyTorch code) and runs it
// with `import torch` resolving to torchweb. Messages out, all {type, ...}:
//   log {text} | stage {text, done, total} | adapter {info} | batch {epoch, step, steps}
//   | epoch {epoch, loss, accuracy, seconds} | done {accuracy, seconds, epochs} | error {text}
import { boot } from "../../boot.mjs";
import { setDigitsGlobals } from "./sources.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

const RUN = `
import json, time
exec(compile(SETUP_SRC, "demos/digits/page_setup.py", "exec"))
await start(report)
ns, images, labels = load(report, DIGITS_JSON, TRAIN_SRC, N_TRAIN)

t0 = time.perf_counter()
def progress(epoch, loss, acc):
    report("epoch", json.dumps({"epoch": epoch, "loss": loss, "accuracy": acc,
                                "seconds": time.perf_counter() - t0}))

model, history = ns["train"](images, labels, epochs=EPOCHS, progress=progress)
report("done", json.dumps({"accuracy": history[-1]["accuracy"], "epochs": EPOCHS,
                           "seconds": time.perf_counter() - t0,
                           "n_train": len(labels) - ns["N_TEST"], "n_test": ns["N_TEST"]}))
`;

self.onmessage = async ({ data: { epochs = 6, nTrain = 0, pyodideURL } }) => {
  const log = (text) => post("log", { text });
  try {
    if (!("gpu" in navigator)) {
      throw new Error("WebGPU is missing in this browser (no navigator.gpu): nothing ran. " +
                      "Try a recent Chrome or Edge (Linux: --enable-unsafe-webgpu).");
    }
    post("stage", { text: "loading Pyodide and the torchweb wheel", done: 0, total: 4 });
    const pyodide = await boot({ log, pyodideURL });
    post("stage", { text: "fetching the digits and train.py", done: 1, total: 4 });
    await setDigitsGlobals(pyodide, { EPOCHS: epochs, N_TRAIN: nTrain,
                                      report: (type, json) => post(type, JSON.parse(json)) });
    post("stage", { text: "data fetched", done: 2, total: 4 });
    await pyodide.runPythonAsync(RUN);
  } catch (err) {
    post("error", { text: String((err && err.message) || err) });
  }
};
