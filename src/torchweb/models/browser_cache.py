"""The browser's Cache Storage (the Cache API) from Pyodide: downloaded checkpoint and tokenizer
files are kept there under their URL, so a second visit reads them without the network. Only
called in the page; any failure (no Cache API, a full quota) leaves the file uncached."""

from ..serialization.url_fetch import fetch_bytes_async, in_browser


async def fetch(url, cache_name=None, progress=None):
    """(bytes or None, "cache" or "network"): url's bytes from the named cache (in the page),
    else downloaded and then kept there; None where the server has no such file (HTTP 404).
    Outside the page, or with no cache_name, a plain download."""
    store = await open_cache(cache_name) if cache_name and in_browser() else None
    if store is not None:
        data = await get(store, url)
        if data is not None:
            if callable(progress):
                progress(len(data), len(data))
            return data, "cache"
    try:
        data = await fetch_bytes_async(url, progress)
    except Exception as e:   # urllib's HTTPError, or the browser's RuntimeError naming the status
        if "404" in str(e):
            return None, "network"
        raise
    if store is not None:
        await put(store, url, data)
    return data, "network"


async def open_cache(name):
    """The named cache, or None where the page has none."""
    import js   # deferred: optional dependency (Pyodide's JS bridge)
    caches = getattr(js, "caches", None)
    if not caches:
        return None
    try:
        return await caches.open(name)
    except Exception:
        return None


async def get(cache, url):
    """The bytes kept for url, or None."""
    hit = await cache.match(url)
    if not hit:                       # undefined (None) or null (jsnull, falsy)
        return None
    return (await hit.arrayBuffer()).to_bytes()


async def put(cache, url, data):
    import js   # deferred: optional dependency (Pyodide's JS bridge)
    try:
        body = js.Uint8Array.new(len(data))
        body.assign(data)
        await cache.put(url, js.Response.new(body))
    except Exception:
        pass
