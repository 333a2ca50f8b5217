// The Train page (train.html)'s script, a file of its own: the site's CSP runs no inline script.
import { outputLog } from "./run.mjs";
import { plot } from "./demos/digits/plot.mjs";
import { $, secs, startWorker, collectErrors, showError, showStage, showAdapter } from "./demo_page.mjs";
const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const epochs = Math.max(1, parseInt(params.get("epochs") || "6", 10));
const nTrain = Math.max(0, parseInt(params.get("train") || "0", 10));
const summary = globalThis.torchwebTrain = { epochs, nTrain, adapter: null, history: [], errors: [] };
const t0 = performance.now();
const losses = [], accs = [];
const redraw = () => {
  plot($("loss-plot"), losses, { xmax: epochs, color: "#c0392b", label: (v) => v.toFixed(2) });
  plot($("acc-plot"), accs, { xmax: epochs, color: "#2471a3", ymin: 0, ymax: 1, label: (v) => (100 * v).toFixed(0) + "%" });
};
redraw();
const fail = (text) => { summary.errors.push(text); showError(text); finish(false, text); };
collectErrors(summary.errors);

const w = startWorker("./demos/digits/worker.mjs", fail);
w.onmessage = ({ data: m }) => {
  if (m.type === "log") log(m.text);
  else if (m.type === "stage") showStage(m, log, t0);
  else if (m.type === "adapter") {
    summary.adapter = showAdapter(m, log); $("stage").textContent = "training";
  } else if (m.type === "batch") {
    $("epoch-label").textContent = `Epoch ${m.epoch} of ${epochs}`;
    $("epoch-bar").max = m.steps; $("epoch-bar").value = m.step + 1;
  } else if (m.type === "epoch") {
    if (!losses.length) {
      summary.firstResultSeconds = (performance.now() - t0) / 1000;
      $("first").textContent = `${secs(performance.now() - t0)} (page start to the first epoch's loss and accuracy)`;
    }
    losses.push(m.loss); accs.push(m.accuracy); redraw();
    summary.history.push({ epoch: m.epoch, loss: m.loss, accuracy: m.accuracy });
    log(`epoch ${m.epoch}/${epochs}: loss ${m.loss.toFixed(4)}, test accuracy ${(100 * m.accuracy).toFixed(1)}% (${m.seconds.toFixed(1)} s training)`);
  } else if (m.type === "done") {
    Object.assign(summary, { accuracy: m.accuracy, trainSeconds: m.seconds, nTrainUsed: m.n_train, nTest: m.n_test,
                             totalSeconds: (performance.now() - t0) / 1000, finished: true });
    $("final").textContent = `${(100 * m.accuracy).toFixed(1)}% of ${m.n_test} test images after ${m.epochs} epoch${m.epochs === 1 ? "" : "s"} ` +
                             `(${m.n_train} training images, ${m.seconds.toFixed(1)} s training)`;
    $("stage").textContent = "done";
    log(`final test accuracy: ${(100 * m.accuracy).toFixed(1)}%`);
    w.terminate(); finish(true);
  } else if (m.type === "error") {
    w.terminate(); fail(m.text);
  }
};
w.postMessage({ epochs, nTrain, pyodideURL: params.get("pyodide") || undefined });
