"""Downloading a checkpoint: urllib in CPython, the JS fetch API in Pyodide.

In Pyodide, pyodide.http.pyfetch is async. The sync form blocks on it through
pyodide.ffi.run_sync where the page can block (JSPI: pyodide.ffi.can_run_sync()), and otherwise
raises, naming the awaitable form.
"""

import sys

CHUNK = 1 << 20


def in_browser():
    return sys.platform == "emscripten"


class _Progress:
    """progress: True prints a percentage (to stderr) for downloads over 1 MiB, a callable is
    called as progress(bytes_done, bytes_total or None), False says nothing."""

    def __init__(self, progress, url):
        self.fn = progress if callable(progress) else None
        self.show = progress is True
        self.url = url
        self.last = -1

    def __call__(self, done, total):
        if self.fn is not None:
            self.fn(done, total)
        elif self.show and total and total > CHUNK:
            pct = done * 100 // total
            if pct != self.last and (pct % 10 == 0 or done == total):
                self.last = pct
                print(f"\rdownloading {self.url}: {pct}% of {total / 1e6:.1f} MB", end="\n" if done == total else "",
                      file=sys.stderr, flush=True)


def fetch_bytes(url, progress=True):
    """The bytes at url (blocking)."""
    if in_browser():
        from pyodide.ffi import can_run_sync, run_sync
        if not can_run_sync():
            raise RuntimeError(
                "torchweb.hub.load_state_dict_from_url: this page cannot block on a download "
                "(pyodide.ffi.can_run_sync() is False); use the awaitable form "
                "`await torchweb.hub.load_state_dict_from_url_async(url, ...)`")
        return run_sync(fetch_bytes_async(url, progress))
    import urllib.request
    report = _Progress(progress, url)
    req = urllib.request.Request(url, headers={"User-Agent": "torchweb"})
    with urllib.request.urlopen(req) as resp:
        total = resp.headers.get("Content-Length")
        total = int(total) if total and total.isdigit() else None
        parts, done = [], 0
        while True:
            chunk = resp.read(CHUNK)
            if not chunk:
                break
            parts.append(chunk)
            done += len(chunk)
            report(done, total)
    data = b"".join(parts)
    if total is not None and len(data) != total:
        raise RuntimeError(f"download of {url} truncated: {len(data)} of {total} bytes")
    return data


async def fetch_bytes_async(url, progress=True):
    """The bytes at url (awaitable; in CPython it runs urllib)."""
    if not in_browser():
        return fetch_bytes(url, progress)
    from pyodide.http import pyfetch
    report = _Progress(progress, url)
    resp = await pyfetch(url)
    if not resp.ok:
        raise RuntimeError(f"download of {url} failed: HTTP {resp.status} {resp.status_text}")
    total = resp.headers.get("content-length")
    total = int(total) if total and total.isdigit() else None
    body = getattr(resp.js_response, "body", None)
    if body is None or not progress:
        data = await resp.bytes()
        report(len(data), total or len(data))
        return data
    reader = body.getReader()
    parts, done = [], 0
    while True:
        chunk = await reader.read()
        if chunk.done:
            break
        piece = chunk.value.to_bytes()
        parts.append(piece)
        done += len(piece)
        report(done, total)
    return b"".join(parts)
