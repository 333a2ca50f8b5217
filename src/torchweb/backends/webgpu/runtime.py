"""The WebGPU runtime: one per process, shared by both drivers.

It owns the buffer pool, the pipeline cache and the command stream. Ops record dispatches
here; nothing reaches the driver until a flush (on readback, past a size threshold, or on
torchweb.webgpu.synchronize()), and then in one call.
"""

import os
import struct
import sys
import weakref
from array import array
from itertools import chain, repeat
from time import perf_counter

from ... import _dtype, _errors
from .. import pending
from ..limits import BindingTooLarge
from . import commands, unwritten
from .errors import BufferOutOfMemory, DeviceErrors, DeviceLostError, format_size
from .feed import Feed
from .pool import BufferPool

PARAMS_BUFFER_ID = 1          # the uniform buffer holding every dispatch's parameters
UNIFORM_ALIGN = 256           # minUniformBufferOffsetAlignment
_ZEROS = bytes(UNIFORM_ALIGN)
FLUSH_DISPATCHES = 1024       # flush after this many recorded dispatches...
FLUSH_BLOB_BYTES = 64 << 20   # ...or this many bytes of pending uploads...
FLUSH_AFTER_S = 0.001         # ...or once recording has gone on this long: the GPU works meanwhile
FLUSH_WORK_BYTES = 512 << 20  # ...or once the recorded kernels' work reaches this many bytes
CREATE_NOW_BYTES = 16 << 20   # buffers this big are made at the op, not at the flush (_create_now)
IDLE_START_BYTES = 16 << 20   # ...or at once, for a kernel this big when the GPU is idle,
# ...or when the GPU is about to run dry and enough work is queued (feed.py)
# Work: the bytes a kernel binds (or what it says, e.g. a matmul's flops / 16). Big kernels go
# to the GPU early, so that it runs them while Python records the next calls; a flush costs
# ~50-100 us of CPU on an H100's host (bench/flush_policy.py), as long as ~150-300 MB of traffic
# there, so work is batched up to a few of those.
REUSE_PARAMS = True           # a flush whose uniforms the buffer already holds skips their
# upload (each upload costs ~10 us of wgpu-native on an H100's host, and more in its submit)...
SHARE_PARAMS = None           # ...and identical uniforms of a flush share one slot; None: where
# the driver gains from it (native: a loop of one op binds one slot, set once a pass). In
# Chromium on SwiftShader, shared slots made a 200-op eager chain's recording ~2x slower
# (median 35-38 against 19-23 us an op, bench/browser/run.py --only chain200), so not there.
# Neither while torch.compile records: replay hooks patch a dispatch's own slot.


