// The landing page (index.html): a CNN learns the 8x8 digits in a worker (index_worker.mjs) and
// classifies what the visitor draws on the pad. #output follows the pages' protocol (DONE once the
// model is trained and has classified the held-out samples); globalThis.torchwebHome is what the
// page tests read.
import { outputLog } from "./run.mjs";
import { $, secs, startWorker, collectErrors, showError, showAdapter } from "./demo_page.mjs";
import { Pad } from "./index_pad.mjs";

const { log, finish } = outputLog();
const params = new URLSearchParams(location.search);
const epochs = Math.max(1, parseInt(params.get("epochs") || "4", 10));
const nTrain = Math.max(0, parseInt(params.get("train") || "0", 10));
const home = globalThis.torchwebHome = { epochs, nTrain, adapter: null, history: [], samples: null, drawn: null,
  classified: 0, firstResultSeconds: null, finished: false, errors: [] };
const t0 = performance.now();
collectErrors(home.errors);

// ---- the ten probability bars
const bars = [];
for (let d = 0; d < 10; d++) {
  const li = document.createElement("li");
  li.innerHTML = `<span>${d}</span><span class="track"><span class="fill"></span></span><span class="pct">&ndash;</span>`;
  $("probs").append(li); bars.push(li);
}
function showProbs(probs, note) {
  const best = probs.indexOf(Math.max(...probs));
  bars.forEach((li, d) => {
    li.classList.toggle("top", d === best);
    li.querySelector(".fill").style.width = (100 * probs[d]).toFixed(1) + "%";
    li.querySelector(".pct").textContent = (100 * probs[d]).toFixed(0) + "%";
  });
  $("guess").textContent = String(best);
  $("guess-note").textContent = note;
  return best;
}

// ---- the pad: each finished stroke asks the worker for a guess
let nextId = 1, shownSample = null;
const pad = new Pad($("pad"), (pixels) => {
  shownSample = null;
  const id = nextId++;
  home.drawn = { id, pixels, probs: null };
  w.postMessage({ type: "classify", pixels, id });
  if (!home.finished) $("guess-note").textContent = "your digit: guessed at the end of this epoch";
});
$("clear").onclick = () => { pad.clear(); home.drawn = null; };

// ---- the held-out samples, as small buttons
function drawThumb(canvas, image) {
  const g = canvas.getContext("2d"), img = g.createImageData(8, 8);
  image.forEach((v, i) => { img.data.set([0, 0, 0, Math.round(255 * v / 16)], 4 * i); });
  g.putImageData(img, 0, 0);
}
function showSamples(m) {
  home.samples = m;
  const box = $("samples"); box.textContent = "";
  m.images.forEach((image, i) => {
    const b = document.createElement("button"); b.type = "button"; b.className = "sample";
    b.title = `test digit ${m.labels[i]}: guessed ${m.preds[i]}`;
    const c = document.createElement("canvas"); c.width = 8; c.height = 8; drawThumb(c, image);
    const s = document.createElement("span"); s.textContent = `${m.preds[i]}`;
    if (m.preds[i] !== m.labels[i]) s.className = "wrong";
    b.append(c, s);
    b.onclick = () => { pad.showImage(image); shownSample = i; showProbs(m.probs[i], `test digit ${m.labels[i]}`); };
    box.append(b);
  });
  // the first live result: a held-out digit on the pad, unless the visitor has drawn
  if (!home.drawn) {
    const i = shownSample ?? 0;
    pad.showImage(m.images[i]); shownSample = i;
    showProbs(m.probs[i], `test digit ${m.labels[i]}, after epoch ${home.history.length}`);
  }
}

const fail = (text) => { home.errors.push(text); showError(text); finish(false, text); };
const w = startWorker("./index_worker.mjs", fail);
w.onmessage = ({ data: m }) => {
  if (m.type === "log") log(m.text);
  else if (m.type === "stage") { $("stage").textContent = m.text; log(`[${secs(performance.now() - t0)}] ${m.text}`); }
  else if (m.type === "adapter") {
    home.adapter = showAdapter(m, log);
  } else if (m.type === "batch") {
    $("stage").textContent = `training: epoch ${m.epoch} of ${epochs}`;
    $("progress").max = m.steps * epochs; $("progress").value = (m.epoch - 1) * m.steps + m.step + 1;
  } else if (m.type === "epoch") {
    if (home.firstResultSeconds === null) {
      home.firstResultSeconds = (performance.now() - t0) / 1000;
      $("first").textContent = `${secs(performance.now() - t0)} (page start to the first epoch's guesses)`;
    }
    home.history.push({ epoch: m.epoch, loss: m.loss, accuracy: m.accuracy });
    $("final").textContent = `${(100 * m.accuracy).toFixed(1)}% after epoch ${m.epoch}`;
    log(`epoch ${m.epoch}/${epochs}: loss ${m.loss.toFixed(4)}, test accuracy ${(100 * m.accuracy).toFixed(1)}% (${m.seconds.toFixed(1)} s)`);
  } else if (m.type === "samples") showSamples(m);
  else if (m.type === "probs") {
    home.classified++;
    if (home.drawn && home.drawn.id === m.id) {
      home.drawn.probs = m.probs;
      home.drawn.guess = showProbs(m.probs, "your digit");
    }
  } else if (m.type === "done") {
    Object.assign(home, { accuracy: m.accuracy, trainSeconds: m.seconds, nTrainUsed: m.n_train, nTest: m.n_test,
                          totalSeconds: (performance.now() - t0) / 1000, finished: true });
    $("stage").textContent = `trained: ${(100 * m.accuracy).toFixed(1)}% of ${m.n_test} held-out digits right ` +
                             `(${m.n_train} training images, ${m.seconds.toFixed(1)} s). Draw one!`;
    $("progress").value = $("progress").max;
    $("final").textContent = `${(100 * m.accuracy).toFixed(1)}% of ${m.n_test} test images after ${m.epochs} epochs`;
    const s = home.samples;
    log(`held-out digits ${s.labels.join(" ")}: guessed ${s.preds.join(" ")}`);
    finish(true);
  } else if (m.type === "error") fail(m.text);
};
w.postMessage({ type: "start", epochs, nTrain, pyodideURL: params.get("pyodide") || undefined });
