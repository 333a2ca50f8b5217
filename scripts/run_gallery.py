"""Open every gallery page of site/ in headless Chromium with WebGPU, with short settings, and print
one line per page: adapter, seconds from navigation to the page's first GPU result, and what the
page computed (the matmul, the digits' accuracy, the search's best hit, the GPT's loss and
sample, the Complete page's tokens and time to first token, the playground's first output).
Exit status 1 if any page failed. `scripts/run.sh --headless` runs this; `scripts/run.sh
--headless PAGE` opens one page (scripts/run_page.py).

    python scripts/run_gallery.py [--only index,hello,train] [--no-build] [--timeout S]

The pages share one browser profile, as a visitor's tabs do: after the first page, Pyodide comes
from the site's service worker cache (site/sw.js).
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_page  # noqa: E402
import serve  # noqa: E402
import wheel  # noqa: E402

SITE = run_page.SITE
OUT = "document.getElementById('output')"
TEXT = f"({OUT} ? {OUT}.textContent : '')"

# name, url (short settings), data it needs, JS for: the first result seen, the adapter, the result line
PAGES = [
    dict(name="index", url="index.html?epochs=1&train=96", needs="digits",
         first="torchwebHome.firstResultSeconds > 0", adapter="torchwebHome.adapter",
         result="(h => `epoch ${h.epoch}: loss ${h.loss.toFixed(3)}, held-out accuracy ${(100 * h.accuracy).toFixed(1)}%`)"
                "(torchwebHome.history.at(-1))"),
    dict(name="hello", url="hello.html", needs=None,
         first=f"{TEXT}.includes('a @ b.T =')",
         adapter=f"({TEXT}.match(/adapter: (.*)/) || [])[1]",
         result=f"({TEXT}.match(/a @ b\\.T = (.*)/) || [])[1]"),
    dict(name="train", url="train.html?epochs=1&train=96", needs="digits",
         first="torchwebTrain.firstResultSeconds > 0", adapter="torchwebTrain.adapter",
         result="(h => `epoch ${h.epoch}: loss ${h.loss.toFixed(3)}, test accuracy ${(100 * h.accuracy).toFixed(1)}%`)"
                "(torchwebTrain.history.at(-1))"),
    dict(name="minilm", url="minilm.html?q=A%20man%20is%20eating%20pasta.", needs="minilm",
         first="torchwebMiniLM.firstResultSeconds > 0", adapter="torchwebMiniLM.adapter",
         result="(s => `\"${s.query}\" -> \"${s.top[0][0]}\" (${s.top[0][1].toFixed(3)})`)(torchwebMiniLM.searches[0])"),
    dict(name="gpt", url=("gpt.html?steps=6&batch=64&every=1&sampleEvery=0&length=24&lr=0.01"
                          "&layers=1&embd=32&heads=2&block=16"), needs=None,
         first="torchwebGPT.firstResultSeconds > 0", adapter="torchwebGPT.adapter",
         result="(g => `step ${g.history.at(-1).step}: loss ${g.history.at(-1).loss.toFixed(3)}` + "
                "(g.finalSample != null ? `, sample ${JSON.stringify((g.prompt || '') + g.finalSample)}` : ''))"
                "(torchwebGPT)"),
    dict(name="lm", url="lm.html?model=data/lm_tiny/&greedy=1&n=8&prompt=The%20quick%20brown",
         needs="lm",   # (the tests' tiny GPT-2 checkpoint and tokenizer, tests/browser/fixtures/lm_tiny)
         first="torchwebLM.firstToken != null", adapter="torchwebLM.adapter",
         # (a random tiny model: its tokens are bytes that decode to no text, so the count is shown)
         result="(s => `${s.generations.at(-1).n} tokens, first token ${s.firstToken.seconds.toFixed(1)} s "
                "from page open`)(torchwebLM)"),
    dict(name="playground", url="playground.html?autorun=1", needs=None,
         first="torchwebPlayground.firstOutputSeconds > 0", adapter="torchwebPlayground.adapter",
         result=f"{TEXT}.trim().split('\\n')[0]"),
]


def js(expr):
    return f"(() => {{ try {{ return ({expr}); }} catch (e) {{ return null; }} }})()"


def publish(pages, build=True):
    """The wheel and each page's data in site/; returns {page name: why it cannot run}."""
    run_page.ensure_pyodide(SITE)
    if build:
        wheel.publish(wheel.build())
    broken = {}
    needs = {p["needs"] for p in pages} - {None}
    for need in sorted(needs):
        try:
            if need == "digits":
                __import__("site_data").publish_digits(SITE)
            elif need == "minilm":
                __import__("site_minilm").publish(SITE)
            elif need == "lm":
                __import__("site_data").publish_lm_fixture(SITE)
        except (Exception, SystemExit) as e:   # no network and no local copy: say so
            for p in pages:
                if p["needs"] == need:
                    broken[p["name"]] = f"its data ({need}) could not be published: {type(e).__name__}: {e}"
    return broken


