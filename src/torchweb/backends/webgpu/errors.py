"""Errors that only the GPU can see: a kernel raises a flag, the host raises the exception.

A kernel that can fail (an integer divisor of zero, an int64 result past the 32 bits the GPU
holds int64 in, an index out of range, a compare-exchange loop out of retries: CONTENTION) binds the small ERR buffer last and, on failure, does
`atomicMin(&ERR[kind], tag)`, where `tag` (a parameter) numbers its dispatch among those
recorded since the last check. The next readback or synchronize reads ERR first, but only when
such dispatches were recorded: float code never pays for it. The exception names the first
failing op; the buffer is reset, so the device and earlier tensors stay usable.
"""

from ... import _errors

ERROR_BUFFER_ID = 0xFFFFFFF0      # a fixed id, far above the pool's counter
ZERO_DIVISION, INT64_RANGE, INDEX, CONTENTION = 0, 1, 2, 3
NWORDS = 4
CLEAR = b"\xff" * (4 * NWORDS)    # atomicMin's identity
# The retries of a kernel's compare-exchange loop (kernels/wgsl.py cas_loop) before it raises
# CONTENTION: under lavapipe's 65535-iteration loop cut; NVIDIA lost updates at 4096 with
# 10,000 adds racing for one word.
CAS_RETRIES = 60000
# What the tags since the last check are kept for, at most: each entry may hold a tensor (the
# words of an out-of-range message are read from the values when raised), and a training loop
# that never reads back would keep every step's targets. Later checked ops share the last tag.
PENDING_KEPT = 64
OVERFLOW = ("an op (past the 64 error-checked ops since the last readback)", None, None, None)
WGSL_DECL = "var<storage, read_write> ERR: array<atomic<u32>, {n}>;".format(n=NWORDS)


class Int64RangeError(RuntimeError):
    """An int64 result outside [-2**31, 2**31 - 1] on the webgpu device, which holds int64 in
    32 bits (WebGPU has no 64-bit integers): refused rather than wrapped."""


class BufferOutOfMemory(_errors.OutOfMemoryError):
    """A driver could not create a buffer of nbytes (the device said `detail`). The native
    driver raises it at the flush, after the pool's free buffers were given back and the
    creation tried again, having run what came before it and skipped the rest of that flush
    (the runtime re-raises it with the pool's sizes); the browser's, at the next readback or
    synchronize (WebGPU reports it to an error scope, asynchronously)."""

    def __init__(self, nbytes, detail):
        super().__init__(f"WebGPU out of memory. Tried to allocate {format_size(nbytes)}: "
                         f"the device reported: {detail.strip()}")
        self.nbytes = nbytes
        self.detail = detail


def format_size(nbytes):
    """PyTorch's caching allocator's sizes: bytes, KiB, MiB, then GiB (no TiB)."""
    for unit, scale in (("bytes", 1), ("KiB", 1 << 10), ("MiB", 1 << 20)):
        if nbytes <= scale << 10:
            return f"{nbytes} bytes" if scale == 1 else f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes / (1 << 30):.2f} GiB"


class DeviceLostError(RuntimeError):
    """The WebGPU device is gone (destroyed, reset by the browser or the driver, a kernel the
    driver killed, the GPU removed): raised by the next op that reaches the GPU, then by every
    tensor of that device when touched. torchweb.webgpu.reset(), or the next new tensor, starts
    a new device. reason: what WebGPU said ('destroyed: ...', 'unknown: ...')."""

    def __init__(self, message, reason=""):
        super().__init__(message)
        self.reason = reason


def device_lost(driver, reason):
    """The DeviceLostError a driver raises for its lost device: through the runtime's lose()
    (driver.on_lost), which drops what it held of the device first."""
    if driver.on_lost is not None:
        return driver.on_lost(reason)
    return DeviceLostError(f"torchweb: the WebGPU device was lost ({reason})", reason)


def wgsl_raise(kind, tag_expr):
    """The WGSL statement that raises error `kind` for the dispatch tagged tag_expr."""
    return f"atomicMin(&ERR[{kind}], {tag_expr});"


# Tags of dispatches inside a captured graph (torchweb.compile) live in a block of their own,
# fixed at capture, since a replay's dispatches carry the tags they were recorded with.
BLOCK_BASE, BLOCK_SPAN = 1 << 31, 1 << 16


