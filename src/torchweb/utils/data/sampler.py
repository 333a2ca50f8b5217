"""Samplers: PyTorch's torch.utils.data.sampler (Sampler, SequentialSampler, RandomSampler,
SubsetRandomSampler, WeightedRandomSampler, BatchSampler).

Random orders come from torchweb's generators (a torchweb.Generator, or the default one that
torchweb.manual_seed seeds): each draw takes one call of the generator and shuffles in pure
Python, so the orders are deterministic under a seed but not PyTorch's (mt19937) orders."""

import itertools
import math
import random as _pyrandom
from typing import Generic, TypeVar

from ... import _random
from ..._device import CPU

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)


def _generator(generator):
    """The generator a draw uses: the given one, else the cpu device's default generator."""
    if generator is not None:
        return generator
    return _random.default_generator(CPU)


def _python_random(generator):
    """A Python Random seeded by one call of a torchweb generator (None: the default one)."""
    seed, call = _generator(generator).next_call()
    return _pyrandom.Random(seed * 1000003 + call)


def randperm_list(n, generator):
    """torch.randperm(n, generator=generator).tolist(), from torchweb's generator."""
    return _random.permutation(n, _generator(generator))


def _plain(x):
    """Tensors (torchweb's, numpy's) and sequences as nested lists of Python numbers."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (list, tuple)) or (hasattr(x, "__len__") and hasattr(x, "__getitem__")
                                         and not isinstance(x, (str, bytes))):
        return [_plain(v) for v in x]
    return x


def _shape(x):
    return (len(x),) + (_shape(x[0]) if x else ()) if isinstance(x, list) else ()


def _multinomial(weights, num_samples, replacement, generator):
    """torch.multinomial of a 1-D list of weights, with PyTorch's errors."""
    n = len(weights)
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if any(math.isnan(w) or math.isinf(w) or w < 0 for w in weights):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if sum(weights) <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _python_random(generator)
    if replacement:
        return rng.choices(range(n), weights=weights, k=num_samples)
    # Without replacement: the largest w / E (E ~ Exp(1)) keys, as PyTorch draws them; zero
    # weights come last, in index order.
    keys = [w / rng.expovariate(1.0) if w > 0 else 0.0 for w in weights]
    order = sorted(range(n), key=lambda i: -keys[i])
    return order[:num_samples]


class Sampler(Generic[_T_co]):
    """Base class for all Samplers: subclasses provide __iter__ (indices or lists of indices)
    and may provide __len__."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Samples elements sequentially, always in the same order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Samples elements randomly: a shuffled order of the data source (replacement=False), or
    num_samples indices drawn with replacement. generator: a torchweb.Generator (default: a new
    seed from torchweb's default generator at each iteration)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            # As PyTorch: one seed from the default generator per iteration (per epoch).
            seed = _python_random(None).getrandbits(63)
            generator = _random.Generator().manual_seed(seed)
        else:
            generator = self.generator
        if self.replacement:
            rng = _python_random(generator)
            for _ in range(self.num_samples):
                yield rng.randrange(n)
        else:
            for _ in range(self.num_samples // n):
                yield from randperm_list(n, generator)
            yield from randperm_list(n, generator)[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """Samples elements randomly from a given list of indices, without replacement."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm_list(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Samples elements from [0, .., len(weights) - 1] with the given probabilities (weights,
    not necessarily summing to one). `weights` is kept as a list of Python floats (PyTorch keeps
    a float64 tensor, which WebGPU does not have)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        values = _plain(weights)
        shape = _shape(values)
        if len(shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(shape)}")
        self.weights = [float(v) for v in values]
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights, self.num_samples, self.replacement, self.generator)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Wraps another sampler (or any iterable of indices) to yield mini-batches of indices."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([sampler_iter] * self.batch_size)):
                yield [*batch]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
