"""Serve a folder on http://127.0.0.1:PORT with the MIME types Pyodide needs.

WebGPU needs a secure context, which 127.0.0.1 is and file:// is not; .mjs must be served as
JavaScript and .wasm as application/wasm (for streaming compilation). Builds nothing.

    python scripts/serve.py [DIR] [--port 8000]
"""

import argparse
import functools
import http.server
import os
import threading

MIME = {
    ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
    ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
    ".py": "text/plain", ".html": "text/html",
}


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME}

    def end_headers(self):
        # Always fetch fresh files: a rebuilt wheel must not come from the browser's cache.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):  # quiet unless asked: test output stays readable
        if os.environ.get("TORCHWEB_SERVE_LOG"):
            super().log_message(fmt, *args)


def start(directory, port=0):
    """Serve directory in a daemon thread; returns (server, base URL). port 0 picks a free one."""
    handler = functools.partial(Handler, directory=os.fspath(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "site"))
    ap.add_argument("--port", type=int, default=8000)
    args = ap.parse_args()
    os.environ.setdefault("TORCHWEB_SERVE_LOG", "1")
    server, url = start(os.path.abspath(args.directory), args.port)
    print(f"serving {os.path.abspath(args.directory)} at {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
