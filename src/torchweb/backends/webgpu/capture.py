"""Capture and replay of a call's GPU work (what torchweb.compile stands on, issue 9).

A Recorder attached to the runtime keeps every command stream flushed while a function runs
eagerly (so the capturing call itself is an ordinary eager call). `finish` turns the streams
into a Graph: one program of command words and one blob that a replay hands to the driver in
one call, with no Python per op. Like a CUDA graph, the program's buffers are fixed:

- inputs are copied into buffers the graph owns before the program runs (and back after it,
  for inputs the program writes);
- outputs are written into buffers the graph owns and copied into fresh tensors after it;
- temporaries (buffers the call freed by its end) stay reserved for the graph;
- everything else the program touches (parameters, gradients, optimizer state) is held by the
  graph so that its buffer cannot be freed and reused while the graph lives.

What cannot be replayed is refused (Refused, with the reason): a readback inside the call
(Python then depends on GPU values), data uploaded from Python and read by the program, a read
of a buffer that existed before the call and that the call freed (its content would differ on
replay), random numbers (the generator would not advance). The optimizer's step registers a
hook that recomputes its scalars (step count, bias corrections, learning rate) for each replay:
they are the only uniforms patched.
"""

import os
import struct
import traceback
from array import array

from .. import pending
from . import commands
from .errors import ERROR_BUFFER_ID
from .kernels.wgsl import scalar_bits
from .storage import GPUStorage

PARAMS_BUFFER_ID = 1   # runtime.PARAMS_BUFFER_ID (imported here would be circular)


class Refused(Exception):
    """This call cannot be captured; the message says why (torchweb.compile runs it eagerly)."""


