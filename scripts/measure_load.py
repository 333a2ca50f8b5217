"""Load times of every page of site/ and of `import torchweb` in Pyodide, plus screenshots (issue 10).

Builds and publishes what the tests build (wheel, digits, MiniLM weights, PyScript, JupyterLite),
serves site/ (and the repo root for tests.html) on 127.0.0.1 through a server that counts the
bytes it sends, and opens each page in headless Chromium with a fresh profile (nothing cached).
For each page: seconds from navigation start to its first GPU result, polled from outside with
performance.now() (the page's own figure beside it where it reports one), seconds to the end of
its short run, bytes served (workers included) and bytes in the page's Resource Timing list
(main thread only). index.html and minilm.html are visited twice in one profile: the second
visit reads Pyodide and the pages' files from the service worker's cache (site/sw.js), and
MiniLM's weights from the Cache API. A plain Pyodide page (scripts/load_probe.py) times each phase.

    .venv/bin/python scripts/measure_load.py [--out FILE] [--screenshots [DIR]] [--only a,b] [--no-build] [--pure]
    .venv/bin/python scripts/measure_load.py --lm [--runs N] [--out FILE]

Writes JSON (default bench/results/load-swiftshader.json) and prints Markdown tables.

--lm (issue 24's target): time to first token on the Complete page (lm.html) with the test
checkpoint (tests/browser/fixtures/lm_tiny, a tiny sharded GPT-2), N times in a fresh profile
(cold: weights over the network) and again in the same profile (warm: weights from the Cache
API, Pyodide and the wheel from the service worker), each phase as the page reports it
(site/lm_phases.mjs); JSON default bench/results/load-lm-swiftshader.json.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load_probe  # noqa: E402
import run_page  # noqa: E402
import wheel  # noqa: E402

REPO, SITE = run_page.REPO, run_page.SITE
OUT = os.path.join(REPO, "bench", "results", "load-swiftshader.json")
LM_OUT = os.path.join(REPO, "bench", "results", "load-lm-swiftshader.json")
LM_FIXTURE = os.path.join(REPO, "tests", "browser", "fixtures", "lm_tiny")
SHOTS = os.path.join(REPO, "docs", "screenshots")
WINDOW = (1000, 900)

# JS expressions evaluated in the page; each is wrapped in try/catch (globals appear late).
STATUS = "document.getElementById('output').dataset.status"
TEXT = "document.getElementById('output').textContent"
LITE_OUT = "[...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText).join('\\n')"
LITE_IDLE = ("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'"
             " && document.querySelectorAll('.jp-OutputArea-output').length === 0")
LITE_RUN = "(window.jupyterapp.commands.execute('notebook:run-all-cells'), true)"
GPT_URL = ("gpt.html?steps=6&batch=64&every=1&sampleEvery=0&length=8&lr=0.01"
           "&layers=1&embd=32&heads=2&block=16")   # tests/test_gpt_page.py's short run

# name, file (skipped when missing), url, first result, the page's own figure, done, failed.
PAGES = [
    dict(name="index", file="index.html", url="index.html?epochs=1&train=96",
         first="torchwebHome.firstResultSeconds > 0", own="torchwebHome.firstResultSeconds",
         done=f"{STATUS} === 'DONE'", what="landing page: first epoch's guesses on held-out digits (1 epoch, 96 images)",
         needs="digits"),
    dict(name="hello", file="hello.html", url="hello.html",
         first=f"{TEXT}.includes('a @ b.T =')", own=None, done=f"{STATUS} === 'DONE'",
         what="first matmul read back on the main thread (log line)", revisit=True),
    dict(name="train", file="train.html", url="train.html?epochs=1&train=96",
         first="torchwebTrain.firstResultSeconds > 0", own="torchwebTrain.firstResultSeconds",
         done=f"{STATUS} === 'DONE'", what="first epoch's loss and accuracy (1 epoch, 96 images: 3 batches)",
         needs="digits"),
    dict(name="minilm", file="minilm.html", url="minilm.html?q=A%20man%20is%20eating%20pasta.",
         first="torchwebMiniLM.firstResultSeconds > 0", own="torchwebMiniLM.firstResultSeconds",
         done=f"{STATUS} === 'DONE'", extra={"fromCache": "torchwebMiniLM.fromCache"},
         what="first search ranked (weights downloaded into the Cache API)", needs="minilm", revisit=True),
    dict(name="pyscript", file="pyscript.html", url="pyscript.html",
         first="document.getElementById('first').textContent.endsWith(' s')",
         own="parseFloat(document.getElementById('first').textContent)", done=f"{STATUS} === 'DONE'",
         what="first training step's loss (PyScript, main thread)", needs="pyscript"),
    dict(name="pyscript-worker", file="pyscript-worker.html", url="pyscript-worker.html",
         first="document.getElementById('first').textContent.endsWith(' s')",
         own="parseFloat(document.getElementById('first').textContent)", done=f"{STATUS} === 'DONE'",
         what="first training step's loss (PyScript worker)", needs="pyscript"),
    dict(name="jupyterlite", file="lite/lab/index.html", url="lite/lab/index.html?path=train.ipynb",
         act=(LITE_IDLE, LITE_RUN), first=f"{LITE_OUT}.includes('adapter:')", own=None,
         done=f"{LITE_OUT}.includes('weight:')", failed=f"{LITE_OUT}.includes('Traceback')",
         what="adapter line of the notebook's first code cell, after Run All once the kernel is idle",
         needs="jupyterlite", timeout=240),
    dict(name="tests", file="tests.html", url="site/tests.html?filter=add/", root="repo",
         first=f"{TEXT}.includes('adapter:')", own=None, done=f"{STATUS} === 'DONE'",
         what="summary of the browser tier's driver checks and the add/ cases (logged at the end)"),
    dict(name="gpt", file="gpt.html", url=GPT_URL,
         first="torchwebGPT.firstResultSeconds > 0", own="torchwebGPT.firstResultSeconds",
         done=f"{STATUS} === 'DONE'", what="first loss point (tiny model, 6 steps)", timeout=300),
    dict(name="lm", file="lm.html", url=None,   # (lm_url(): the fixture's prompt)
         first="torchwebLM.firstToken !== null", own="torchwebLM.firstToken.seconds",
         done=f"{STATUS} === 'DONE'", extra={"firstToken": "torchwebLM.firstToken", "adapter": "torchwebLM.adapter"},
         # then Generate again: its first token has every kernel compiled (what the first one paid)
         again=("document.getElementById('go').click()", "torchwebLM.generations.length === 2",
                {"firstSecondsByGeneration": "torchwebLM.generations.map(g => g.firstSeconds)"}),
         what="first token of a greedy completion (test checkpoint, weights over the network, then cached)",
         needs="lm", revisit=True, timeout=300),
    dict(name="playground", file="playground.html", url="playground.html?autorun=1",
         first="torchwebPlayground.firstOutputSeconds > 0", own="torchwebPlayground.firstOutputSeconds",
         done=f"{STATUS} === 'DONE'", what="first output of the tensor tour example (?autorun=1)",
         timeout=240),
]


def js(expr):
    return f"(() => {{ try {{ return ({expr}); }} catch (e) {{ return null; }} }})()"


def lm_url():
    """The Complete page on the test checkpoint (published by site_data.publish_lm_fixture), greedy, 8 new tokens."""
    from urllib.parse import quote
    with open(os.path.join(LM_FIXTURE, "expected.json")) as f:
        prompt = json.load(f)["prompt"]
    return f"lm.html?model=data/lm_tiny/&greedy=1&n=8&prompt={quote(prompt)}"


def build(skip):
    """Build what the pages need; returns {need: error text} for what could not be built."""
    import site_data
    import site_minilm
    run_page.ensure_pyodide(SITE)
    wheel.publish(wheel.build())
    broken = {}
    steps = {"digits": lambda: site_data.publish(SITE), "minilm": lambda: site_minilm.publish(SITE),
             "lm": lambda: site_data.publish_lm_fixture(SITE)}
    if "pyscript" not in skip:
        steps["pyscript"] = lambda: __import__("build_pyscript").build(build_wheel=False)
    if "jupyterlite" not in skip:
        steps["jupyterlite"] = lambda: __import__("build_jupyterlite").build(build_wheel=False)
    for need, step in steps.items():
        t = time.monotonic()
        try:
            step()
            print(f"[build] {need}: {time.monotonic() - t:.1f} s", flush=True)
        except (Exception, SystemExit) as e:   # the build scripts exit with a message
            broken[need] = f"{type(e).__name__}: {e}"
            print(f"[build] {need} FAILED: {broken[need][:300]}", flush=True)
    return broken


def wheel_info():
    with open(os.path.join(SITE, "wheels", "latest.json")) as f:
        name = json.load(f)["wheel"]
    path = os.path.join(SITE, "wheels", name)
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
    by_ext = {}
    for i in infos:
        ext = os.path.splitext(i.filename)[1] or "(none)"
        by_ext[ext] = by_ext.get(ext, 0) + i.file_size
    info = {"name": name, "bytes": os.path.getsize(path), "files": len(infos),
            "uncompressed_bytes": sum(i.file_size for i in infos), "uncompressed_by_ext": by_ext}
    with open(os.path.join(SITE, "wheels", "latest.json")) as f:
        pages = json.load(f).get("pyodide_wheel")
    if pages:   # the bytecode wheel the pages load (scripts/wheel.py build_pyodide)
        with zipfile.ZipFile(os.path.join(SITE, "wheels", pages)) as z:
            info["pages_wheel"] = {"name": pages, "bytes": os.path.getsize(os.path.join(SITE, "wheels", pages)),
                                   "files": len(z.infolist()),
                                   "uncompressed_bytes": sum(i.file_size for i in z.infolist())}
    return info


def visit(driver, server, url, page, shot=None):
    """Open url, poll until the first result and the end of the run; returns the measurements."""
    server.take()
    load_probe.open_url(driver, url)
    probe = ("return [performance.now() / 1000, " + js(page["first"]) + ", " + js(page["done"]) + ", "
             + js(page.get("failed", f"{STATUS} === 'ERROR'")) + ", "
             + (js(page["act"][0]) if page.get("act") else "false") + "];")
    r = {"url": url, "status": "TIMEOUT", "first_result_s": None, "done_s": None,
         "loadavg_at_start": round(os.getloadavg()[0], 1)}
    deadline = time.monotonic() + page.get("timeout", 300)
    while time.monotonic() < deadline:
        got = load_probe.poll(driver, probe)
        if got is None:   # the renderer was busy: ask again
            continue
        now, first, done, failed, act = got
        if first and r["first_result_s"] is None:
            r["first_result_s"] = round(now, 2)
        if act and "acted_s" not in r:   # JupyterLite: Run All once the kernel is idle
            r["acted_s"] = round(now, 2)
            driver.execute_script("return " + js(page["act"][1]) + ";")
        if failed:
            r["status"] = "ERROR"
            break
        if done:
            r["status"], r["done_s"] = "DONE", round(now, 2)
            break
        time.sleep(0.1)
    if r["status"] == "DONE" and page.get("again"):   # a second run in the same page
        act, cond, values = page["again"]
        driver.execute_script(act)
        deadline = time.monotonic() + page.get("timeout", 300)
        while time.monotonic() < deadline and not load_probe.poll(driver, "return " + js(cond) + ";"):
            time.sleep(0.25)
        for key, expr in values.items():
            r[key] = driver.execute_script("return " + js(expr) + ";")
    if page.get("own"):
        own = driver.execute_script("return " + js(page["own"]) + ";")
        r["page_reported_s"] = round(own, 2) if isinstance(own, (int, float)) else None
    for key, expr in page.get("extra", {}).items():
        r[key] = driver.execute_script("return " + js(expr) + ";")
    r["resource_timing"] = driver.execute_script(load_probe.RESOURCE_BYTES_JS)
    sent = server.take()
    r["served_bytes"] = sum(sent.values())
    r["served_top"] = dict(sorted(sent.items(), key=lambda kv: -kv[1])[:6])
    if r["status"] != "DONE":
        r["log_tail"] = (driver.execute_script("return " + js(TEXT) + ";") or "")[-1500:]
        r["console_tail"] = run_page.console_log(driver)[-1500:]
    if shot:
        driver.save_screenshot(shot)
        r["screenshot"] = os.path.relpath(shot, REPO)
    return r


def measure_page(page, servers, shots):
    driver = run_page.chrome()
    try:
        # the viewport itself at WINDOW (a window's size would include the browser's frame)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        load_probe.prepare(driver)
        server, base = servers[page.get("root", "site")]
        shot = os.path.join(shots, page["name"] + ".png") if shots else None
        result = {"name": page["name"], "what": page["what"], "chromium": driver.capabilities.get("browserVersion")}
        url = page["url"] or lm_url()
        result.update(visit(driver, server, base + url, page, shot))
        if page.get("revisit"):   # same profile: what the service worker's cache and the Cache API save
            deadline = time.monotonic() + 60   # site/offline.mjs caches what the first visit missed
            while time.monotonic() < deadline and load_probe.poll(
                    driver, "return (globalThis.torchwebOffline || {}).state;") not in ("cached", "error", "unsupported"):
                time.sleep(0.25)
            result["offline_state"] = load_probe.poll(driver, "return globalThis.torchwebOffline || null;")
            result["second_visit"] = visit(driver, server, base + url, page)
        return result
    finally:
        run_page.quit_chrome(driver)


def measure_plain(server, base, pure=False):
    driver = run_page.chrome()
    try:
        server.take()
        load = round(os.getloadavg()[0], 1)
        probe = load_probe.measure_plain(driver, base, pure=pure)
        probe["loadavg_at_start"] = load
        probe["served_bytes"] = sum(server.take().values())
        probe["chromium"] = driver.capabilities.get("browserVersion")
        probe["chromedriver"] = driver.capabilities.get("chrome", {}).get("chromedriverVersion", "").split(" ")[0]
        return probe
    finally:
        run_page.quit_chrome(driver)


def summarize_plain(runs):
    """Median and min of each phase over the probe's runs (the machine is shared: one run is noisy)."""
    import statistics
    ok = [r for r in runs if r.get("status") == "DONE"]
    out = {}
    derived = {"first_result_from_navigation": lambda r: r["ends"]["first_matmul_readback"],
               # issue 23's goal: at most 0.5 s after Pyodide's own start
               "first_result_after_loadPyodide": lambda r: r["ends"]["first_matmul_readback"] - r["ends"]["loadPyodide"]}
    for name in load_probe.PHASES + tuple(derived):
        vals = [derived[name](r) if name in derived else r["phases"].get(name) for r in ok]
        vals = [v for v in vals if v is not None]   # (an older JSON's phase names)
        if vals:
            out[name] = {"median": round(statistics.median(vals), 3), "min": round(min(vals), 3)}
    compiles = [r["compile"]["seconds"] for r in ok if r.get("compile")]
    if compiles:   # measured after the run, not a phase: how much of the import is compiling
        out["(compile every torchweb .py again)"] = {"median": round(statistics.median(compiles), 3),
                                                     "min": round(min(compiles), 3)}
    return out


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"host": platform.node(), "platform": platform.platform(), "cpu": cpu,
            "cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