def visit(driver, base, page, timeout):
    """Open the page and wait for its end: dict(status, first_s, adapter, result, tail)."""
    probe = ("return [performance.now() / 1000, " + js(page["first"]) + ", "
             + js(f"{OUT}.dataset.status") + "];")
    r = {"status": "TIMEOUT", "first_s": None}
    try:
        driver.get(base + page["url"])
    except Exception:   # the renderer was busy past the driver's timeout: the page goes on loading
        pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            now, first, status = driver.execute_script(probe)
        except Exception:
            time.sleep(0.2)
            continue
        if first and r["first_s"] is None:
            r["first_s"] = now
        if status in ("DONE", "ERROR"):
            r["status"] = status
            break
        time.sleep(0.1)
    r["adapter"] = driver.execute_script("return " + js(page["adapter"]) + ";")
    r["result"] = driver.execute_script("return " + js(page["result"]) + ";")
    if r["status"] != "DONE":
        r["tail"] = (driver.execute_script("return " + js(TEXT) + ";") or "")[-600:]
    return r


def short_adapter(text):
    """"vendor=google, architecture=swiftshader, ..." (the Hello page's log line) or the
    playground's adapter_info() dict as the other pages show it: "google / swiftshader"."""
    if isinstance(text, dict):   # the playground's adapter_info()
        return " / ".join(str(text[k]) for k in ("vendor", "architecture", "device") if text.get(k))
    if text and "vendor=" in text:
        kv = dict(part.split("=", 1) for part in text.split(", ") if "=" in part)
        return " / ".join(kv[k] for k in ("vendor", "architecture", "device") if kv.get(k))
    return text


def line(name, r):
    r = dict(r, adapter=short_adapter(r.get("adapter")))
    first = f"{r['first_s']:.1f} s" if r.get("first_s") is not None else "-"
    return (f"{name:<11} {r['status']:<7} adapter: {r.get('adapter') or '-'} | first result: {first} | "
            f"{r.get('result') or r.get('why') or '-'}")


def run(pages=PAGES, build=True, timeout=300, port=0, out=None):
    """Open each page; print its line (to out, default stdout); returns {name: result dict}."""
    out = out or sys.stdout
    broken = publish(pages, build)
    server, base = serve.start(SITE, port, csp=serve.CSP)
    driver = run_page.chrome()
    results = {}
    try:
        for page in pages:
            if page["name"] in broken:
                r = {"status": "ERROR", "why": broken[page["name"]]}
            else:
                r = visit(driver, base, page, page.get("timeout", timeout))
            results[page["name"]] = r
            print(line(page["name"], r), file=out, flush=True)
            if r.get("tail"):
                print("    " + r["tail"].strip().replace("\n", "\n    "), file=out, flush=True)
    finally:
        run_page.quit_chrome(driver)
        server.shutdown()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated page names: " + ",".join(p["name"] for p in PAGES))
    ap.add_argument("--no-build", action="store_true", help="use the wheel already in site/wheels/")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per page")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    unknown = only - {p["name"] for p in PAGES}
    if unknown:
        ap.error(f"unknown pages {sorted(unknown)}")
    pages = [p for p in PAGES if not only or p["name"] in only]   # (PAGES read now: tests swap it)
    results = run(pages, build=not args.no_build, timeout=args.timeout, port=args.port)
    failed = [n for n, r in results.items() if r["status"] != "DONE"]
    print(f"{len(results) - len(failed)} of {len(results)} pages DONE" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
