"""The native driver: wgpu-py (wgpu-native) in CPython, on any Vulkan/Metal/D3D adapter.

Thin on purpose: it executes the command stream (commands.py) and reads buffers back.
Everything above it is shared with the browser driver.
"""

import functools
import logging
import os
from array import array

from . import commands
from .errors import BufferOutOfMemory, DeviceLostError, device_lost
from .native_encoding import encoding_factory


_MAX_BINDINGS = 32   # a dispatch's bindings: the params uniform and the storage buffers


class _Buffers(dict):
    """buffer id -> GPUBuffer. An id whose creation ran out of memory is made again when next
    used (by its tensor, or by the pool handing the id out again), else it raises again."""

    __slots__ = ("failed", "create")

    def __missing__(self, bid):
        if bid not in self.failed:
            raise KeyError(bid)
        nbytes, usage = self.failed[bid]
        buf = self.create(nbytes, usage)   # (raises BufferOutOfMemory if memory is still short)
        del self.failed[bid]
        self[bid] = buf
        return buf


def _out_of_memory(e):
    """Whether a wgpu-py error is an allocation failure (wgpu-native reports lavapipe's as a
    validation error "Not enough memory left")."""
    text = str(e).lower()
    return isinstance(e, _OOM_TYPES) or "not enough memory" in text or "out of memory" in text


_OOM_TYPES = ()   # (wgpu.GPUOutOfMemoryError, once wgpu is imported)


def _one_line(e):
    """wgpu-native's "Validation Error\n\nCaused by:\n  In wgpuDeviceCreateBuffer\n    Not
    enough memory left." as "In wgpuDeviceCreateBuffer: Not enough memory left."."""
    lines = [s.strip() for s in str(e).splitlines()]
    kept = [s for s in lines if s and s != "Caused by:" and not s.endswith(" Error")]
    return ": ".join(kept) or str(e)


def _raw_bind_group_calls():
    """(the entry array, the descriptor, wgpuDeviceCreateBindGroup with wgpu-py's error
    capture, the GPUBindGroup class), or None where this wgpu-py does not have them as expected."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi
        from wgpu.backends.wgpu_native import _api
        # one descriptor and entry array, refilled for each bind group (create copies them)
        entries = ffi.new("WGPUBindGroupEntry[]", _MAX_BINDINGS)
        desc = ffi.new("WGPUBindGroupDescriptor *")
        entries[0].buffer, desc.entryCount   # the fields used, as named here
        desc.entries = entries
        return entries, desc, _api.libf.wgpuDeviceCreateBindGroup, _api.GPUBindGroup
    except (ImportError, AttributeError, TypeError):
        return None


def _ids_used(words, i):
    """The buffer ids that rows words[i:] bind, copy or write."""
    used = set()
    n = len(words)
    while i < n:
        op = words[i]
        if op == commands.DISPATCH:
            used.update(words[i + 6:i + 6 + 3 * words[i + 5]:3])
        elif op == commands.COPY:
            used.update((words[i + 1], words[i + 3]))
        elif op == commands.WRITE:
            used.add(words[i + 1])
        i += commands.row_length(words, i)
    return used


_LOSSES = []   # what wgpu-py's device-lost callback said, latest last (it only logs it)


class _LossRecorder(logging.Filter):
    """Notes wgpu-py's "The WGPU device was lost (reason):\nmessage" log records: the reason and
    message WebGPU gives, which wgpu-py 0.32 has no other way to hand out."""

    def filter(self, record):
        msg = record.getMessage()
        if msg.startswith("The WGPU device was lost ("):
            head, _, detail = msg.partition(":\n")
            _LOSSES[:] = [f"{head[len('The WGPU device was lost ('):-1]}: {detail.strip()}"]
        return True


_RECORDER = _LossRecorder()


def _device_lost_checked(method):
    """The method, with wgpu's errors of a lost device ("Parent device is lost") raised as
    DeviceLostError, through the runtime's on_lost (which drops what it held of the device)."""
    @functools.wraps(method)
    def checked(self, *args):
        try:
            return method(self, *args)
        except DeviceLostError:
            raise
        except Exception as e:
            if "device is lost" not in str(e).lower() and "device lost" not in str(e).lower():
                raise
            try:
                self.device._poll_wait()   # (lets wgpu-native call its lost callback now)
            except Exception:
                pass
            reason = _LOSSES[-1] if _LOSSES else str(e).strip().splitlines()[-1].strip()
            _LOSSES.clear()
            raise device_lost(self, reason) from None
    return checked


