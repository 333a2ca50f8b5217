"""What loading torchweb costs in a plain Pyodide page, phase by phase (issue 10).

PROBE_HTML is a page with nothing but Pyodide and the wheel, loaded as site/boot.mjs loads them
(the bytecode wheel, downloaded while Pyodide starts, then unpacked): it times, with
performance.now(), importing pyodide.mjs, loadPyodide, install_wheel (what is left of the
download, and unpacking), `import torchweb`, the first
`torchweb.webgpu.init_async()`, and a first and a second small matmul read back to Python
(the first compiles the kernel, the second shows the warm cost). It is not a file of site/: the
counting server below hands it out at PROBE_PATH, beside site/pyodide/ and site/wheels/.

The server also counts the bytes it sends per path: pages that load Pyodide in a Web Worker
fetch it there, where the page's own Resource Timing list does not see it.

Used by scripts/measure_load.py (all pages) and tests/test_load_times.py (this probe only).
"""

import functools
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402

PROBE_PATH = "/_load_probe.html"

# The matmul's inputs, as Python source run with `torch` bound to torchweb in the page and to
# PyTorch on the host (tests/test_load_times.py), so both compute the same product.
# Quarters and eighths of small integers: every product and sum is exact in float32.
MATMUL_INPUTS = """
a = torch.tensor([[((i * 5 + j * 3) % 11 - 5) / 4 for j in range(16)] for i in range(8)])
b = torch.tensor([[((i * 7 + j) % 9 - 4) / 8 for j in range(12)] for i in range(16)])
"""

MATMUL = "import json\nimport torchweb as torch\n" + MATMUL_INPUTS + """
c = a @ b
json.dumps({"device": str(c.device), "shape": list(c.shape), "values": await c.tolist_async()})
"""

# Not a phase: after the run, the seconds to compile every .py of the installed wheel (the part
# of `import torchweb` that a wheel of .py files pays in Pyodide on each fresh page). With the
# bytecode wheel there is no .py to compile (0 files).
COMPILE = """
import json, pathlib, time, torchweb
files = sorted(pathlib.Path(torchweb.__file__).parent.rglob("*.py"))
t = time.perf_counter()
for f in files:
    compile(f.read_bytes(), str(f), "exec")
json.dumps({"files": len(files), "bytes": sum(f.stat().st_size for f in files), "seconds": time.perf_counter() - t})
"""

