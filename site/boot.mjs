// Load Pyodide and the torchweb wheel. Shared by the pages and the worker; no `window` use.
// URLs are relative to this file, so site/ works wherever it is served (pyodide/ and wheels/
// sit beside it; scripts/run_page.py and the test runner put them there).

export async function boot({ log = console.log, pyodideURL, wheelURL } = {}) {
  const here = new URL(".", import.meta.url);
  const indexURL = new URL(pyodideURL || "pyodide/", here).href;
  // ?pyodide= comes from the link: code from another origin must never be imported on ours.
  if (new URL(indexURL).origin !== here.origin) throw new Error(`Pyodide must come from this site, not ${indexURL}`);
  const t0 = performance.now();
  // The wheel downloads while Pyodide compiles (it is needed right after), then is unpacked
  // into site-packages directly: torchweb has no dependencies for loadPackage to resolve.
  // pyodide_wheel holds bytecode compiled by Pyodide's Python instead of the sources (nothing to
  // compile here); another Python gets the pure wheel.
  let latest = null;
  const download = async (url) => {
    const r = await fetch(url);
    if (!r.ok) throw new Error(`fetch ${url}: ${r.status}`);
    return r.arrayBuffer();
  };
  const wheelBytes = (async () => {
    if (!wheelURL) {
      // The build writes the wheels' file names here, so the page needs no version number.
      const r = await fetch(new URL("wheels/latest.json", here));
      if (!r.ok) throw new Error(`no wheels/latest.json (${r.status}): build the wheel first (scripts/run_page.py does)`);
      latest = await r.json();
      wheelURL = new URL("wheels/" + (latest.pyodide_wheel || latest.wheel), here).href;
      // The wheel's runtime.mjs from this origin: torchweb then needs no eval and no data: script,
      // so the pages work under their Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval').
      if (latest.runtime) globalThis.torchwebRuntimeModule = import(new URL("wheels/" + latest.runtime, here).href);
    }
    return download(wheelURL);
  })();
  wheelBytes.catch(() => {});   // (awaited below, after loadPyodide)
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL, stdout: log, stderr: log });
  let bytes = await wheelBytes;
  if (latest && latest.pyodide_wheel &&
      pyodide.runPython("import sys; '%d.%d' % sys.version_info[:2]") !== latest.pyodide_wheel_python) {
    wheelURL = new URL("wheels/" + latest.wheel, here).href;
    bytes = await download(wheelURL);
  }
  pyodide.unpackArchive(bytes, "wheel");
  log(`pyodide ${pyodide.version} and ${wheelURL.split("/").pop()} loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return pyodide;
}

// Fetch a text file relative to this folder.
export async function fetchText(path) {
  const r = await fetch(new URL(path, new URL(".", import.meta.url)));
  if (!r.ok) throw new Error(`fetch ${path}: ${r.status}`);
  return r.text();
}
