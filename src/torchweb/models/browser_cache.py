"""The browser's Cache Storage (the Cache API) from Pyodide: downloaded checkpoint files are
kept there under their URL, so a second visit reads them without the network. Only called in
the page; any failure (no Cache API, a full quota) leaves the file uncached."""


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