class DeviceErrors:
    def __init__(self, stream_owner):
        self._rt = stream_owner
        self._pending = []        # (kind-independent) what each tag's dispatch was: op name
        self._created = False
        self._blocks = {}         # block number -> its tags' entries (captured graphs)
        self._recording = None    # (block number, entries) while a capture records
        self._replayed = set()    # blocks run since the last check

    def begin_block(self, n=None):
        """Tag into block n (a new one if None; a compiled function's recordings reuse theirs,
        so that two recordings of one call give the same tags): its number."""
        if n is None:
            n = next(i for i in range(1, 1 << 15) if i not in self._blocks)
        self._blocks[n] = []
        self._recording = (n, self._blocks[n])
        self._replayed.add(n)     # the capturing call itself ran them
        return n

    def end_block(self, keep):
        """Stop tagging into the block; forget it unless a graph keeps it (keep)."""
        n, entries = self._recording
        self._recording = None
        if not keep and not entries:
            del self._blocks[n]
            self._replayed.discard(n)
            return None
        return n

    def drop_block(self, n):
        self._blocks.pop(n, None)

    def replayed(self, n):
        if n is not None and self._blocks.get(n):
            self._replayed.add(n)

    def tag(self, what, exc=None, message=None, hint=None):
        """A tag for the next dispatch that may raise (its op's name, for the message); the
        dispatch must bind (ERROR_BUFFER_ID, NWORDS * 4) last. exc, message: the exception
        class and words an INDEX error of this dispatch raises (PyTorch's type for the op:
        IndexError for indexing, RuntimeError for gather and scatter). hint: what a CONTENTION
        error of this dispatch suggests instead (a deterministic alternative, where one exists)."""
        rt = self._rt
        if not self._created:
            rt.stream.create(ERROR_BUFFER_ID, 4 * NWORDS, 1)
            rt.stream.write(ERROR_BUFFER_ID, 0, CLEAR)
            self._created = True
        if self._recording is not None:
            n, entries = self._recording
            entries.append((what, exc, message, hint))
            if len(entries) >= BLOCK_SPAN:
                raise RuntimeError("torchweb.compile: too many error-checked ops in one graph")
            return BLOCK_BASE + n * BLOCK_SPAN + len(entries)
        pending = self._pending
        if len(pending) < PENDING_KEPT:
            pending.append((what, exc, message, hint))
        else:
            pending[-1] = OVERFLOW
        return len(pending)

    binding = (ERROR_BUFFER_ID, 4 * NWORDS)
    binding_range = (ERROR_BUFFER_ID, 0, 4 * NWORDS)   # (a driver's read_many range)

    def pending(self):
        return bool(self._pending) or any(self._blocks.get(n) for n in self._replayed)

    def check(self, words):
        """Raise the first recorded error, given ERR's words as read back; then forget it."""
        pending, self._pending = self._pending, []
        self._replayed = set()
        hits = [(tag, kind) for kind, tag in enumerate(words) if tag != 0xFFFFFFFF]
        if not hits:
            return
        self._rt.stream.write(ERROR_BUFFER_ID, 0, CLEAR)
        tag, kind = min(hits)
        if tag >= BLOCK_BASE:
            n, i = divmod(tag - BLOCK_BASE, BLOCK_SPAN)
            pending = self._blocks.get(n, [])
            tag = i
        what, exc, message, hint = pending[tag - 1] if 0 < tag <= len(pending) else ("an op", None, None, None)
        raise _exception(kind, what, exc, message, hint)

    def reset(self):
        """The runtime is gone or restarted: nothing is pending and ERR must be made again."""
        self._pending = []
        self._created = False


def _exception(kind, what, exc=None, message=None, hint=None):
    where = f"(in {what} on webgpu: found by the GPU, reported at the next readback or synchronize)"
    if kind == CONTENTION:
        return RuntimeError(
            f"{what}: an atomic update could not complete under contention {where}: its compare-exchange "
            f"loop gave up after {CAS_RETRIES} retries while other GPU threads kept updating the same "
            f"element, so the result would have lost that update. "
            + (hint or "Run the op on the cpu device, or with fewer updates of one element."))
    if kind == ZERO_DIVISION:
        return RuntimeError(f"ZeroDivisionError {where}")
    if kind == INT64_RANGE:
        return Int64RangeError(
            f"an int64 result is outside [-2147483648, 2147483647] {where}: WebGPU has no 64-bit "
            f"integers, so int64 tensors hold 32 bits on the GPU. Use the cpu device, or float32, "
            f"for values past that range")
    if callable(message):    # words that need the data (read now, while raising)
        try:
            message = message()
        except Exception:
            message = None
    return (exc or IndexError)(f"{message or 'index out of range'} {where}")