PROBE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>torchweb load probe</title></head>
<body><h1>torchweb load probe</h1><pre id="output" data-status="running"></pre>
<script type="module">
const out = document.getElementById("output");
const R = globalThis.loadProbe = { phases: {}, ends: {}, errors: [] };
const log = (s) => { out.textContent += s + "\\n"; };
async function phase(name, f) {
  const a = performance.now();
  const v = await f();
  R.phases[name] = (performance.now() - a) / 1000;   // seconds this phase took
  R.ends[name] = performance.now() / 1000;            // seconds from navigation start
  log(`${name}: ${R.phases[name].toFixed(3)} s`);
  return v;
}
try {
  R.scriptStart = performance.now() / 1000;
  const indexURL = new URL("./pyodide/", location.href).href;
  // as site/boot.mjs: the wheel downloads while Pyodide compiles, then is unpacked directly
  const latest = await (await fetch("./wheels/latest.json")).json();
  // the pages' choice, the bytecode wheel; ?wheel=pure: the sources, compiled in the page
  const pure = new URLSearchParams(location.search).get("wheel") === "pure";
  const wheel = pure ? latest.wheel : (latest.pyodide_wheel || latest.wheel);
  R.wheel = wheel;
  const wheelBytes = fetch(new URL("./wheels/" + wheel, location.href).href).then((r) => r.arrayBuffer());
  const { loadPyodide } = await phase("import_pyodide_mjs", () => import(indexURL + "pyodide.mjs"));
  const py = await phase("loadPyodide", () => loadPyodide({ indexURL }));
  R.pyodideVersion = py.version;
  await phase("install_wheel", async () => py.unpackArchive(await wheelBytes, "wheel"));
  await phase("import_torchweb", () => py.runPythonAsync("import torchweb"));
  await phase("webgpu_init", () => py.runPythonAsync("await torchweb.webgpu.init_async()"));
  R.adapter = JSON.parse(py.runPython("import json; json.dumps(torchweb.webgpu.adapter_info())"));
  R.modules = py.runPython("import sys; len([m for m in sys.modules if m.startswith('torchweb')])");
  const MATMUL = __MATMUL__, COMPILE = __COMPILE__;
  R.matmul = JSON.parse(await phase("first_matmul_readback", () => py.runPythonAsync(MATMUL)));
  await phase("second_matmul_readback", () => py.runPythonAsync(MATMUL));
  R.totalSeconds = performance.now() / 1000;
  // how much of the import is compiling source to bytecode: compile every file again, timed
  R.compile = JSON.parse(await py.runPythonAsync(COMPILE));
  // when each file arrived (localhost: download time is near zero; compile is what remains)
  R.fetches = performance.getEntriesByType("resource").map((e) => ({ file: e.name.split("/").pop(),
    start: e.startTime / 1000, end: e.responseEnd / 1000, bytes: e.transferSize }));
  out.dataset.status = "DONE";
} catch (e) {
  R.errors.push(String((e && e.stack) || e));
  log("ERROR " + e);
  out.dataset.status = "ERROR";
}
</script></body></html>
""".replace("__MATMUL__", json.dumps(MATMUL)).replace("__COMPILE__", json.dumps(COMPILE))

PHASES = ("import_pyodide_mjs", "loadPyodide", "install_wheel", "import_torchweb", "webgpu_init",
          "first_matmul_readback", "second_matmul_readback")


class CountingHandler(serve.Handler):
    """serve.Handler that also serves PROBE_HTML and counts the body bytes it sends per path."""

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path == PROBE_PATH:
            body = PROBE_HTML.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.server.count(self.path, len(body))
            return
        super().do_GET()

    def copyfile(self, source, outputfile):
        n = 0
        while True:
            chunk = source.read(1 << 16)
            if not chunk:
                break
            outputfile.write(chunk)
            n += len(chunk)
        self.server.count(self.path, n)


class CountingServer(http.server.ThreadingHTTPServer):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.lock = threading.Lock()
        self.sent = {}

    def count(self, path, n):
        path = urllib.parse.urlsplit(path).path
        with self.lock:
            self.sent[path] = self.sent.get(path, 0) + n

    def take(self):
        """Bytes sent per path since the last take(), and reset."""
        with self.lock:
            sent, self.sent = self.sent, {}
        return sent


def start(directory, port=0):
    """Serve directory (and the probe page) in a daemon thread: (server, base URL)."""
    handler = functools.partial(CountingHandler, directory=os.fspath(directory))
    server = CountingServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


# Resource Timing keeps 250 entries unless asked: raise it before any page script runs.
RESOURCE_BUFFER_JS = "performance.setResourceTimingBufferSize(100000);"
RESOURCE_BYTES_JS = """
const nav = performance.getEntriesByType('navigation')[0];
const res = performance.getEntriesByType('resource');
return {transfer: (nav ? nav.transferSize : 0) + res.reduce((a, e) => a + e.transferSize, 0),
        decoded: (nav ? nav.decodedBodySize : 0) + res.reduce((a, e) => a + e.decodedBodySize, 0),
        count: res.length + (nav ? 1 : 0)};"""


def poll(driver, script, *args):
    """execute_script, or None when Chromium's renderer is too busy to answer in time (a page
    compiling Pyodide on its main thread on a loaded machine): the caller just polls again."""
    from selenium.common.exceptions import TimeoutException
    try:
        return driver.execute_script(script, *args)
    except TimeoutException:
        return None


def open_url(driver, url):
    """driver.get, tolerating the same renderer timeout: the page goes on loading."""
    from selenium.common.exceptions import TimeoutException
    try:
        driver.get(url)
    except TimeoutException:
        pass


def prepare(driver):
    """Ask Chromium to keep every Resource Timing entry of the pages it opens from now on."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RESOURCE_BUFFER_JS})


def measure_plain(driver, base, timeout=120, pure=False):
    """Open the probe page in driver (a fresh profile) and return its timings (seconds).
    pure: load the pure wheel (sources) instead of the pages' bytecode wheel."""
    prepare(driver)
    open_url(driver, base + PROBE_PATH.lstrip("/") + ("?wheel=pure" if pure else ""))
    deadline = time.monotonic() + timeout
    while True:
        status = poll(driver, "return document.getElementById('output').dataset.status;")
        if status in ("DONE", "ERROR") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    probe = poll(driver, "return globalThis.loadProbe || null;") or {}
    probe["status"] = status if status in ("DONE", "ERROR") else "TIMEOUT"
    probe["resources"] = driver.execute_script(RESOURCE_BYTES_JS)
    return probe
