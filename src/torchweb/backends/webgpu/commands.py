"""The command stream that the runtime records and a driver executes in one call.

Every GPU action after set-up is a row of 32-bit words in one array, executed in order:
that is what lets the browser driver do a whole flush with one JS call, and what keeps
uploads (queue.writeBuffer) ordered with the dispatches around them. src/torchweb/_js/runtime.mjs
decodes the same format; keep the two in step.

    CREATE   buffer_id  nbytes  usage            make a buffer (usage: STORAGE or UNIFORM)
    DESTROY  buffer_id                           destroy a buffer
    WRITE    buffer_id  dst_offset  blob_offset  nbytes    copy bytes of the blob into a buffer
    DISPATCH pipeline_id  x  y  z  nbind  (buffer_id offset nbytes) * nbind
    COPY     src_id  src_offset  dst_id  dst_offset  nbytes
"""

from array import array

CREATE, DESTROY, WRITE, DISPATCH, COPY = 1, 2, 3, 4, 5
USAGE_STORAGE, USAGE_UNIFORM = 1, 2
_LENGTH = {CREATE: 4, DESTROY: 2, WRITE: 5, COPY: 6}


def row_length(words, i):
    """The number of words of the row starting at words[i]."""
    op = words[i]
    return 6 + 3 * words[i + 5] if op == DISPATCH else _LENGTH[op]


class CommandStream:
    """Words and the byte blob they point into, up to the next flush. (DISPATCH rows are
    written by Runtime.dispatch itself, on the hot path of every kernel.)"""

    __slots__ = ("words", "blob", "dispatches")

    def __init__(self):
        self.words = array("I")
        self.blob = bytearray()
        self.dispatches = 0

    def __len__(self):
        return len(self.words)

    def create(self, buffer_id, nbytes, usage):
        self.words.extend((CREATE, buffer_id, nbytes, usage))

    def destroy(self, buffer_id):
        self.words.extend((DESTROY, buffer_id))

    def write(self, buffer_id, dst_offset, data):
        # Blob offsets stay 4-aligned so that JS can view the blob as words too.
        pad = (-len(self.blob)) % 4
        if pad:
            self.blob.extend(b"\0" * pad)
        start = len(self.blob)
        self.blob.extend(data)
        self.words.extend((WRITE, buffer_id, dst_offset, start, len(data)))

    def copy(self, src_id, src_offset, dst_id, dst_offset, nbytes):
        self.words.extend((COPY, src_id, src_offset, dst_id, dst_offset, nbytes))
