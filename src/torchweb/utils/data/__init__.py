"""torchweb.utils.data: PyTorch's torch.utils.data (datasets, samplers, DataLoader, collation),
in pure Python: it runs in the browser (Pyodide, no numpy) as in CPython. Loading always runs in
the calling process (no worker processes in the browser); see docs/nn.md, "Data loading"."""

from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                      ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]


# PyTorch names torchweb refuses: AttributeError with the reason (_refused.py)
from ..._refused import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("utils.data", "torchweb.utils.data")
