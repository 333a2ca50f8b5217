"""Serve a folder on http://127.0.0.1:PORT with the MIME types Pyodide needs.

WebGPU needs a secure context, which 127.0.0.1 is and file:// is not; .mjs must be served as
JavaScript and .wasm as application/wasm (for streaming compilation). Builds nothing.
With csp (the command line's default), every response carries CSP below as a header, which
also binds the module workers (a page's <meta> CSP does not reach them); with on_report, the
browser's violation reports (POST /csp-report) are handed to it.

    python scripts/serve.py [DIR] [--port 8000] [--no-csp]
"""

import argparse
import functools
import http.server
import json
import os
import threading

# The site's Content-Security-Policy, also in each page's <meta http-equiv> (tests/test_site_csp.py
# checks they agree). Scripts only from this origin, no string eval: 'wasm-unsafe-eval' lets
# WebAssembly compile (Pyodide) and nothing else. connect-src https: lets a person's code fetch
# weights (the Playground's WEIGHTS_URL) and Pyodide fetch packages; fetched bytes never run as script.
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; connect-src 'self' https: blob:; worker-src 'self'; "
       "object-src 'none'; base-uri 'self'; form-action 'none'")
# PyScript evaluates strings (its core and its workers) and starts its worker from a blob:, so
# its two pages add 'unsafe-eval' and blob: workers, and data: for torchweb's runtime.mjs
# (PyScript's worker cannot hand it over as site/boot.mjs does): still no script from another
# origin and no inline script. JupyterLite (lite/) gets no header.
PYSCRIPT_CSP = (CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-eval' data:")
                .replace("worker-src 'self'", "worker-src 'self' blob:"))
REPORT_PATH = "/csp-report"


def policy_for(path, csp):
    """The CSP header for a request path when serving with csp (the site's): PyScript's files
    get PYSCRIPT_CSP, JupyterLite's none."""
    path = path.split("?", 1)[0]
    if path.startswith("/lite/"):
        return None
    if path.startswith(("/pyscript/", "/pyscript.", "/pyscript-", "/pyscript_")):
        return PYSCRIPT_CSP if csp == CSP else csp
    return csp

MIME = {
    ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
    ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
    ".py": "text/plain", ".html": "text/html",
}


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME}

    def __init__(self, *args, csp=None, on_report=None, **kw):
        self.csp, self.on_report = csp, on_report
        super().__init__(*args, **kw)

    def end_headers(self):
        # Always fetch fresh files: a rebuilt wheel must not come from the browser's cache.
        self.send_header("Cache-Control", "no-store")
        policy = policy_for(self.path, self.csp) if self.csp else None
        if policy:
            report = f"; report-uri {REPORT_PATH}" if self.on_report else ""
            self.send_header("Content-Security-Policy", policy + report + "; frame-ancestors 'self'")
            self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def do_POST(self):
        """Only the browser's CSP violation reports are accepted."""
        if self.path != REPORT_PATH or not self.on_report:
            self.send_error(405)
            return
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 1 << 16))
        try:
            self.on_report(json.loads(body).get("csp-report", {}))
        except ValueError:
            self.on_report({"unreadable": body[:200].decode("utf-8", "replace")})
        self.send_response(204)
        self.end_headers()

    def log_message(self, fmt, *args):  # quiet unless asked: test output stays readable
        if os.environ.get("TORCHWEB_SERVE_LOG"):
            super().log_message(fmt, *args)


def start(directory, port=0, csp=None, on_report=None):
    """Serve directory in a daemon thread; returns (server, base URL). port 0 picks a free one.
    csp: a Content-Security-Policy header for every response (CSP for the site's own pages);
    on_report(dict) gets each violation the browser reports."""
    handler = functools.partial(Handler, directory=os.fspath(directory), csp=csp, on_report=on_report)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "site"))
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--no-csp", action="store_true", help="send no Content-Security-Policy header")
    args = ap.parse_args()
    os.environ.setdefault("TORCHWEB_SERVE_LOG", "1")
    on_report = lambda r: print("CSP violation:", json.dumps(r), flush=True)  # noqa: E731
    server, url = start(os.path.abspath(args.directory), args.port,
                        None if args.no_csp else CSP, None if args.no_csp else on_report)
    print(f"serving {os.path.abspath(args.directory)} at {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