def mb(n):
    return f"{n / 1e6:.2f}" if n else "-"


def sec(x):
    return f"{x:.1f}" if isinstance(x, (int, float)) else "-"


def table(res):
    p = res["plain"]
    res.setdefault("plain_runs", [p])
    res.setdefault("plain_summary", summarize_plain(res["plain_runs"]))
    lines = [f"Chromium {p.get('chromium')}, adapter {res.get('adapter_name')}, {res['date']}, "
             f"{res['machine']['cpu']} ({res['machine']['cpus']} CPUs, load {res['machine']['loadavg_at_start']})",
             "", f"Wheel {res['wheel']['name']}: {res['wheel']['bytes']:,} bytes, {res['wheel']['files']} files "
             f"({res['wheel']['uncompressed_bytes']:,} bytes unpacked)"
             + ("; the pages load {name}: {bytes:,} bytes, {files} files ({uncompressed_bytes:,} bytes unpacked)"
                .format(**res["wheel"]["pages_wheel"]) if res["wheel"].get("pages_wheel") else ""), "",
             f"| plain Pyodide page: phase ({len(res['plain_runs'])} runs, load avg "
             f"{[r.get('loadavg_at_start') for r in res['plain_runs']]}) | median s | min s |", "|---|---:|---:|"]
    for name, v in res["plain_summary"].items():
        lines.append(f"| {name} | {v['median']:.2f} | {v['min']:.2f} |")
    lines += [f"| bytes served (MB) | {mb(p.get('served_bytes'))} | |", "",
              "| page | first GPU result (s from navigation) | page's own figure (s) | short run done (s) "
              "| served (MB, workers included) | Resource Timing (MB, main thread) | load avg | status |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in res["pages"]:
        rows = [(r["name"], r)] + ([(r["name"] + " (second visit)", r["second_visit"])] if "second_visit" in r else [])
        for name, v in rows:
            if v.get("skipped"):
                lines.append(f"| {name} | - | - | - | - | - | - | skipped: {v['skipped']} |")
                continue
            rt = v.get("resource_timing") or {}
            note = v["status"] + (f", weights from cache: {v.get('fromCache')}" if "fromCache" in v else "")
            lines.append(f"| {name} | {sec(v.get('first_result_s'))} | {sec(v.get('page_reported_s'))} | "
                         f"{sec(v.get('done_s'))} | {mb(v.get('served_bytes'))} | {mb(rt.get('transfer'))} | "
                         f"{v.get('loadavg_at_start', '-')} | {note} |")
    return "\n".join(lines)


def save(res, out):
    order = [p["name"] for p in PAGES]
    res["pages"].sort(key=lambda r: order.index(r["name"]) if r["name"] in order else len(order))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


def lm_summary(runs):
    """Per visit (cold, warm): median and min of the time to first token, of each phase, and of
    the first token as seen from outside (navigation to the token on the page, polled)."""
    import statistics
    out = {}
    for visit in ("cold", "warm"):
        got = [r[visit] for r in runs if r[visit].get("status") == "DONE" and r[visit].get("firstToken")]
        if not got:
            continue
        rows = {"first token (page's figure)": [g["firstToken"]["seconds"] for g in got],
                "first token, without downloading the weights": [g["firstToken"]["withoutDownload"] for g in got],
                "first token (polled from outside)": [g["first_result_s"] for g in got if g.get("first_result_s")]}
        for i, phase in enumerate(got[0]["firstToken"]["phases"]):
            rows[phase["name"]] = [g["firstToken"]["phases"][i]["seconds"] for g in got]
        again = [g["firstSecondsByGeneration"] for g in got if len(g.get("firstSecondsByGeneration") or ()) == 2]
        rows["(worker) prompt to first token, first generation"] = [a[0] for a in again]
        rows["(worker) prompt to first token, second generation (kernels compiled)"] = [a[1] for a in again]
        out[visit] = {name: {"median": round(statistics.median(v), 3), "min": round(min(v), 3)}
                      for name, v in rows.items() if v}
        out[visit]["weights from"] = sorted({g["firstToken"]["weightsFrom"] for g in got})
        # (a tokenizer phase with no "from": a page from before tokenizer.json went through the cache)
        out[visit]["tokenizer from"] = sorted({p.get("from") or "network" for g in got
                                               for p in g["firstToken"]["phases"] if p["key"] == "tokenizer"})
    return out


def lm_table(res):
    s = res["summary"]
    lines = [f"Chromium {res.get('chromium')}, adapter {res.get('adapter')}, {res['date']}, {res['machine']['cpu']} ({res['machine']['cpus']} CPUs, "
             f"load {res['machine']['loadavg_at_start']}), git {res['git']}, {len(res['runs'])} runs", "",
             "| phase | cold: median s | min s | warm: median s | min s |", "|---|---:|---:|---:|---:|"]
    for name in s.get("cold", s.get("warm", {})):
        if name in ("weights from", "tokenizer from"):
            continue
        c, w = s.get("cold", {}).get(name, {}), s.get("warm", {}).get(name, {})
        lines.append(f"| {name} | {sec2(c.get('median'))} | {sec2(c.get('min'))} | {sec2(w.get('median'))} | "
                     f"{sec2(w.get('min'))} |")
    for row in ("weights from", "tokenizer from"):
        cold, warm = (", ".join(s.get(visit, {}).get(row, [])) for visit in ("cold", "warm"))
        lines.append(f"| {row} | {cold} | | {warm} | |")
    return "\n".join(lines)


def sec2(x):
    return f"{x:.2f}" if isinstance(x, (int, float)) else "-"


def measure_lm(args):
    """--lm: the Complete page's time to first token, cold then warm, args.runs times."""
    out = args.out if args.out != OUT else LM_OUT
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "git": os.popen(f"git -C {REPO} rev-parse --short HEAD").read().strip(),
           "what": "time to first token on lm.html, test checkpoint (tests/browser/fixtures/lm_tiny), "
                   "cold = fresh profile, warm = second visit in the same profile", "runs": []}
    if not args.no_build:
        run_page.ensure_pyodide(SITE)
        wheel.publish(wheel.build())
        __import__("site_data").publish_lm_fixture(SITE)
    res["wheel"] = wheel_info()
    page = next(p for p in PAGES if p["name"] == "lm")
    site = load_probe.start(SITE)
    try:
        for i in range(max(1, args.runs)):
            r = measure_page(page, {"site": site}, None)
            res["runs"].append({"cold": {k: v for k, v in r.items() if k != "second_visit"},
                                "warm": r.get("second_visit", {"status": "MISSING"})})
            for visit in ("cold", "warm"):
                v = res["runs"][-1][visit]
                ft = v.get("firstToken") or {}
                print(f"[lm {i + 1} {visit}] {v.get('status')}: first token {ft.get('seconds')} s "
                      f"({ft.get('weightsFrom')}), polled {v.get('first_result_s')} s", flush=True)
            res["summary"] = lm_summary(res["runs"])
            save_lm(res, out)
    finally:
        site[0].shutdown()
    res["chromium"] = res["runs"][0]["cold"].get("chromium")
    res["adapter"] = res["runs"][0]["cold"].get("adapter")
    res["summary"] = lm_summary(res["runs"])
    save_lm(res, out)
    print(lm_table(res))
    bad = [(i, v) for i, r in enumerate(res["runs"]) for v in ("cold", "warm") if r[v].get("status") != "DONE"]
    if bad:
        print(f"not DONE: {bad}", file=sys.stderr)
        return 1
    return 0


