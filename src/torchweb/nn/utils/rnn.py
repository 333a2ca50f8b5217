"""torch.nn.utils.rnn: padding and packing variable-length sequences.

The packing and padding kernels PyTorch writes in C++ (_pack_padded_sequence,
_pad_packed_sequence, pad_sequence) are written here from slices, cat and stack, so their
gradients come from those ops. Lengths and batch sizes are host data (PyTorch keeps them on the
CPU): batch_sizes is an int64 tensor on the cpu device, or, where numpy (which the cpu device
needs) is missing, on the data's device.
"""

from collections.abc import Iterable
from typing import NamedTuple

from ... import _creation as C
from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.join import cat, stack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _host_device(fallback):
    """Where lengths and batch sizes live: the cpu device when it can run (numpy), else fallback."""
    try:
        import numpy  # noqa: F401  (the cpu device's only need; optional in Pyodide)
        return "cpu"
    except ImportError:
        return fallback


def _host_ints(t):
    return [int(v) for v in (t.tolist() if isinstance(t, Tensor) else t)]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: object
    unsorted_indices: object


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and the list of batch sizes of a packed sequence (made by
    pack_padded_sequence or pack_sequence, never by hand): data is the time steps' rows
    stacked, batch_sizes[t] how many sequences are still running at step t; sorted_indices and
    unsorted_indices map between the packed order and the caller's batch order."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                                                unsorted_indices))

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        """A PackedSequence with data moved/converted as Tensor.to does (batch_sizes stays)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def call_to(t):
            return t.to(data.device)
        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, call_to),
                          bind(self.unsorted_indices, call_to))

    def cpu(self):
        return self.to("cpu")

    def webgpu(self):
        return self.to("webgpu")

    def cuda(self, *args, **kwargs):
        return self.to("webgpu")

    def double(self):
        return self.to(dtype=D.dtype_named("float64"))

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    def byte(self):
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu" and _host_device(None) == "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. "
                "Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def _packed_sequence_init(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    data, batch_sizes, sorted_indices, unsorted_indices = _packed_sequence_init_args(
        data, batch_sizes, sorted_indices, unsorted_indices)
    return PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices)


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None)."""
    if permutation is None:
        return None
    output = C.empty_like(permutation)
    output.scatter_(0, permutation, C.arange(0, permutation.numel(), device=permutation.device))
    return output


def _pack_padded(input, lengths, batch_first):
    """PyTorch's _pack_padded_sequence: (data, batch_sizes) for a time-major view of input and
    lengths sorted in decreasing order."""
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.size(1)
    if len(lengths) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch_size})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in "
                           "'lengths' that is <= 0")
    for i in range(batch_size - 1):
        if lengths[batch_size - 1 - i] > lengths[batch_size - 2 - i]:
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                "sidestep this requirement if you do not need ONNX exportability.")
    step_shape = (-1,) + tuple(input.shape[2:])
    steps, batch_sizes = [], []
    prev_l = 0
    for i in range(batch_size):
        l = lengths[batch_size - 1 - i]
        if l > prev_l:
            current = batch_size - i
            steps.append(input[prev_l:l, :current].reshape(step_shape))
            batch_sizes += [current] * (l - prev_l)
            prev_l = l
    return cat(steps), batch_sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch of variable-length sequences (T x B x *, or B x T x * with
    batch_first) given each one's length. With enforce_sorted=False the lengths may come in any
    order (they are sorted, and the permutation kept in sorted_indices)."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} {lengths.dtype.word} tensor")
        host = _host_ints(lengths)
    else:
        host = _host_ints(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(host)), key=lambda k: -host[k])   # stable, as PyTorch's sort
        host = [host[k] for k in order]
        sorted_indices = C.tensor(order, dtype=D.int64, device=input.device)
        batch_dim = 0 if batch_first else 1
        input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack_padded(input, host, batch_first)
    batch_sizes = C.tensor(batch_sizes, dtype=D.int64, device=_host_device(input.device))
    return _packed_sequence_init(data, batch_sizes, sorted_indices, None)


def _pad_packed(data, batch_sizes, batch_first, padding_value, total_length):
    """PyTorch's _pad_packed_sequence: (padded T x B x * tensor, lengths as a list)."""
    max_batch_size = batch_sizes[0]
    max_real_seq_length = len(batch_sizes)
    max_seq_length = max(total_length, max_real_seq_length) if total_length > 0 else max_real_seq_length
    trailing = tuple(data.shape[1:])
    lengths = [0] * max_batch_size
    blocks = []
    data_offset, prev_batch_size, prev_i = 0, max_batch_size, 0
    for i in range(max_real_seq_length + 1):
        batch_size = batch_sizes[i] if i != max_real_seq_length else 0
        if batch_size != prev_batch_size:
            n = prev_batch_size * (i - prev_i)
            block = data[data_offset:data_offset + n].reshape((i - prev_i, prev_batch_size) + trailing)
            if prev_batch_size < max_batch_size:
                pad = C.full((i - prev_i, max_batch_size - prev_batch_size) + trailing, padding_value,
                             dtype=data.dtype, device=data.device)
                block = cat([block, pad], 1)
            blocks.append(block)
            data_offset += n
            prev_i = i
        for j in range(batch_size, prev_batch_size):
            lengths[j] = i
        prev_batch_size = batch_size
    if max_seq_length > max_real_seq_length:
        blocks.append(C.full((max_seq_length - max_real_seq_length, max_batch_size) + trailing,
                             padding_value, dtype=data.dtype, device=data.device))
    out = cat(blocks) if len(blocks) > 1 else blocks[0]
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded tensor, lengths), the padded tensor T x B x *
    (B x T x * with batch_first), T = total_length if given."""
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length "
                             "of the longest sequence in input, but got "
                             f"total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded_output, lengths = _pad_packed(sequence.data, _host_ints(sequence.batch_sizes), batch_first,
                                         padding_value, max_seq_length)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        lengths = [lengths[k] for k in _host_ints(unsorted_indices)]
        padded_output = padded_output.index_select(batch_dim, unsorted_indices)
    return padded_output, C.tensor(lengths, dtype=D.int64, device=sequence.batch_sizes.device)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks a list of variable-length tensors (L_i x *) into one padded tensor:
    T x B x * (B x T x * with batch_first), padded with padding_value on padding_side."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    trailing = tuple(first.shape[1:])
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        length = s.size(0)
        if s.dtype != first.dtype:
            s = s.to(first.dtype)
        if tuple(s.shape[1:]) != trailing:
            s = s.expand((length,) + trailing)   # copy_'s broadcast (and its error)
        if length < max_len:
            pad = C.full((max_len - length,) + trailing, padding_value, dtype=first.dtype, device=first.device)
            s = cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded tensor back into a list of variable-length tensors (lengths[i] rows each).
    Unlike PyTorch, the caller's tensor is not transposed in place when batch_first is False."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:length] for seq, length in zip(padded_sequences, _host_ints(lengths), strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors (pad_sequence, then pack_padded_sequence)."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Unpacks a PackedSequence into the list of variable-length tensors it holds."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
