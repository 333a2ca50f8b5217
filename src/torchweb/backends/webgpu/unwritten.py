"""Buffers an out-of-memory left unwritten. When a flush fails at a buffer creation for good,
the native driver skips the rest of that flush's dispatches, copies and writes; the tensors
they would have written hold nothing computed (a failed buffer is made again blank when used).
Reading one raises instead of returning those values, naming the out-of-memory, and so does
reading anything computed from one later (the mark follows the rows of later flushes).

A mark is dropped when the tensor's storage dies (its buffer back in the pool: Runtime.free), at
that point of the recorded rows (a row recorded before still reads the unwritten values)."""

from . import commands

PARAMS_BUFFER_ID = 1   # runtime.PARAMS_BUFFER_ID (the uniforms: written again every flush)


def written(words, start, kinds):
    """The buffer ids the rows of words from index start on write: dispatches' 'write'
    bindings (kinds: pipeline id -> binding kinds, the params uniform first), copies' and
    uploads' destinations."""
    out = set()
    i, n = start, len(words)
    while i < n:
        op = words[i]
        if op == commands.DISPATCH:
            for k, kind in enumerate(kinds.get(words[i + 1], ())):
                if kind == "write":
                    out.add(words[i + 6 + 3 * k])
        elif op == commands.COPY:
            out.add(words[i + 3])
        elif op == commands.WRITE:
            out.add(words[i + 1])
        i += commands.row_length(words, i)
    out.discard(PARAMS_BUFFER_ID)
    return out


def spread(words, marks, kinds, freed):
    """marks (buffer id -> why it is unwritten) after a flush of words ran: a dispatch that
    reads a marked buffer, or a copy from one, leaves what it writes marked too; a buffer
    whose storage died (freed: (word index, id) in the order recorded, Runtime.free) loses its
    mark there, so a temporary carries it to the rows after it that read it and no further."""
    freed = iter(freed)
    at, gone = next(freed, (None, None))
    i, n = 0, len(words)
    while i < n:
        while at is not None and at <= i:
            marks.pop(gone, None)
            at, gone = next(freed, (None, None))
        op = words[i]
        if op == commands.DISPATCH:
            bound = kinds.get(words[i + 1], ())
            ids = [words[i + 6 + 3 * k] for k in range(len(bound))]
            why = next((marks[b] for b, kind in zip(ids, bound) if kind == "read" and b in marks), None)
            if why is not None:
                for b, kind in zip(ids, bound):
                    if kind == "write" and b != PARAMS_BUFFER_ID:
                        marks[b] = why
        elif op == commands.COPY and words[i + 1] in marks:
            marks[words[i + 3]] = marks[words[i + 1]]
        i += commands.row_length(words, i)
    while at is not None:
        marks.pop(gone, None)
        at, gone = next(freed, (None, None))


def unwritten_error(why):
    return RuntimeError(
        "torchweb: this tensor was never computed: an earlier out of memory stopped the op that "
        f"writes it, or one it was computed from ({why}). Compute it again once memory is freed")
