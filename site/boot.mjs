// Load Pyodide and the torchweb wheel. Shared by the pages and the worker; no `window` use.
// URLs are relative to this file, so site/ works wherever it is served (pyodide/ and wheels/
// sit beside it; scripts/run_page.py and the test runner put them there).

export async function boot({ log = console.log, pyodideURL, wheelURL } = {}) {
  const here = new URL(".", import.meta.url);
  const indexURL = new URL(pyodideURL || "pyodide/", here).href;
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  const t0 = performance.now();
  const pyodide = await loadPyodide({ indexURL, stdout: log, stderr: log });
  if (!wheelURL) {
    // The build writes the wheel's file name here, so the page needs no version number.
    const r = await fetch(new URL("wheels/latest.json", here));
    if (!r.ok) throw new Error(`no wheels/latest.json (${r.status}): build the wheel first (scripts/run_page.py does)`);
    wheelURL = new URL("wheels/" + (await r.json()).wheel, here).href;
  }
  await pyodide.loadPackage(wheelURL, { messageCallback: () => {} });
  log(`pyodide ${pyodide.version} and ${wheelURL.split("/").pop()} loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return pyodide;
}

// Fetch a text file relative to this folder.
export async function fetchText(path) {
  const r = await fetch(new URL(path, new URL(".", import.meta.url)));
  if (!r.ok) throw new Error(`fetch ${path}: ${r.status}`);
  return r.text();
}
