"""The browser driver: Pyodide's FFI to src/torchweb/_js/runtime.mjs, which holds the GPU objects.

Same interface as driver_native.NativeDriver. Each flush is one JS call (execute) that reads the
command words and the upload blob in place through memoryview proxies, so no bytes are copied
on the Python side. Readback is a JS promise of the mapped bytes, copied into a bytearray:
awaited by read_async, or blocked on with pyodide.ffi.run_sync (JSPI) by read, where the page
allows it (can_run_sync()).
"""

import base64
from importlib import resources
from .errors import BufferOutOfMemory, device_lost
from .runtime import _runtime, set_runtime_driver

_MODULE = [None]   # the imported runtime.mjs, shared by every driver in this interpreter


def _ffi():
    import pyodide.ffi  # only in Pyodide; imported late so CPython can import this file
    return pyodide.ffi


def _import_promise():
    """A JS promise of the runtime.mjs module. A page that forbids string eval and data: scripts
    (a Content-Security-Policy without 'unsafe-eval') imports the wheel's runtime.mjs itself from
    its own origin and sets globalThis.torchwebRuntimeModule to that import's promise
    (site/boot.mjs does); elsewhere it is imported from a data: URL (no server needed)."""
    import js
    given = getattr(js, "torchwebRuntimeModule", None)
    if given:
        return js.Promise.resolve(given)
    from pyodide.code import run_js
    src = (resources.files("torchweb") / "_js" / "runtime.mjs").read_bytes()
    url = "data:text/javascript;base64," + base64.b64encode(src).decode("ascii")
    return run_js("u => import(u)")(url)


def can_block():
    return bool(_ffi().can_run_sync())


def _check_can_block(what):
    if not _ffi().can_run_sync():
        raise RuntimeError(
            f"torchweb: {what} must wait for the GPU, and this page cannot block on it "
            f"(pyodide.ffi.can_run_sync() is False: plain runPython, or a browser without JSPI). "
            f"Run `await torchweb.webgpu.init_async()` once before using the GPU, and use the "
            f"awaitable forms (`await t.tolist_async()`, `await t.item_async()`)")


def _js_error(e, late=True):
    """A RuntimeError with the JS message of a JsException (the JS stack is noise here); an
    out-of-memory is BufferOutOfMemory (a torchweb.OutOfMemoryError), `late` where a flush's
    error scope reported it at a readback, after the flush ran."""
    msg = getattr(e, "message", None) or str(e)
    if msg.startswith(_OOM):   # runtime.mjs: "out of memory: BYTES: the device's message"
        nbytes, _, detail = msg[len(_OOM):].partition(": ")
        return BufferOutOfMemory(int(nbytes), detail + (" (reported at this readback: values "
                                 "computed since that allocation are undefined)" if late else ""))
    return RuntimeError(f"torchweb (WebGPU): {msg}")


_OOM = "out of memory: "


def _flat(ranges):
    """(id, offset, nbytes) triples as read()'s arguments: numbers cross the FFI without proxies."""
    return [x for r in ranges for x in r]