def save_lm(res, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT, help=f"JSON file (default {os.path.relpath(OUT, REPO)})")
    ap.add_argument("--screenshots", nargs="?", const=SHOTS, default=None, metavar="DIR",
                    help=f"save one PNG per page (default DIR {os.path.relpath(SHOTS, REPO)})")
    ap.add_argument("--only", default="", help="comma-separated page names (plain = the probe only)")
    ap.add_argument("--no-build", action="store_true", help="use what site/ has already")
    ap.add_argument("--plain-runs", type=int, default=3, help="runs of the plain Pyodide probe (default 3)")
    ap.add_argument("--pure", action="store_true",
                    help="also run the probe on the pure wheel (sources compiled in the page), interleaved")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other pages of an existing --out file (to re-run some pages)")
    ap.add_argument("--table", metavar="JSON", help="print the tables of an earlier run's JSON, and exit")
    ap.add_argument("--lm", action="store_true", help="only the Complete page's time to first token, cold and warm "
                    f"(default --out {os.path.relpath(LM_OUT, REPO)})")
    ap.add_argument("--runs", type=int, default=3, help="--lm: fresh profiles, each visited twice (default 3)")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as f:
            got = json.load(f)
        print(lm_table(got) if "runs" in got else table(got))
        return 0
    if args.lm:
        return measure_lm(args)
    only = set(filter(None, args.only.split(",")))
    pages = [p for p in PAGES if not only or p["name"] in only]
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)

    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(), "git": os.popen(f"git -C {REPO} rev-parse --short HEAD").read().strip()}
    skip = {p.get("needs") for p in PAGES} - {p.get("needs") for p in pages}
    broken = {} if args.no_build else build(skip)
    res["build_failures"] = broken
    res["wheel"] = wheel_info()
    site = load_probe.start(SITE)
    repo = load_probe.start(REPO)
    servers = {"site": site, "repo": repo}
    try:
        res["plain_runs"], res["plain_pure_runs"] = [], []
        for _ in range(max(1, args.plain_runs)):   # (interleaved: both see the same machine load)
            res["plain_runs"].append(measure_plain(*site))
            if args.pure:
                res["plain_pure_runs"].append(measure_plain(*site, pure=True))
        res["plain_summary"] = summarize_plain(res["plain_runs"])
        if args.pure:
            res["plain_pure_summary"] = summarize_plain(res["plain_pure_runs"])
            print(f"[plain, pure wheel] {res['plain_pure_summary']}", flush=True)
        res["plain"] = res["plain_runs"][0]   # chromium, adapter, bytes: the same in every run
        res["chromium"] = res["plain"].get("chromium")
        a = res["plain"].get("adapter") or {}
        res["adapter"] = a
        res["adapter_name"] = " / ".join(str(v) for v in (a.get("vendor"), a.get("architecture"),
                                                          a.get("device"), a.get("description")) if v)
        print(f"[plain] {res['plain']['status']}: {res['plain'].get('phases')}", flush=True)
        res["pages"] = []
        if args.merge and os.path.exists(args.out):
            with open(args.out) as f:
                names = {p["name"] for p in pages}
                res["pages"] = [r for r in json.load(f).get("pages", []) if r["name"] not in names]
        for page in pages:
            path = os.path.join(SITE, page["file"])
            if not os.path.exists(path) or page.get("needs") in broken:
                why = (f"{os.path.relpath(path, REPO)} does not exist" if not os.path.exists(path)
                       else f"its build ({page['needs']}) failed")
                print(f"[{page['name']}] skipped: {why}", flush=True)
                res["pages"].append({"name": page["name"], "skipped": why})
                continue
            t = time.monotonic()
            try:
                r = measure_page(page, servers, args.screenshots)
            except Exception as e:   # a driver error on one page: record it, measure the rest
                r = {"name": page["name"], "status": "ERROR", "first_result_s": None, "done_s": None,
                     "error": f"{type(e).__name__}: {str(e)[:500]}"}
            print(f"[{page['name']}] {r['status']}: first result {r['first_result_s']} s, done {r['done_s']} s "
                  f"({time.monotonic() - t:.0f} s wall)", flush=True)
            res["pages"].append(r)
            save(res, args.out)   # after each page: a later failure keeps what was measured
    finally:
        site[0].shutdown()
        repo[0].shutdown()
    save(res, args.out)
    print(table(res))
    bad = [r["name"] for r in res["pages"] if not r.get("skipped") and r["status"] != "DONE"]
    plain_bad = any(r.get("status") != "DONE" for r in res["plain_runs"])
    if plain_bad or bad:
        print(f"not DONE: {['plain'] * plain_bad + bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
