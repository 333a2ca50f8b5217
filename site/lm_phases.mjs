// Time to first token on the Complete page (lm.html), by phase (issue 24's target: page open to
// first token, weights cached and not). The worker posts "mark" messages stamped on the shared
// clock (performance.timeOrigin + performance.now(), the same in the page and its worker); each
// mark ends a phase, so the phases add up to the time to first token exactly. Counted from
// navigation when the URL names the model (the page loads it at once), else from the Load press;
// the wait for the Generate button is left out.
export const PHASES = {
  worker: "page and worker start",
  pyodide: "Pyodide start and the wheel",
  import: "import torchweb",
  device: "WebGPU device",
  // "checkpoint" is split into the two below by from_pretrained's timings
  weights: "weights",
  model: "model build/load",
  tokenizer: "tokenizer",
  prefill: "prompt prefill",
  first: "first token",
};

const since = (at) => at - performance.timeOrigin;     // a shared-clock stamp as page time (ms)

export function firstTokenClock() {
  let opened = 0, last = 0, readyAt = null, askedAt = null, auto = false, phases = [], weights = null;
  const add = (key, end, extra = {}) => {
    phases.push({ key, name: PHASES[key], seconds: (end - last) / 1000, ...extra });
    last = end;
  };
  return {
    // Load pressed (fromNavigation: loaded at once by the URL, so page open counts)
    start(fromNavigation) {
      opened = last = fromNavigation ? 0 : performance.now();
      phases = []; readyAt = askedAt = weights = null;
    },
    mark(m) {
      const end = since(m.at);
      if (m.name === "checkpoint") {   // seconds reading files (cache or network), then the rest
        const t = m.timings;
        weights = t.network_bytes && t.cache_bytes ? "cache and network" : t.network_bytes ? "network" : "cache";
        add("weights", Math.min(end, last + t.fetch_s * 1000), { from: weights, bytes: t.network_bytes + t.cache_bytes });
        add("model", end);
      } else add(m.name, end);
    },
    ready() { readyAt = performance.now(); },
    // Generate asked for: byPage when the URL's prompt runs it at once (no wait to leave out)
    asked(byPage) {
      if (askedAt !== null) return;        // (a later generation: the load's figures are taken)
      askedAt = performance.now(); auto = byPage;
      if (!byPage) last = askedAt;
    },
    prefilled(m) { if (askedAt !== null && !phases.some((p) => p.key === "prefill")) add("prefill", since(m.at)); },
    // The first token shown: the figures, once per load (null for later generations)
    firstToken() {
      if (askedAt === null || phases.some((p) => p.key === "first")) return null;
      add("first", performance.now());
      const seconds = phases.reduce((s, p) => s + p.seconds, 0);
      const download = weights === "cache" ? 0 : phases.find((p) => p.key === "weights").seconds;
      return { seconds, withoutDownload: seconds - download, weightsFrom: weights, fromNavigation: opened === 0,
               waitLeftOut: auto ? 0 : (askedAt - readyAt) / 1000, phases };
    },
  };
}

// "first token in 2.1 s (weights from cache)" and one row per phase.
export function showFirstToken(r, dd, table) {
  const s = (x) => x.toFixed(2) + " s";
  dd.textContent = `first token in ${s(r.seconds)} from ${r.fromNavigation ? "page open" : "Load"}` +
                   (r.weightsFrom === "cache" ? " (weights from the cache)"
                                               : ` (${s(r.withoutDownload)} without downloading the weights)`);
  table.replaceChildren(...r.phases.map((p) => {
    const tr = document.createElement("tr");
    const name = p.key === "weights" ? `${p.name} (${(p.bytes / 1048576).toFixed(1)} MiB from the ${p.from})` : p.name;
    for (const text of [name, s(p.seconds)]) { const td = document.createElement("td"); td.textContent = text; tr.append(td); }
    return tr;
  }));
  table.hidden = false;
}
