"""Rounding to bfloat16 on the host, as PyTorch's c10::BFloat16 does: (bits + 0x7fff + lowest
kept bit) with the low 16 bits cleared (nearest, ties to even), NaN left as it is. bfloat16 is
held in float32 words (_dtype.py); these give the words their bfloat16 values: with numpy
(the cpu device, loading) and without it (Pyodide's uploads of Python numbers)."""

from array import array


def round_np(np, a):
    """a (a float numpy array) with its values rounded to bfloat16, in a's dtype."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    kept = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(a), a, kept.view(np.float32).reshape(np.shape(a))).astype(a.dtype)


def round_in_place_np(np, a):
    """Round a float32 numpy array (a writable view) to bfloat16 values where it is."""
    if a.size:
        a[...] = round_np(np, a)


def round_words(values):
    """A Python sequence of numbers as an array('f') of their bfloat16 values."""
    words = array("f", values)
    bits = memoryview(words).cast("B").cast("I")
    for i, b in enumerate(bits):
        if (b & 0x7FFFFFFF) <= 0x7F800000:   # (not NaN)
            bits[i] = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return words


def bits_to_words(halves):
    """array('H') of bfloat16 bit patterns (the file format) -> array('f') of their values."""
    words = array("I", [h << 16 for h in halves])
    return array("f", words.tobytes())