class Recorder:
    def __init__(self, rt):
        self.rt = rt
        self.segments = []       # (words, blob, head length) of each flush, as executed
        self.refused = None      # the first reason replay would be wrong
        self.storages = {}       # buffer id -> storage object that reached it (strong refs)
        self.acquired = set()    # buffers taken from the pool during the call
        self.released = {}       # buffer live before the call -> (segment, word) it was freed at
        self.exempt = set()      # buffers whose uploads a replay hook redoes (optimizer step)
        self.scalar_slots = []   # (segment, byte offset in its blob, count, f32 or u32) of patched uniforms
        self.hooks = []          # callables run per replay, returning the patched scalars
        self.optimizers = []     # the optimizers whose step registered one
        self.redraws = 0         # random draws a replay redoes (their counters patched)
        self.flushes0 = rt.flushes
        self.uploads = {}        # buffer id -> where it was uploaded (TORCHWEB_COMPILE_DEBUG)
        self.acquisitions = {}   # buffer id -> positions where the pool handed it out
        self.sites = []          # (word position, buffer id, stream position) of each reference
        self._merged = None      # _merge()'s result

    # -- called by the runtime while recording ---------------------------------------------
    def refuse(self, why):
        if self.refused is None:
            self.refused = why
            if os.environ.get("TORCHWEB_COMPILE_DEBUG"):   # where it happened
                self.refused += "\n" + "".join(traceback.format_stack(limit=12)[:-1])

    def on_upload(self, bid):
        if os.environ.get("TORCHWEB_COMPILE_DEBUG") and bid not in self.uploads:
            self.uploads[bid] = "".join(traceback.format_stack(limit=10)[:-2])

    def record(self, words, blob, head_len):
        self.segments.append((array("I", words), bytes(blob), head_len))

    def position(self):
        return (len(self.segments), len(self.rt.stream.words))

    def on_acquire(self, bid):
        self.acquired.add(bid)
        self.acquisitions.setdefault(bid, []).append(self.position())

    def on_release(self, bid):
        if bid not in self.acquired and bid not in self.released:
            self.released[bid] = self.position()

    def note_scalars(self, first_word, count, kind="f32"):
        """The last dispatch's uniform words [first_word, first_word + count) are scalars (f32,
        or u32: a random draw's counter) that a replay hook recomputes."""
        flushes, off = self.rt.last_dispatch
        self.scalar_slots.append((flushes - self.flushes0, off + 4 * first_word, count, kind))

    # -- building the graph ----------------------------------------------------------------
    def signature(self, inputs, known=None):
        """What must be equal between two calls for their recordings to be one program: the
        words with each buffer named by what it is (the call's k-th input, a buffer that existed
        before the call by its id, or the n-th buffer the pool handed out during the call: pool
        reuse may differ between calls without changing the program), and the blob (uniforms,
        uploads) without the scalars that replay hooks recompute. known: names for buffers
        that existed before the call ({buffer id: name}: a backward's reads of what its forward
        made, named by the forward's recording). Sets made_names: {buffer id: n} of the
        buffers made during the call, by their last acquisition."""
        from bisect import bisect_right
        if self.refused:
            raise Refused(self.refused)
        words, blob, refs, _, _, scalar_offsets = self._merge()
        canon = array("I", words)
        slot = {s._buffer_id: k for k, s in enumerate(inputs)}
        names, numbered = [], {}
        for pos, bid, where in self.sites:
            canon[pos] = 0
            if bid in slot:
                names.append(("input", slot[bid]))
            elif bid in self.acquisitions:
                key = (bid, bisect_right(self.acquisitions[bid], where))
                names.append(("made", numbered.setdefault(key, len(numbered))))
            elif known is not None and bid in known:
                names.append(("known", known[bid]))
            else:
                names.append(("before", bid))
        self.made_names = {bid: numbered[(bid, len(at))] for bid, at in self.acquisitions.items()
                           if (bid, len(at)) in numbered}
        blob = bytearray(blob)
        for off, count, _ in scalar_offsets:
            blob[off:off + 4 * count] = bytes(4 * count)
        return bytes(canon), tuple(names), bytes(blob)

    def finish(self, inputs, outputs, rename=None):
        """The Graph for this recording, given the storages of the call's tensor inputs and
        outputs (outputs may not alias inputs or anything made before the call). rename:
        {buffer id: another graph's buffer} for buffers made before the call that the program
        must read in that graph's buffers instead (a backward reading what its forward's
        replay wrote)."""
        if self.refused:
            raise Refused(self.refused)
        words, blob, refs, first, writes, scalar_offsets = self._merge()
        for bid, (seg, pos) in self.released.items():
            if bid in first and first[bid] < (seg, pos):
                if os.environ.get("TORCHWEB_COMPILE_DEBUG"):
                    print("released", bid, (seg, pos), "first", first[bid], self.storages.get(bid))
                raise Refused("it reads a tensor made before the call and then frees it (e.g. a "
                              ".grad read before zero_grad(set_to_none=True)); its buffer would "
                              "hold something else on replay")
        in_ids = [s._buffer_id for s in inputs]
        out_ids = [s._buffer_id for s in outputs]
        for bid in out_ids:
            if bid not in self.acquired or bid in in_ids:
                raise Refused("it returns a tensor that existed before the call (an input, a "
                              "parameter, or a view of one)")
        return Graph(self.rt, words, blob, refs, writes, scalar_offsets, self.hooks,
                     inputs, outputs, self.storages, rename)

    def _merge(self):
        """All segments as one program: CREATE/DESTROY dropped (the buffers exist), uploads
        checked, blob offsets moved; refs: buffer id -> word positions naming it. Made once
        (signature() and finish() both need it; the recording has stopped by then)."""
        if self._merged is None:
            self._merged = self._merge_segments()
        return self._merged

    def _merge_segments(self):
        out, blob = array("I"), bytearray()
        refs, first, writes = {}, {}, set()
        self.sites = []
        params_at = []     # per segment: where its uniforms' bytes start in the new blob
        kinds = self.rt.pipeline_kinds
        for k, (w, b, head_len) in enumerate(self.segments):
            params_at.append(None)
            i, n = 0, len(w)
            while i < n:
                op = w[i]
                where = (k, i - head_len)
                if op == commands.CREATE:
                    i += 4
                elif op == commands.DESTROY:
                    if w[i + 1] in refs:
                        raise Refused("a buffer the call used was destroyed during it")
                    i += 2
                elif op == commands.WRITE:
                    bid, dst, start, nbytes = w[i + 1:i + 5]
                    if bid != ERROR_BUFFER_ID and bid not in self.exempt:
                        # uploads are replayed as recorded (signature() compares two calls'
                        # bytes); only the kept uploads' bytes go into the program's blob
                        blob.extend(b"\0" * ((-len(blob)) % 4))
                        if bid == PARAMS_BUFFER_ID and params_at[k] is None:
                            params_at[k] = len(blob)   # the uniforms start here in the new blob
                        out.extend((commands.WRITE, bid, dst, len(blob), nbytes))
                        blob.extend(b[start:start + nbytes])
                        if bid != PARAMS_BUFFER_ID:
                            refs.setdefault(bid, []).append(len(out) - 4)
                            self.sites.append((len(out) - 4, bid, where))
                            first.setdefault(bid, where)
                            writes.add(bid)
                    i += 5
                elif op == commands.DISPATCH:
                    nb = w[i + 5]
                    start = len(out)
                    out.extend(w[i:i + 6 + 3 * nb])
                    bk = kinds[w[i + 1]]
                    for j in range(nb):
                        bid = out[start + 6 + 3 * j]
                        if bid in (PARAMS_BUFFER_ID, ERROR_BUFFER_ID):
                            continue
                        refs.setdefault(bid, []).append(start + 6 + 3 * j)
                        self.sites.append((start + 6 + 3 * j, bid, where))
                        first.setdefault(bid, where)
                        if bk[j] != "read":
                            writes.add(bid)
                    i += 6 + 3 * nb
                elif op == commands.COPY:
                    start = len(out)
                    out.extend(w[i:i + 6])
                    for p in (start + 1, start + 3):
                        refs.setdefault(out[p], []).append(p)
                        self.sites.append((p, out[p], where))
                        first.setdefault(out[p], where)
                    writes.add(out[start + 3])
                    i += 6
                else:
                    raise Refused(f"unknown command {op} in the stream")
        scalar_offsets = [(params_at[s] + off, count, kind) for s, off, count, kind in self.scalar_slots]
        return out, blob, refs, first, writes, scalar_offsets


