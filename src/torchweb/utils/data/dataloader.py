"""DataLoader: PyTorch's torch.utils.data.DataLoader, loading in the calling process.

The browser has no worker processes: num_workers > 0 is accepted and loads in the calling
process (a one-time warning says so), as do persistent_workers, prefetch_factor and
worker_init_fn (not called: there are no workers, and get_worker_info() is None, as in a
PyTorch loader with num_workers=0). pin_memory is accepted and ignored. Arguments that PyTorch
refuses together are refused with PyTorch's exception types and messages."""

import math
import warnings
from typing import Generic, TypeVar

from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ._collate import default_collate, default_convert
from ... import _creation

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_T_co = TypeVar("_T_co", covariant=True)


def get_worker_info():
    """None: data is always loaded in the calling process (there are no worker processes)."""
    return None


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset's iterator decides)."""

    def __iter__(self):
        while True:
            yield None


_warned_workers = False


def _warn_workers(num_workers):
    global _warned_workers
    if not _warned_workers:
        _warned_workers = True
        warnings.warn(f"DataLoader(num_workers={num_workers}): worker processes are not available in the "
                      "browser; torchweb loads the data in the calling process (as with num_workers=0).",
                      UserWarning, stacklevel=3)


class DataLoader(Generic[_T_co]):
    """Combines a dataset and a sampler and iterates over the dataset in batches.

    dataset: a map-style Dataset (__getitem__, __len__) or an IterableDataset. batch_size
    (default 1; None: no automatic batching, each sample goes through default_convert), shuffle
    (a new random order each epoch, from `generator`, a torchweb.Generator, or torchweb's
    default generator), sampler, batch_sampler, drop_last, collate_fn; num_workers, pin_memory,
    timeout, worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers,
    pin_memory_device and in_order are accepted (everything loads in the calling process)."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with "
                             "multi-process loading (num_workers > 0), but got "
                             f"num_workers={num_workers}")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            elif batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching "
                                 "and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        if num_workers > 0:
            _warn_workers(num_workers)

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        return _SingleProcessDataLoaderIter(self)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


# -- fetching -------------------------------------------------------------------------------------
class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _tensor_rows(dataset, indices):
    """For a TensorDataset (maybe under Subsets) collated by default_collate: the batch as one
    indexing of each tensor (one gather, not a tensor per sample then a stack): the same values,
    dtypes and devices. None where it does not apply (the sample-by-sample path then runs)."""
    while type(dataset) is Subset:
        try:
            indices = [dataset.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not indices:
        return None
    n = len(dataset)
    if not all(type(i) is int and -n <= i < n for i in indices):
        return None
    tensors = dataset.tensors
    if any(t.requires_grad or t.dim() == 0 for t in tensors):
        return None   # keep stack's grad_fn (StackBackward0), as PyTorch's batches have
    out = []
    for t in tensors:
        index = _creation.tensor(indices, device=t.device)
        out.append(t[index])
    return out


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if self.collate_fn is default_collate:
                rows = _tensor_rows(self.dataset, possibly_batched_index)
                if rows is not None:
                    return rows
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _SingleProcessDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        cls = _IterableDatasetFetcher if self._dataset_kind == _DatasetKind.Iterable else _MapDatasetFetcher
        self._dataset_fetcher = cls(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)   # may raise StopIteration
        data = self._dataset_fetcher.fetch(index)   # may raise StopIteration
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched. ", stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)