class NativeDriver:
    name = "native"
    on_lost = None   # the runtime's lose(reason), called when the device is found lost

    def __init__(self):
        import wgpu  # the optional extra torchweb[native]

        logging.getLogger("wgpu").addFilter(_RECORDER)   # (after wgpu made its logger; once)

        self._wgpu = wgpu
        global _OOM_TYPES
        _OOM_TYPES = (wgpu.GPUOutOfMemoryError,)
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if adapter is None:
            raise RuntimeError("wgpu found no WebGPU adapter (is a Vulkan driver installed?)")
        self.adapter = adapter
        info = adapter.info
        self.adapter_info = {
            "vendor": info.get("vendor", ""),
            "architecture": info.get("architecture", ""),
            "device": info.get("device", ""),
            "description": info.get("description", ""),
            "backend": info.get("backend_type", ""),
            "adapter_type": info.get("adapter_type", ""),
        }
        self.features = set(adapter.features)
        # wgpu-py names the subgroup feature "subgroup"; the runtime knows WebGPU's "subgroups"
        want = {f for f in ("shader-f16", "subgroup", "subgroups", "timestamp-query") if f in self.features}
        self.limits = self._limits_to_request(dict(adapter.limits))
        self.device = adapter.request_device_sync(required_features=list(want),
                                                  required_limits=self.limits)
        self.features = {"subgroups" if f == "subgroup" else f for f in want}
        self.queue = self.device.queue
        self.buffers = _Buffers()
        self.buffers.failed = {}     # buffer id -> (nbytes, usage) of creations out of memory
        self.buffers.create = self._create_or_raise
        self.reclaim = lambda keep: []   # the runtime's: (ids still needed) -> free pool ids
        self.fail_next_creations = 0     # a test hook: this many creations (of fail_min_bytes
        self.fail_min_bytes = 0          # or more) fail as out of memory
        self.pipelines = {}
        self.layouts = {}
        self._fence = None
        self._bind_groups = {}       # (layout, rows) -> bind group
        self._rows = {}              # DISPATCH row (less its params offset) -> what execute() sets
        self._rows_handle = None     # the encoding's handle() that _rows was made with
        self._rows_of_group = {}     # bind group key -> the keys of _rows that hold the group
        self._groups_of_buffer = {}  # buffer id -> keys of the bind groups that use it
        self._encoding = encoding_factory(self.device)   # native_encoding.py: C calls where possible
        self._raw_bind_group = _raw_bind_group_calls()

    @staticmethod
    def _limits_to_request(adapter_limits):
        # TORCHWEB_BROWSER_LIMITS=1 asks for what a browser gives by default, so that tests
        # on native catch kernels that a browser would refuse.
        if os.environ.get("TORCHWEB_BROWSER_LIMITS") == "1":
            browser = {
                "max-storage-buffer-binding-size": 128 << 20,
                "max-buffer-size": 256 << 20,
                "max-storage-buffers-per-shader-stage": 8,
                "max-compute-workgroups-per-dimension": 65535,
                "max-compute-workgroup-storage-size": 16384,
                "max-compute-invocations-per-workgroup": 256,
            }
            return {k: min(v, adapter_limits[k]) for k, v in browser.items()}
        keys = ("max-storage-buffer-binding-size", "max-buffer-size",
                "max-storage-buffers-per-shader-stage", "max-compute-workgroups-per-dimension",
                "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
                "max-uniform-buffer-binding-size")
        return {k: adapter_limits[k] for k in keys if k in adapter_limits}

    def limit(self, name):
        return self.device.limits[name]

    # -- set-up calls (rare, direct) --------------------------------------------------------
    @_device_lost_checked
    def create_pipeline(self, pipeline_id, code, binding_kinds):
        """binding_kinds: 'uniform' | 'read' | 'write' per binding, in order."""
        wgpu = self._wgpu
        types = {"uniform": wgpu.BufferBindingType.uniform,
                 "read": wgpu.BufferBindingType.read_only_storage,
                 "write": wgpu.BufferBindingType.storage}
        key = tuple(binding_kinds)
        layout = self.layouts.get(key)
        if layout is None:
            # the uniform takes a dynamic offset (every dispatch's params share one buffer at
            # different offsets), so a bind group is reused across dispatches, as runtime.mjs does
            bgl = self.device.create_bind_group_layout(entries=[
                {"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                 "buffer": {"type": types[k], "has_dynamic_offset": k == "uniform"}}
                for i, k in enumerate(binding_kinds)])
            layout = (bgl, self.device.create_pipeline_layout(bind_group_layouts=[bgl]))
            self.layouts[key] = layout
        module = self.device.create_shader_module(code=code)
        pipeline = self.device.create_compute_pipeline(layout=layout[1],
                                                       compute={"module": module, "entry_point": "main"})
        uniforms = tuple(k == "uniform" for k in binding_kinds)
        # the runtime's layout (its params uniform first, storage buffers after): execute()
        # decodes these dispatches on a short path
        params_first = bool(uniforms) and uniforms[0] and not any(uniforms[1:])
        self.pipelines[pipeline_id] = (pipeline, layout[0], uniforms, params_first)

    # -- the command stream ----------------------------------------------------------------
    @_device_lost_checked
    def execute(self, words, blob):
        enc = self._encoding()
        doomed = []
        blob = memoryview(blob)
        if type(words) is not array:
            words = array("I", words)
        rows = self._rows
        if enc.handle is not self._rows_handle:   # (what _rows holds is the encoding's kind of handle)
            rows = self._rows = {}
            self._rows_of_group = {}
            self._rows_handle = enc.handle
        DISPATCH = commands.DISPATCH   # (a local: the loop reads it per row)
        i, n = 0, len(words)
        try:
            while i < n:
                op = words[i]
                if op == DISPATCH:
                    # the row less its params offset (the one word that moves from flush to flush)
                    # names what to set: found in _rows, the row is decoded once
                    j = i + 6 + 3 * words[i + 5]
                    row = words[i + 1:j]
                    offset = row[6]
                    row[6] = 0
                    hit = rows.get(row.tobytes())
                    if hit:
                        enc.dispatch_one(offset, *hit)
                    elif hit is None and (hit := self._row(words, i, row.tobytes(), enc.handle)):
                        enc.dispatch_one(offset, *hit)
                    else:   # (a layout with its uniform elsewhere, or several)
                        pipeline, group, offsets, (x, y, z), _, _ = self._decode_dispatch(words, i)
                        enc.dispatch(pipeline, group, offsets, x, y, z)
                    i = j
                elif op == commands.COPY:
                    src, so, dst, do, nbytes = words[i + 1:i + 6]
                    enc.copy(self.buffers[src], so, self.buffers[dst], do, nbytes)
                    i += 6
                elif op == commands.WRITE:
                    bid, dst_off, start, nbytes = words[i + 1:i + 5]
                    enc.write(self.buffers[bid], dst_off, blob[start:start + nbytes])
                    i += 5
                elif op == commands.CREATE:
                    bid, nbytes, usage = words[i + 1:i + 4]
                    self._forget_bind_groups(bid)
                    try:
                        self.buffers[bid] = self._create_or_raise(nbytes, usage)
                    except BufferOutOfMemory:
                        # submit what is encoded, give the pool's free buffers back, try once more
                        enc.submit()
                        enc = self._encoding()
                        self._destroy_now(self.reclaim(_ids_used(words, i + 4)))
                        try:
                            self.buffers[bid] = self._create_or_raise(nbytes, usage)
                        except BufferOutOfMemory:
                            self.buffers.failed[bid] = (nbytes, usage)
                            i += 4
                            raise
                    i += 4
                elif op == commands.DESTROY:
                    self._destroy_row(words[i + 1], doomed)
                    i += 2
                else:
                    raise RuntimeError(f"torchweb: corrupt command stream (opcode {op} at word {i})")
        except BufferOutOfMemory as e:
            # (a creation, or a failed id made again when used: the rest of the flush is skipped)
            self._finish_after_oom(enc, words, i, doomed)
            e.skipped_from = i   # (the runtime marks what the skipped rows write: unwritten.py)
            raise
        enc.submit()
        for buf in doomed:
            buf.destroy()

    # -- out of memory ---------------------------------------------------------------------
    def _create_or_raise(self, nbytes, usage):
        """A new buffer; BufferOutOfMemory where the device has no memory for it (wgpu-py raises
        the device's error at the call, so no error scope is needed here)."""
        B = self._wgpu.BufferUsage
        u = (B.UNIFORM | B.COPY_DST if usage == commands.USAGE_UNIFORM
             else B.STORAGE | B.COPY_SRC | B.COPY_DST)
        try:
            if self.fail_next_creations and nbytes >= self.fail_min_bytes:
                self.fail_next_creations -= 1
                raise self._wgpu.GPUOutOfMemoryError("Not enough memory left (test hook)")
            return self.device.create_buffer(size=nbytes, usage=u)
        except self._wgpu.GPUError as e:
            if _out_of_memory(e):
                raise BufferOutOfMemory(nbytes, _one_line(e)) from None
            raise

    def create_now(self, bid, nbytes):
        """Make storage buffer bid now (a big one: the runtime's _create_now): True, or
        BufferOutOfMemory."""
        self._forget_bind_groups(bid)
        self.buffers[bid] = self._create_or_raise(nbytes, commands.USAGE_STORAGE)
        return True

    def _destroy_row(self, bid, doomed):
        self._forget_bind_groups(bid)
        buf = self.buffers.pop(bid, None)
        if buf is not None:   # (None: its creation ran out of memory)
            doomed.append(buf)   # recorded work may still use it: destroyed after the submit
        else:
            self.buffers.failed.pop(bid, None)

    def _destroy_now(self, ids):
        for bid in ids:
            self._forget_bind_groups(bid)
            buf = self.buffers.pop(bid, None)
            if buf is not None:
                buf.destroy()
            self.buffers.failed.pop(bid, None)

    def _finish_after_oom(self, enc, words, i, doomed):
        """A creation failed for good at row i: run what was encoded, then only the rest's
        buffer rows (CREATE, DESTROY), so the tables stay in step with the runtime's; its
        dispatches, copies and writes are skipped (the OutOfMemoryError says so)."""
        enc.submit()
        n = len(words)
        while i < n:
            op = words[i]
            if op == commands.CREATE:
                bid, nbytes, usage = words[i + 1:i + 4]
                self._forget_bind_groups(bid)
                try:
                    self.buffers[bid] = self._create_or_raise(nbytes, usage)
                except BufferOutOfMemory:
                    self.buffers.failed[bid] = (nbytes, usage)
            elif op == commands.DESTROY:
                self._destroy_row(words[i + 1], doomed)
            i += commands.row_length(words, i)
        for buf in doomed:
            buf.destroy()
        doomed.clear()

    # -- captured programs (capture.py): decoded once, replayed without parsing ---------------
    @_device_lost_checked
    def prepare(self, words):
        """A replayable form of a program of DISPATCH, COPY and WRITE rows whose buffers stay
        alive: pipelines, bind groups and buffers looked up once."""
        C_ = commands   # (a local: the loop reads it per row)
        steps, used = [], {}
        handle = self._encoding().handle
        i, n = 0, len(words)
        while i < n:
            op, start = words[i], i
            if op == C_.DISPATCH:
                pipeline, group, offsets, (x, y, z), bids, i = self._decode_dispatch(words, i)
                for bid in bids:
                    used[bid] = self.buffers[bid]
                if self.pipelines[words[start + 1]][3]:   # (params first: one offset; the group
                    # object kept with its handle: it lives while the program does)
                    steps.append((3, offsets[0], handle(pipeline), handle(group), x, y, z, group))
                else:
                    steps.append((0, pipeline, group, offsets, x, y, z))
            elif op == C_.COPY:
                src, so, dst, do, nbytes = words[i + 1:i + 6]
                used[src], used[dst] = self.buffers[src], self.buffers[dst]
                steps.append((1, self.buffers[src], so, self.buffers[dst], do, nbytes))
                i += 6
            elif op == C_.WRITE:
                bid, dst_off, start, nbytes = words[i + 1:i + 5]
                used[bid] = self.buffers[bid]
                steps.append((2, self.buffers[bid], dst_off, start, nbytes))
                i += 5
            else:
                raise RuntimeError(f"torchweb: a captured program holds opcode {op}")
        return steps, list(used.items())

    @_device_lost_checked
    def run_prepared(self, prepared, blob):
        """Run a prepare()d program; False (nothing run) if one of its buffers was remade since
        (the caller prepares it again)."""
        steps, used = prepared
        buffers = self.buffers
        for bid, obj in used:
            if buffers.get(bid) is not obj:
                return False
        blob = memoryview(blob)
        enc = self._encoding()
        for st in steps:
            kind = st[0]
            if kind == 3:
                enc.dispatch_one(st[1], st[2], st[3], st[4], st[5], st[6])
            elif kind == 0:
                enc.dispatch(st[1], st[2], st[3], st[4], st[5], st[6])
            elif kind == 1:
                enc.copy(st[1], st[2], st[3], st[4], st[5])
            else:
                enc.write(st[1], st[2], blob[st[3]:st[3] + st[4]])
        enc.submit()
        return True

    def _decode_dispatch(self, words, i):
        """The DISPATCH row at words[i]: (pipeline, bind group, dynamic offsets, grid, the
        buffer ids it binds, the next row's index)."""
        pid, x, y, z, nb = words[i + 1:i + 6]
        pipeline, bgl, uniforms, params_first = self.pipelines[pid]
        j = i + 6 + 3 * nb
        rows = list(words[i + 6:j])
        # execute()'s key where it has one, so that a captured program and eager flushes share
        # the bind group of the same buffers
        key = (id(bgl), words[i + 8], tuple(words[i + 9:j])) if params_first else None
        offsets = []
        for k, is_uniform in enumerate(uniforms):
            if is_uniform:
                offsets.append(rows[3 * k + 1])
                rows[3 * k + 1] = 0   # bound at 0, moved by the dynamic offset
        return pipeline, self._bind_group(bgl, tuple(rows), key), offsets, (x, y, z), rows[0::3], j

    def _row(self, words, i, key, handle):
        """What execute() hands the encoding for the DISPATCH row at words[i] (key: the row's
        words less the DISPATCH opcode, its params offset zeroed): (pipeline, bind group, x, y,
        z) as the encoding's handle() gives them, or False for a layout other than the
        runtime's (params uniform first, storage buffers after); kept in _rows."""
        if len(self._rows) > 4096:
            self._rows.clear()
            self._rows_of_group.clear()
        pipeline, bgl, _, params_first = self.pipelines[words[i + 1]]
        hit = False
        if params_first:
            # (the params binding's offset is dynamic: the bind group is keyed by its size and
            # the storage buffers' rows)
            j = i + 6 + 3 * words[i + 5]
            group_key = (id(bgl), words[i + 8], tuple(words[i + 9:j]))
            group = self._bind_groups.get(group_key)
            if group is None:
                rows = list(words[i + 6:j])
                rows[1] = 0
                group = self._bind_group(bgl, tuple(rows), group_key)
            hit = (handle(pipeline), handle(group), words[i + 2], words[i + 3], words[i + 4])
            self._rows_of_group.setdefault(group_key, []).append(key)
        self._rows[key] = hit
        return hit

    def _bind_group(self, bgl, rows, key=None):
        """The bind group for rows of (buffer id, offset, size), cached (under key if given):
        creating one is most of a small dispatch's cost in wgpu-py."""
        if key is None:
            key = (id(bgl), rows)
        group = self._bind_groups.get(key)
        if group is None:
            if len(self._bind_groups) > 4096:
                self._bind_groups.clear()
                self._groups_of_buffer.clear()
                self._rows.clear()
                self._rows_of_group.clear()
            group = self._bind_groups[key] = self._create_bind_group(bgl, rows)
            for bid in rows[0::3]:
                self._groups_of_buffer.setdefault(bid, set()).add(key)
        return group

    def _create_bind_group(self, bgl, rows):
        """A bind group of whole-buffer rows: straight through wgpu-native's C descriptor where
        wgpu-py's internals are as expected (its create_bind_group checks and converts each entry
        as a dict: ~3x the cost, paid for every new combination of buffers in eager code)."""
        n = len(rows) // 3
        raw = self._raw_bind_group
        if raw is not None and n <= _MAX_BINDINGS:
            entries, desc, create, wrap = raw
            buffers = self.buffers
            for k in range(n):
                e = entries[k]
                e.binding = k
                e.buffer = buffers[rows[3 * k]]._internal
                e.offset = rows[3 * k + 1]
                e.size = rows[3 * k + 2]
            desc.layout = bgl._internal
            desc.entryCount = n
            return wrap("", create(self.device._internal, desc), self.device)
        entries = [{"binding": k, "resource": {"buffer": self.buffers[rows[3 * k]],
                                               "offset": rows[3 * k + 1], "size": rows[3 * k + 2]}}
                   for k in range(n)]
        return self.device.create_bind_group(layout=bgl, entries=entries)

    def _forget_bind_groups(self, bid):
        for key in self._groups_of_buffer.pop(bid, ()):
            self._bind_groups.pop(key, None)
            for row in self._rows_of_group.pop(key, ()):   # (the rows that set it)
                self._rows.pop(row, None)

    @_device_lost_checked
    def read(self, buffer_id, offset, nbytes):
        """Blocking readback of nbytes at offset (both multiples of 4)."""
        return self.queue.read_buffer(self.buffers[buffer_id], offset, nbytes)

    async def read_async(self, buffer_id, offset, nbytes):
        return self.read(buffer_id, offset, nbytes)

    def read_many(self, ranges):
        """(buffer_id, offset, nbytes) ranges, read one by one (wgpu-py maps per read)."""
        return [self.read(*r) for r in ranges]

    async def read_many_async(self, ranges):
        return self.read_many(ranges)

    @_device_lost_checked
    def wait(self):
        """Block until the GPU has finished everything submitted: wgpu-native's blocking device
        poll (~10 us on an H100's host), else reading a tiny buffer, which waits for the queue
        too but costs ~170 us (wgpu-py 0.32's on_submitted_work_done_sync is broken)."""
        poll_wait = getattr(self.device, "_poll_wait", None)
        if poll_wait is not None:
            poll_wait()
            return
        if self._fence is None:
            u = self._wgpu.BufferUsage
            self._fence = self.device.create_buffer(size=4, usage=u.COPY_SRC | u.COPY_DST)
        self.queue.read_buffer(self._fence, 0, 4)

    async def wait_async(self):
        self.wait()

    def can_block(self):
        return True

    # -- device loss ------------------------------------------------------------------------
    def destroy_device(self):
        """device.destroy(): what a lost device looks like, for tests (torchweb.webgpu._destroy_device)."""
        self.device.destroy()

    def close(self):
        """Drop every GPU object of this device and destroy it (lost, or reset): nothing of it
        is used again."""
        self.buffers.clear()
        self.pipelines.clear()
        self.layouts.clear()
        self._bind_groups.clear()
        self._groups_of_buffer.clear()
        self._rows.clear()
        self._rows_of_group.clear()
        self._fence = None
        self._encoding = None
        limits = {k: self.device.limits[k] for k in self.limits}   # (those torchweb asked for)
        try:
            self.device.destroy()
            self.device._poll_wait()   # (its lost callback now, not as a stale reason for the next device)
        except Exception:   # (already lost: nothing left to destroy)
            pass
        _LOSSES.clear()
        self.limit = limits.get    # (torchweb.webgpu.limits() still answers, without the device)
        self.device = self.queue = self.adapter = self._raw_bind_group = None

    def stats(self):
        """How many GPU objects are alive (leak checks; the same keys as runtime.mjs's stats)."""
        return {"buffers": len(self.buffers), "pipelines": len(self.pipelines),
                "layouts": len(self.layouts), "bindGroups": len(self._bind_groups)}
