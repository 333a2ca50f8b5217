"""torch.nn.parallel's single-process part: DataParallel and data_parallel. torchweb has one
device and no process groups, so they run the module on it as PyTorch does when no CUDA device
is available; DistributedDataParallel needs torch.distributed and is not here."""

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