class BrowserDriver:
    name = "browser"
    on_lost = None   # the runtime's lose(reason), called when the device is found lost
    on_given_up = None   # the runtime's _given_up(ids, error): a flush's buffers lost to out of memory

    def __init__(self, module, init_result):
        self._mod = module
        r = init_result.to_py()
        self.adapter_info = dict(r["info"])
        self.limits = dict(r["limits"])
        self.features = set(r["features"])

    # -- start-up ---------------------------------------------------------------------------
    @classmethod
    def create_sync(cls):
        _check_can_block("starting WebGPU")
        run_sync = _ffi().run_sync
        try:
            if _MODULE[0] is None:
                _MODULE[0] = run_sync(_import_promise())
            return cls(_MODULE[0], run_sync(_MODULE[0].init()))
        except _ffi().JsException as e:
            raise _js_error(e) from None

    @classmethod
    async def create_async(cls):
        try:
            if _MODULE[0] is None:
                _MODULE[0] = await _import_promise()
            return cls(_MODULE[0], await _MODULE[0].init())
        except _ffi().JsException as e:
            raise _js_error(e) from None

    def limit(self, name):
        return self.limits[name]

    # -- set-up calls -----------------------------------------------------------------------
    def create_pipeline(self, pipeline_id, code, binding_kinds):
        """binding_kinds: 'uniform' | 'read' | 'write' per binding, in order. Raises on invalid
        WGSL where the page can block; elsewhere a bad kernel shows up at the next readback."""
        kinds = ",".join(binding_kinds)   # a str crosses the FFI as a JS string: no proxy
        ffi = _ffi()
        if ffi.can_run_sync():
            try:
                ffi.run_sync(self._mod.createPipeline(pipeline_id, code, kinds, True))
            except ffi.JsException as e:
                raise self._error(e) from None
        else:
            self._mod.createPipeline(pipeline_id, code, kinds, False)

    # -- the command stream -----------------------------------------------------------------
    def execute(self, words, blob):
        """words: array('I'); blob: bytearray. JS reads both in place (getBuffer), then releases."""
        ffi = _ffi()
        w = ffi.create_proxy(memoryview(words))
        b = ffi.create_proxy(memoryview(blob))
        try:
            self._mod.execute(w, b)
        except ffi.JsException as e:
            raise self._error(e) from None
        finally:
            w.destroy()
            b.destroy()

    def create_now(self, bid, nbytes):
        """Make storage buffer bid now, in its own out-of-memory error scope, waiting for the
        scope's answer (JSPI): True, or BufferOutOfMemory; False where the page cannot block
        (the buffer is then made at the flush, and an out-of-memory found at the next readback)."""
        ffi = _ffi()
        if not ffi.can_run_sync():
            return False
        try:
            ffi.run_sync(self._mod.createNow(bid, nbytes))
        except ffi.JsException as e:
            raise self._error(e, late=False) from None
        return True

    # -- readback ---------------------------------------------------------------------------
    def read(self, buffer_id, offset, nbytes):
        """Blocking readback (JSPI) of nbytes at offset (both multiples of 4), as a bytearray."""
        return self.read_many(((buffer_id, offset, nbytes),))[0]

    async def read_async(self, buffer_id, offset, nbytes):
        return (await self.read_many_async(((buffer_id, offset, nbytes),)))[0]

    def read_follows(self):
        """The next flush is followed by a read (the runtime's hint): runtime.mjs leaves that
        flush's last encoder open and encodes the read's copy into it."""
        self._mod.readFollows()

    def read_many(self, ranges):
        """(buffer_id, offset, nbytes) ranges read back in one GPU round trip (one submit, one
        map), as a bytearray each; JS hands back the mapped bytes, copied once into Python's."""
        _check_can_block("reading a tensor")
        ffi = _ffi()
        try:
            view = ffi.run_sync(self._mod.read(*_flat(ranges)))
        except ffi.JsException as e:
            raise self._error(e) from None
        return self._take(view, ranges)

    async def read_many_async(self, ranges):
        ffi = _ffi()
        try:
            view = await self._mod.read(*_flat(ranges))
        except ffi.JsException as e:
            raise self._error(e) from None
        return self._take(view, ranges)

    def _take(self, view, ranges):
        """Copy read()'s mapped view into a bytearray (the one copy), let JS unmap it, and split
        it by range: the first range keeps that bytearray (cut to size), the others get copies."""
        try:
            out = bytearray(view.byteLength)
            view.assign_to(out)
        finally:
            self._mod.readDone(view)
        first = ranges[0][2]
        rest, at = [], first
        for _, _, n in ranges[1:]:
            rest.append(out[at:at + n])
            at += n
        del out[first:]
        return [out, *rest]

    def wait(self):
        """Block until the GPU has finished everything submitted (JSPI)."""
        _check_can_block("waiting for the GPU")
        ffi = _ffi()
        try:
            ffi.run_sync(self._mod.sync())
        except ffi.JsException as e:
            raise self._error(e) from None

    async def wait_async(self):
        ffi = _ffi()
        try:
            await self._mod.sync()
        except ffi.JsException as e:
            raise self._error(e) from None

    def can_block(self):
        return can_block()

    def _error(self, e, late=True):
        """The exception for a JsException of a call: DeviceLostError if the device is lost
        (runtime.mjs notes device.lost's reason), else a RuntimeError with the JS message."""
        try:
            lost = self._mod.deviceState().lost
        except Exception:   # (the module itself failed: report the first error)
            lost = None
        if isinstance(lost, str):
            return device_lost(self, lost)
        err = _js_error(e, late)
        if late and isinstance(err, BufferOutOfMemory) and self.on_given_up is not None:
            self.on_given_up(list(self._mod.takeGivenUp().to_py()), err)   # the runtime marks their tensors
        return err

    # -- device loss ------------------------------------------------------------------------
    def destroy_device(self):
        """device.destroy() in the page: what a lost device looks like, for tests
        (torchweb.webgpu._destroy_device)."""
        self._mod.destroyDevice()

    def close(self):
        """Drop this device and every GPU object of it in runtime.mjs (lost, or reset); the
        next init() there requests a new one."""
        self._mod.release()

    # -- diagnostics ------------------------------------------------------------------------
    def device_state(self):
        """{'errors': [uncaptured device errors], 'lost': None or the device-lost message}."""
        s = self._mod.deviceState().to_py()
        lost = s.get("lost")
        return {"errors": list(s["errors"]), "lost": lost if isinstance(lost, str) else None}

    def take_errors(self):
        return list(self._mod.takeErrors().to_py())

    def stats(self):
        return dict(self._mod.stats().to_py())

    def gpu_timing(self, on):
        """Benchmarks: sum the GPU time of compute passes into stats()['gpuPassMs'] (timestamp
        queries); False where the adapter has no 'timestamp-query'."""
        return bool(self._mod.gpuTiming(bool(on)))


async def init_async():
    """Start WebGPU in the browser without blocking and make it torchweb's driver.

    Needed once where the page cannot block (can_run_sync() False); harmless elsewhere.
    Returns the adapter info (vendor, architecture, device, description, ...)."""
    rt = _runtime[0]
    if rt is not None and not rt.closed:
        return dict(rt.driver.adapter_info)
    driver = await BrowserDriver.create_async()
    set_runtime_driver(driver)
    return dict(driver.adapter_info)