class Runtime:
    lost = None   # once the device is lost: what WebGPU said (then the class is LostRuntime)

    def __init__(self, driver):
        self.driver = driver
        driver.on_lost = self.lose    # a driver that sees the device gone calls it (lose())
        self.stream = commands.CommandStream()
        self.params = bytearray()
        self._params_capacity = 0
        self._param_slots = {}        # params bytes -> (offset in self.params, size bound) (this flush)
        self._params_held = b""       # what the params buffer holds from offset 0 (REUSE_PARAMS)
        self.share_params = (SHARE_PARAMS if SHARE_PARAMS is not None
                             else getattr(driver, "name", "") == "native")
        self._next_id = 2
        self._pipelines = {}
        self.max_binding = driver.limit("max-storage-buffer-binding-size")
        self.max_buffer = driver.limit("max-buffer-size")
        self.max_workgroups = driver.limit("max-compute-workgroups-per-dimension")
        self.big = weakref.WeakSet()   # live storages past the binding limit (storage.py)
        self.set_binding_limit(self.max_binding)
        self._window_ids = {}
        self.windows = {}   # window id -> (buffer id, byte offset): bindings of part of a buffer (windows.py)
        self.features = set(driver.features)
        if os.environ.get("TORCHWEB_NO_SHADER_F16"):   # test the path of adapters without it
            self.features.discard("shader-f16")
        # Without 'shader-f16' (the browser's SwiftShader), float16 is held in f32 words, each
        # rounded to half precision when a kernel stores it (kernels/wgsl.py store): every
        # kernel then runs unchanged, at twice the memory. Decided once, with the adapter.
        _dtype.float16.gpu_storage = "f16" if "shader-f16" in self.features else "f32"
        info = getattr(driver, "adapter_info", {}) or {}
        # a CPU pretending to be a GPU (SwiftShader, lavapipe): kernels pick CPU-friendly shapes
        self.software_adapter = bool(info.get("is_fallback_adapter") or info.get("adapter_type") in ("CPU", "fallback")
                                     or info.get("architecture") == "swiftshader")
        # SwiftShader runs a workgroup's invocations as SIMD lanes, switching at each barrier:
        # reductions and softmax avoid barriers there (kernels/reduction.py few_barriers)
        self.barriers_costly = any("swiftshader" in str(v).lower() for v in info.values())
        self.pool = BufferPool(self._create_buffer, self.stream_destroy)
        driver.reclaim = self._reclaim   # (an out-of-memory creation frees the pool, retries once)
        driver.on_given_up = self._given_up   # (the page: a flush's buffers given up, found late)
        self.errors = DeviceErrors(self)
        self.closed = False
        self.pipeline_kinds = {}   # pipeline id -> its binding kinds (capture.py: what is written)
        self.capture = None        # a capture.Recorder while torchweb.compile records a call
        self.flushes = 0
        self.unwritten = {}   # buffer id -> the out of memory that left it unwritten (unwritten.py)
        self._freed = []      # while there are such: (stream word index, id) of buffers freed
        # free() only gives the buffer back: not closed, not recording (capture.py clears it),
        # nothing unwritten (cleared where a mark is made); free()'s full path sets it again
        self.plain_free = True
        self.last_dispatch = (0, 0)   # (flush count, uniform offset) of the last dispatch, while capturing
        self._stream_deadline = 0.0   # when the time rule flushes the unflushed stream (its first dispatch + FLUSH_AFTER_S)
        self._stream_work = 0         # work (bytes) of the unflushed stream's dispatches
        self._idle_start = IDLE_START_BYTES   # while nothing was submitted since the last wait or
        # readback: a kernel this big is flushed at once (1 << 62 once the GPU is busy)
        self.feed = Feed(IDLE_START_BYTES)
        self._set_feed(self.feed.due())

    # -- buffers ---------------------------------------------------------------------------
    def _create_buffer(self, nbytes):
        bid = self._next_id
        self._next_id += 1
        if nbytes >= CREATE_NOW_BYTES and self.capture is None and self._create_now(bid, nbytes):
            return bid
        self.stream.create(bid, nbytes, commands.USAGE_STORAGE)
        return bid

    def _create_now(self, bid, nbytes):
        """Make a big buffer at once, at the op that needs it, so that running out of memory
        raises there (as in PyTorch) rather than at a later flush: False where the driver cannot
        (a page that cannot block), and the buffer goes into the stream as usual. On out of
        memory: the recorded work is flushed, the pool's free buffers destroyed, and it is
        tried once more."""
        create = getattr(self.driver, "create_now", None)
        if create is None:
            return False
        try:
            return create(bid, nbytes)
        except BufferOutOfMemory:
            pass
        self.flush()            # (recorded work may bind the pool's free buffers: it goes first)
        self.pool.trim(0)
        self.pool.forget_working_set()
        self.flush()
        try:
            return create(bid, nbytes)
        except BufferOutOfMemory as e:
            raise self.out_of_memory(nbytes, f"the device reported: {e.detail.strip()} (after the "
                                             f"pool's free buffers were given back and it was "
                                             f"tried again)") from None

    def stream_destroy(self, bid):
        self.stream.destroy(bid)

    def alloc(self, nbytes, what="tensor"):
        """A buffer of at least nbytes (4-aligned), from the pool: (id, size). Past the
        binding limit it is made (copies, uploads and readbacks take it whole; kernels bind
        windows of it, windows.py); past maxBufferSize it is refused."""
        nbytes = max(4, (nbytes + 3) & ~3)
        if nbytes > self.max_buffer:
            raise self.out_of_memory(nbytes, f"the adapter's largest buffer is "
                                             f"{format_size(self.max_buffer)} (maxBufferSize)")
        return self.take(nbytes)

    def take(self, nbytes):
        """alloc without its checks: a storage's buffer (its size checked when it was made, the
        pool's sizes 4-aligned). (storage.py's _allocate has it inline: change both.)"""
        bid, size = self.pool.acquire(nbytes)
        if self.capture is not None:
            self.capture.on_acquire(bid)
        return bid, size

    def _reclaim(self, keep):
        """The driver failed to create a buffer: the pool's free buffers not in keep (ids the
        rest of the flush uses), taken out of the pool for the driver to destroy at once."""
        self.pool.forget_working_set()
        return self.pool.drain(keep)

    def out_of_memory(self, nbytes, why):
        """torchweb.OutOfMemoryError in the shape of PyTorch's CUDA message, with the sizes."""
        p = self.pool
        return _errors.OutOfMemoryError(
            f"WebGPU out of memory. Tried to allocate {format_size(nbytes)}: {why}. "
            f"Of the memory in use, {format_size(p.live_bytes)} is allocated by torchweb and "
            f"{format_size(p.free_bytes)} is reserved by torchweb but unallocated. Free tensors "
            f"you no longer need or use smaller batches; torch.webgpu.empty_cache() gives the "
            f"pool's free buffers back")

    def free(self, bid, size):
        if self.plain_free:   # (one test on every storage's death)
            self.pool.release(bid, size)
        elif not self.closed:
            if self.capture is not None:
                self.capture.on_release(bid)
            if self.unwritten:   # (the mark goes where the stream is now: unwritten.spread)
                self._freed.append((len(self.stream.words), bid))
            self.pool.release(bid, size)
            self.plain_free = self.capture is None and not self.unwritten

    def upload(self, bid, offset, data):
        pad = (-len(data)) % 4  # writeBuffer sizes must be 4-aligned (odd-length float16 data)
        if pad:
            data = bytes(data) + b"\0" * pad
        self.stream.write(bid, offset, data)
        if self.capture is not None:
            self.capture.on_upload(bid)
        if len(self.stream.blob) > FLUSH_BLOB_BYTES:
            self.flush()

    def copy(self, src, src_off, dst, dst_off, nbytes):
        self.stream.copy(src, src_off, dst, dst_off, nbytes)

    # -- kernels ---------------------------------------------------------------------------
    def pipeline(self, key, make_code, binding_kinds):
        """The pipeline id for a kernel structure, compiling it the first time."""
        pid = self._pipelines.get(key)
        if pid is None:
            pid = len(self._pipelines) + 1
            code = make_code()
            try:
                self.driver.create_pipeline(pid, code, list(binding_kinds))
            except DeviceLostError:
                raise
            except Exception as e:  # a bug of ours: show the kernel that failed
                raise RuntimeError(f"torchweb: WGSL kernel failed to compile: {e}\n{code}") from None
            self._pipelines[key] = pid
            self.pipeline_kinds[pid] = list(binding_kinds)
        return pid

    def dispatch(self, pipeline_id, grid, buffers, params_words, work=0):
        """Record one dispatch. buffers: [(id, nbytes)] bound whole after the params uniform.
        work: the kernel's cost in bytes of traffic, if more than the bytes it binds."""
        ids, sizes = zip(*buffers)
        # (each bound whole: id, offset 0, size; written without a Python loop)
        self.record((commands.DISPATCH, pipeline_id, *grid, len(ids) + 1, PARAMS_BUFFER_ID), params_words,
                    tuple(chain.from_iterable(zip(ids, _OFFSET_ZERO, sizes))), work)

    def record(self, head, params_words, rows, work=0):
        """dispatch() from the parts of its DISPATCH row, for the kernels that keep its head
        with their plans: head = dispatch_head(pipeline id, grid, number of buffers), rows =
        (id, 0, nbytes) for each buffer, flat. (Every kernel of every op comes here.)"""
        try:
            slot = self._param_slots.get(params_words) or self._add_params(params_words)
        except TypeError:   # (a bytearray: not hashable, not shared)
            slot = self._add_params(params_words)
        bound = sum(rows[2::3])
        if bound > self.max_binding:   # (rare: refused before the row is written)
            self._check_bindings(head[1], rows[2::3])
        stream = self.stream
        words = stream.words
        words.extend(head + slot)
        words.extend(rows)
        n = stream.dispatches = stream.dispatches + 1
        if bound > work:
            work = bound
        total = self._stream_work = self._stream_work + work
        # the flush rules' cheap bounds in one test (_flush_bytes: the least work a rule flushes
        # at; the deadline 0 until the stream's first dispatch, and while torch.compile records),
        # the rules in full past them
        if total >= self._flush_bytes or n >= FLUSH_DISPATCHES or perf_counter() > self._stream_deadline:
            self._flush_rules(n, total, work, slot[0])

    def _flush_rules(self, n, total, work, params_offset):
        """Flush if a rule says so, for a dispatch past record()'s cheap bounds."""
        if self.capture is not None:
            self.last_dispatch = (self.flushes, params_offset)
            # (only the count rule while torch.compile records: two recordings must split alike)
            if n >= FLUSH_DISPATCHES:
                self.flush()
            return
        if not self._stream_deadline:   # (the stream's first dispatch: the time rule's clock starts)
            self._stream_deadline = perf_counter() + FLUSH_AFTER_S
        if (n >= FLUSH_DISPATCHES or work >= self._idle_start or perf_counter() > self._stream_deadline
                or total >= self._feed_bytes_min and (total >= FLUSH_WORK_BYTES or perf_counter() >= self._feed_at)):
            self.flush()

    def _add_params(self, params_words):
        """A dispatch's uniform words appended to this flush's params (shared by the dispatches
        that pass the same bytes): (their offset, the size bound)."""
        params = self.params
        off = len(params)
        params += params_words
        pad = (-len(params)) % UNIFORM_ALIGN
        if pad:
            params += _ZEROS[:pad]
        slot = (off, max(16, (len(params_words) + 15) & ~15))
        if self.share_params and self.capture is None and type(params_words) is bytes:
            self._param_slots[params_words] = slot
        return slot

    def _set_feed(self, due):
        """The feed's next (bytes, time) to flush at; _flush_bytes: the least work a rule flushes
        at (the idle rule's bound is a kernel's own work: the stream's is past it too)."""
        self._feed_bytes, self._feed_at = due
        self._feed_bytes_min = min(due[0], FLUSH_WORK_BYTES)   # (the work and feed rules')
        self._flush_bytes = min(self._feed_bytes_min, self._idle_start)

    def set_binding_limit(self, nbytes):
        """Bind at most nbytes of a buffer (the adapter's maxStorageBufferBindingSize; tests
        lower it to reach the split paths with small tensors). Outputs past it are not fused
        (lazy/record.py): the eager kernels split their work (windows.py)."""
        self.max_binding = nbytes
        self.big_numel = min(1 << 24, nbytes // 4)   # storages past this many elements check sizes
        self.defer_numel = 0 if self.big else self.max_fused_numel()

    def max_fused_numel(self):
        """The largest output a fused kernel writes (lazy/record.py checks larger ones, and
        every one while a storage past the binding limit lives: set to 0 then)."""
        return min(self.max_workgroups << 8, self.max_binding // 4)

    def add_big(self, storage):
        """A storage past the binding limit: fused kernels (which bind whole buffers) do not
        read it while it lives (lazy/record.py)."""
        self.big.add(storage)
        self.defer_numel = 0

    def _check_bindings(self, pipeline_id, sizes):
        """Raise BindingTooLarge where one binding passes maxStorageBufferBindingSize (kernels
        that split their work catch it, windows.py; others refuse the op with it)."""
        size = max(sizes)
        if size > self.max_binding:
            key = next((k for k, p in self._pipelines.items() if p == pipeline_id), "?")
            name = " ".join(str(k) for k in key[:2]) if isinstance(key, tuple) else str(key)
            raise BindingTooLarge(
                f"torchweb: kernel {name!r} would bind {size} bytes of one tensor, more than "
                f"this WebGPU adapter's maxStorageBufferBindingSize ({self.max_binding} bytes), "
                f"and this op is not split for tensors past that limit", size, self.max_binding)

    def window(self, buffer_id, offset):
        """The id that binds buffer_id from byte offset on (a multiple of 256,
        minStorageBufferOffsetAlignment): translated into (buffer_id, offset + ...) rows at
        the flush. (windows.py's views; ids reused within a flush.)"""
        key = (buffer_id, offset)
        wid = self._window_ids.get(key)
        if wid is None:
            if self.capture is not None:
                self.capture.refuse("it binds a window of a tensor past the binding limit")
            wid = WINDOW_IDS + len(self.windows)
            self._window_ids[key] = wid
            self.windows[wid] = key
        return wid

    def _translate_windows(self, words):
        """The stream's rows with window ids bound as (buffer id, offset) windows."""
        out = words[:]
        windows = self.windows
        i, n = 0, len(out)
        while i < n:
            if out[i] == commands.DISPATCH:
                for j in range(i + 6, i + 6 + 3 * out[i + 5], 3):
                    w = windows.get(out[j])
                    if w is not None:
                        out[j], out[j + 1] = w[0], out[j + 1] + w[1]
            i += commands.row_length(out, i)
        self.windows = {}
        self._window_ids = {}
        return out

    def grid(self, workgroups):
        """Fold a 1-D workgroup count into (x, y, 1) within maxComputeWorkgroupsPerDimension.
        Kernels rebuild the linear index as wid.y * nwg.x + wid.x and skip the excess."""
        if workgroups <= self.max_workgroups:
            return (max(workgroups, 1), 1, 1)
        y = -(-workgroups // self.max_workgroups)
        x = -(-workgroups // y)
        if y > self.max_workgroups:
            raise RuntimeError(f"torchweb: {workgroups} workgroups exceed this adapter's grid")
        return (x, y, 1)

    # -- flush and readback ----------------------------------------------------------------
    def _take_stream(self):
        """(the stream recorded so far, its kernels' work), an empty stream in its place."""
        stream, work = self.stream, self._stream_work
        self.stream = commands.CommandStream()
        self._stream_work = 0
        self._stream_deadline = 0.0
        return stream, work

    def _submitted(self):
        """A flush handed to the driver: the GPU has work (the idle rule off until a wait)."""
        self.flushes += 1
        self._idle_start = 1 << 62
        self._flush_bytes = self._feed_bytes_min

    def flush(self):
        if not len(self.stream):
            return
        stream, work = self._take_stream()
        head = commands.CommandStream()
        if self.params:
            params = self.params
            need = len(params)
            if need > self._params_capacity:
                if self._params_capacity:
                    head.destroy(PARAMS_BUFFER_ID)
                cap = max(need, 64 << 10)
                head.create(PARAMS_BUFFER_ID, cap, commands.USAGE_UNIFORM)
                self._params_capacity = cap
                self._params_held = b""
            # (a capture replays what it recorded: its flushes always upload)
            if not (REUSE_PARAMS and self.capture is None and self._params_held.startswith(params)):
                head.write(PARAMS_BUFFER_ID, 0, params)
                self._params_held = bytes(params) if REUSE_PARAMS else b""
            self.params = bytearray()
            self._param_slots = {}
        # The head's rows run first but its blob goes last: only its own few WRITE offsets
        # move (by the stream's blob length), not every row of the stream.
        base = len(stream.blob) + ((-len(stream.blob)) % 4)
        words = head.words
        if base and head.blob:
            words = _shift_writes(words, base)
        head_len = len(words)
        words.extend(stream.words)
        blob = stream.blob + b"\0" * (base - len(stream.blob)) + head.blob if head.blob else stream.blob
        if self.windows:
            words = self._translate_windows(words)
        self._submitted()
        if self.capture is not None:
            self.capture.record(words, blob, head_len)
        if self.unwritten:   # (after an out of memory: what is computed from its victims)
            unwritten.spread(words, self.unwritten, self.pipeline_kinds,
                             [(at + head_len, bid) for at, bid in self._freed])
        self._freed = []
        t0 = perf_counter()
        try:
            self.driver.execute(words, blob)
        except BufferOutOfMemory as e:
            self._params_held = b""
            err = self._flush_out_of_memory(e)
            start = getattr(e, "skipped_from", None)
            if start is not None:
                why = str(err).split(":")[0]
                for bid in unwritten.written(words, start, self.pipeline_kinds):
                    if not self.pool.is_free(bid):   # (a freed temporary: no tensor holds it)
                        self.unwritten[bid] = why
                        self.plain_free = False
            raise err from None
        except BaseException:
            self._params_held = b""   # (whether the upload happened is unknown now)
            raise
        self._set_feed(self.feed.flushed(work, t0, perf_counter()))

    def _given_up(self, ids, e):
        """(The browser driver's on_given_up.) A page's flush ran out of memory, found late (at
        a read or sync): the buffers it made (ids) were given up (runtime.mjs; made again blank
        when used), so the live tensors in them are marked never computed (unwritten.py)."""
        why = str(e).split(":")[0]
        for bid in ids:
            if not self.pool.is_free(bid):
                self.unwritten[bid] = why
                self.plain_free = False

    def _flush_out_of_memory(self, e):
        return self.out_of_memory(e.nbytes, f"the device reported: {e.detail.strip()} (after the "
                                            f"pool's free buffers were given back and it was tried "
                                            f"again). The ops recorded after it in the same batch "
                                            f"did not run")

    def run_program(self, pre, graph, post, blob):
        """Execute a captured program (capture.Graph) after what is recorded so far: the `pre`
        copies, the graph's words, the `post` copies. A driver that can prepare programs (the
        native one) decodes the graph's words once."""
        pending.realize_all()
        prepare = getattr(self.driver, "prepare", None)
        lead, lead_blob = self._take_kernel_free(len(blob) if prepare is None else 0)
        self.flushes += 1
        self._params_held = b""   # the program uploads its own uniforms
        if prepare is None:
            self.driver.execute(lead + pre + graph.words + post, blob + lead_blob if lead_blob else blob)
            return
        self.driver.execute(lead + pre, lead_blob)
        if graph.prepared is None or not self.driver.run_prepared(graph.prepared, blob):
            graph.prepared = prepare(graph.words)
            self.driver.run_prepared(graph.prepared, blob)
        self.driver.execute(post, b"")

    def _take_kernel_free(self, base):
        """What is recorded so far, for a program's execute to carry (each execute is a crossing
        into the browser's driver): (its words, its blob placed at byte `base` of the execute's
        blob) where it holds no kernel (uploads, copies: a replay's optimizer step counters),
        else flushed on its own and nothing."""
        stream = self.stream
        if not len(stream):
            return array("I"), b""
        if stream.dispatches or self.params or self.windows or self.unwritten or self.capture is not None:
            self.flush()
            return array("I"), b""
        self._take_stream()
        self._submitted()   # (_freed is empty: nothing is unwritten)
        words, blob = stream.words, stream.blob
        if not blob:
            return words, b""
        pad = (-base) % 4
        return _shift_writes(words, base + pad), b"\0" * pad + blob

    def synchronize(self):
        """Flush, then wait for the GPU to finish (where the driver can block), raising what
        the kernels reported (errors.py). Pending fused expressions (torchweb/lazy) run first."""
        pending.realize_all()
        self.flush()
        if self.driver.can_block():
            if self.errors.pending():
                self._check_errors()
            else:
                self.driver.wait()
            self._idle()

    async def synchronize_async(self):
        pending.realize_all()
        self.flush()
        if self.errors.pending():
            await self._check_errors_async()
        else:
            await self.driver.wait_async()
        self._idle()

    def read(self, bid, offset, nbytes):
        if self.capture is not None:
            self.capture.refuse("it reads values back (.item(), .tolist(), print, a Python "
                                "branch on a tensor) inside the function")
        self._read_follows(bid)
        self.flush()
        if not self.driver.can_block():
            raise RuntimeError(
                "torchweb: this page cannot block on the GPU here (no JSPI stack switching: "
                "pyodide.ffi.can_run_sync() is False). Use the awaitable form, e.g. "
                "`await t.tolist_async()`, `await t.item_async()` or `await t.numpy_async()`")
        if bid in self.unwritten:
            if self.errors.pending():
                self._check_errors()
            raise unwritten.unwritten_error(self.unwritten[bid])
        if self.errors.pending():   # ERR's words and the data in one round trip, checked first
            data, words = self.driver.read_many(((bid, offset, nbytes), self.errors.binding_range))
            self.errors.check(memoryview(words).cast("I").tolist())
        else:
            data = self.driver.read(bid, offset, nbytes)
        self._idle()
        return data

    async def read_async(self, bid, offset, nbytes):
        if self.capture is not None:
            self.capture.refuse("it reads values back inside the function")
        self._read_follows(bid)
        self.flush()
        if bid in self.unwritten:
            if self.errors.pending():
                await self._check_errors_async()
            raise unwritten.unwritten_error(self.unwritten[bid])
        if self.errors.pending():
            data, words = await self.driver.read_many_async(((bid, offset, nbytes), self.errors.binding_range))
            self.errors.check(memoryview(words).cast("I").tolist())
        else:
            data = await self.driver.read_async(bid, offset, nbytes)
        self._idle()
        return data

    def _read_follows(self, bid):
        """Tell a driver that can (the browser's) that a read of bid follows the next flush, so
        it encodes the read's copy with that flush's work: one submit, not two."""
        hint = getattr(self.driver, "read_follows", None)
        if hint is not None and bid not in self.unwritten:
            hint()

    def _idle(self):
        """The GPU has finished what was submitted (a wait or a readback just returned)."""
        self._idle_start = IDLE_START_BYTES
        self._set_feed(self.feed.idle(perf_counter()))

    def _check_errors(self):
        bid, nbytes = self.errors.binding
        words = memoryview(self.driver.read(bid, 0, nbytes)).cast("I").tolist()
        self.errors.check(words)   # a raise leaves a reset of ERR in the stream

    async def _check_errors_async(self):
        bid, nbytes = self.errors.binding
        words = memoryview(await self.driver.read_async(bid, 0, nbytes)).cast("I").tolist()
        self.errors.check(words)


    # -- device loss -----------------------------------------------------------------------
    def lose(self, reason):
        """The device is gone (reason: what WebGPU said, or why torchweb dropped it): drop what
        this runtime and its driver hold of it (buffers, pipelines, bind groups, the pool, the
        unflushed stream) and let the layers above drop what they cached (on_device_lost).
        From here on this runtime only raises DeviceLostError (LostRuntime). Returns the error
        for the caller to raise."""
        if self.lost is None:
            self.driver.on_lost = None
            self.driver.close()
            self.errors.reset()
            # what is left: what the driver, the adapter's facts and an empty pool (stats: 0) say
            self.__dict__ = {k: v for k, v in self.__dict__.items() if k in _KEPT_WHEN_LOST}
            self.lost = reason or "lost"
            self.closed = True
            self.pool = BufferPool(self._create_buffer, self.stream_destroy)
            self.__class__ = LostRuntime
            _LOST.append(self)
            pending.drop_pending(self)
            for callback in _ON_LOST:
                callback(self)
        return self.error()


class LostRuntime(Runtime):
    """A runtime whose device was lost. Its storages (the old device's tensors) still point to it:
    each access raises DeviceLostError, through `capture`, which a storage reads before handing
    out its buffer, or through the methods that would reach the GPU. Nothing on the hot path of a
    live runtime checks for loss."""

    plain_free = False   # (a storage's __del__ then calls free(), which does nothing here)

    def error(self, touched=False):
        """The DeviceLostError to raise. The first one (while this is still the current runtime)
        detaches it, so that the next new tensor starts a new device (as PyTorch-like code that
        just goes on expects). touched: a storage of this runtime asks (an old tensor used after
        that first error), said so."""
        current = _runtime[0] is self
        if current:
            _runtime[0] = None
        if touched and not current:
            return DeviceLostError(
                f"torchweb: this tensor was on a WebGPU device that was lost ({self.lost}): its "
                f"values are gone. Make it again on the current device (e.g. load the weights again)",
                self.lost)
        return DeviceLostError(
            f"torchweb: the WebGPU device was lost ({self.lost}). Every tensor on it is gone; "
            f"torchweb.webgpu.reset() starts a new device (so does the next new tensor): make "
            f"the tensors you need again there (e.g. load the model's weights again)", self.lost)

    def _gone(self, *_args, **_kwargs):
        raise self.error()

    def __getattr__(self, name):   # what lose() dropped (stream, errors, params...): gone too
        if name.startswith("__"):
            raise AttributeError(name)
        raise self.error()

    def _touched(self, *_args):
        raise self.error(touched=True)

    # a storage reads its runtime's capture before it hands out its buffer (a data descriptor
    # wins over the instance's attribute); set: a recording that ends
    capture = property(_touched, lambda self, value: None)
    take = _touched   # (a storage that never had its buffer: taken on its first use)
    alloc = upload = copy = pipeline = dispatch = record = grid = _gone
    flush = run_program = synchronize = read = _gone

    async def synchronize_async(self):
        raise self.error()

    async def read_async(self, *_args):
        raise self.error()

    def free(self, bid, size):   # (an old tensor dying: its buffer went with the device)
        pass


_KEPT_WHEN_LOST = {"driver", "errors", "features", "max_binding", "max_buffer", "max_workgroups", "software_adapter",
                   "barriers_costly", "share_params"}
# Lost runtimes, kept for good (about 5 KB each once lose() dropped its device): kernel
# caches are keyed by id(runtime), and a new runtime must never get the id of a dead lost one.
_LOST = []
_ON_LOST = []   # callbacks (lost runtime) of the layers above that keep GPU work of a runtime


def on_device_lost(callback):
    """Have callback(runtime) run when a runtime's device is lost or reset: layers above the
    backends that cache work of a runtime (pending expressions, compiled graphs) drop it."""
    _ON_LOST.append(callback)


def reset_runtime(reason="torchweb.webgpu.reset() was called"):
    """Drop the current runtime and its device (its tensors then raise DeviceLostError); the
    next get_runtime() starts a new one."""
    rt = _runtime[0]
    _runtime[0] = None
    _init_error[0] = None
    if rt is not None and rt.lost is None:
        rt.lose(reason)


def dispatch_head(pipeline_id, grid, nbuffers):
    """The words a DISPATCH row starts with, up to its params binding's offset (Runtime.record)."""
    return (commands.DISPATCH, pipeline_id, *grid, nbuffers + 1, PARAMS_BUFFER_ID)


WINDOW_IDS = 1 << 31   # ids from here on name windows (Runtime.window), never buffers
_OFFSET_ZERO = repeat(0)   # (never exhausted: shared by every dispatch's zip)


def _shift_writes(words, base):
    out = words[:]  # copy: rows are variable length, walk them
    i, n = 0, len(out)
    while i < n:
        if out[i] == commands.WRITE:
            out[i + 3] += base
        i += commands.row_length(out, i)
    return out


_runtime = [None]
_init_error = [None]


def in_browser():
    return sys.platform == "emscripten"


def get_runtime():
    rt = _runtime[0]
    if rt is None:
        if _init_error[0] is not None:
            raise RuntimeError(f"torchweb: WebGPU is not available: {_init_error[0]}")
        try:
            if in_browser():
                from .driver_browser import BrowserDriver  # deferred: driver choice
                driver = BrowserDriver.create_sync()
            else:
                from .driver_native import NativeDriver  # deferred: driver choice
                driver = NativeDriver()
        except ImportError as e:
            _init_error[0] = (f"{e}. In CPython, install the native driver: "
                              f"pip install 'torchweb[native]'")
            raise RuntimeError(f"torchweb: WebGPU is not available: {_init_error[0]}") from None
        except Exception as e:
            if not in_browser():
                # In a page, the failure may only be that it cannot block yet:
                # `await torchweb.webgpu.init_async()` can still start the device.
                _init_error[0] = str(e)
            raise RuntimeError(f"torchweb: WebGPU is not available: {e}") from None
        rt = _runtime[0] = Runtime(driver)
    return rt


def set_runtime_driver(driver):
    """Install a driver made elsewhere (the browser's async start-up)."""
    _runtime[0] = Runtime(driver)
    _init_error[0] = None
    return _runtime[0]


def words(*values):
    """Pack u32 words (ints) for params; floats go through f32 bits."""
    return struct.pack(f"<{len(values)}I", *values)