class Graph:
    """A replayable program (see the module's docstring)."""

    def __init__(self, rt, words, blob, refs, writes, scalar_offsets, hooks, inputs, outputs, seen,
                 rename=None):
        self.rt = rt
        self.blob = bytes(blob)
        self.scalar_offsets = scalar_offsets
        self.hooks = hooks
        self.owned = []      # (buffer id, size) this graph gives back to the pool when it dies
        pool = rt.pool
        # inputs and outputs: buffers of the graph's own, named in the program instead (their
        # sites set aside first: a buffer the pool hands the graph for one may be a temporary
        # of the program, free now, which must be reserved as such below)
        in_sites = [refs.pop(s._buffer_id, ()) for s in inputs]
        out_sites = [refs.pop(s._buffer_id, ()) for s in outputs]
        for bid, gid in (rename or {}).items():     # (the other graph owns those buffers)
            self._rename(words, refs.pop(bid, ()), gid)
        # temporaries: referenced, and free in the pool now -> reserved for the graph
        self.held = []       # storages the program writes or reads, kept alive
        for bid in refs:
            size = pool.take(bid)
            if size is not None:
                self.owned.append((bid, size))
                continue
            st = seen.get(bid)
            if st is None or st._buffer_id != bid:
                self.release()
                raise Refused("a buffer of unknown owner is used (internal)")
            self.held.append(st)
        self.in_slots = []   # (graph buffer, size, written by the program)
        for s, sites in zip(inputs, in_sites):
            gid, size = pool.acquire(s.size)
            self.owned.append((gid, size))
            self._rename(words, sites, gid)
            self.in_slots.append((gid, s.size, s._buffer_id in writes))
        self.out_slots = []  # (graph buffer, numel, dtype)
        for s, sites in zip(outputs, out_sites):
            gid, size = pool.acquire(s.size)
            self.owned.append((gid, size))
            self._rename(words, sites, gid)
            self.out_slots.append((gid, s.numel, s.dtype))
        self.words = words
        self.prepared = None     # the driver's decoded form (driver_native.prepare)
        self.error_block = None

    @staticmethod
    def _rename(words, positions, new_id):
        for p in positions:
            words[p] = new_id

    def replay(self, inputs):
        """Run the program on these input storages (same sizes as captured); the fresh output
        storages, in order."""
        rt = self.rt
        pre = array("I")
        post = array("I")
        for (gid, size, written), s in zip(self.in_slots, inputs):
            if s.size != size:
                raise RuntimeError("torchweb.compile: an input's buffer changed size (internal)")
            bid = s.buffer_for_write()
            pre.extend((commands.COPY, bid, 0, gid, 0, size))
            if written:
                post.extend((commands.COPY, gid, 0, bid, 0, size))
        outs = []
        for gid, numel, dtype in self.out_slots:
            st = GPUStorage(rt, numel, dtype)
            st.touched = True
            post.extend((commands.COPY, gid, 0, st._buffer_id, 0, st.size))
            outs.append(st)
        blob = self.blob
        if self.scalar_offsets:
            values = []
            for hook in self.hooks:
                values.extend(hook())
            if len(values) != len(self.scalar_offsets):
                raise RuntimeError("torchweb.compile: the optimizer's step or the random draws no longer "
                                   "match the captured ones (internal)")
            blob = bytearray(blob)
            for (off, count, kind), vals in zip(self.scalar_offsets, values):
                if kind == "u32":
                    struct.pack_into(f"<{count}I", blob, off, *vals)
                    continue
                try:   # (f32 words packed at once: the bits scalar_bits gives, one value at a time)
                    struct.pack_into(f"<{count}f", blob, off, *vals)
                except OverflowError:   # past float32's range: scalar_bits' inf
                    struct.pack_into(f"<{count}I", blob, off, *[scalar_bits(v, "f32") for v in vals])
        rt.run_program(pre, self, post, blob)
        rt.errors.replayed(self.error_block)
        return outs

    def release(self):
        pool = self.rt.pool
        for bid, size in self.owned:
            if not self.rt.closed:
                pool.release(bid, size)
        self.owned = []
        self.held = []

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass


def start(rt, error_block=None):
    """Begin recording (pending work runs first, outside the recording); error_block: the
    errors block of an earlier recording of the same call, to reuse."""
    pending.realize_all()
    rt.flush()
    rec = Recorder(rt)
    rec.pool_limit = rt.pool.max_free_bytes
    rt.pool.max_free_bytes = 1 << 62     # no buffer destroyed while recording
    rec.error_block = rt.errors.begin_block(error_block)
    rt.capture = rec
    rt.plain_free = False   # (Runtime.free: each release is recorded now)
    rt._stream_deadline = 0.0   # (so record() takes every dispatch to its full rules: last_dispatch)
    return rec


def stop(rt, rec):
    """End recording (pending work of the call runs first, inside it)."""
    try:
        pending.realize_all()
        rt.flush()
    finally:
        rt.capture = None
        rt.pool.max_free_bytes = rec.pool_limit
        rec.error_block = rt.errors.end_block(keep=True)


def build(rt, rec, inputs, outputs, rename=None):
    """The Graph of a stopped recording (or Refused); then the pool is trimmed as usual."""
    try:
        graph = rec.finish(inputs, outputs, rename)
        graph.error_block = rec.error_block
        return graph
    finally:
        rt.pool.trim(rt.pool.limit)
