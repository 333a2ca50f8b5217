"""DistributedSampler: each of num_replicas processes takes every num_replicas-th index (from
rank) of one order shared by all of them, padded (or cut, drop_last) to divide evenly; the
shuffled order is drawn from a generator seeded with seed + epoch, so every replica draws the
same one. torchweb has no torch.distributed: num_replicas and rank must be given (PyTorch
reads them from the process group when they are not)."""

import math

from ... import _random
from .sampler import Sampler, randperm_list

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Restricts loading to this replica's share of the dataset; call set_epoch(epoch) before
    each epoch for a new shuffled order."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            # (PyTorch's error without a process group, which torchweb never has)
            raise ValueError("Default process group has not been initialized: torchweb has no "
                             "torch.distributed, so give DistributedSampler num_replicas= and rank=")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = randperm_list(len(self.dataset), g)
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch whose order the next iteration draws (with shuffle=True)."""
        self.epoch = epoch
