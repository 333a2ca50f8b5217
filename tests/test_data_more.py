"""utils.data.DistributedSampler against PyTorch's with explicit num_replicas and rank: the
indices each replica gets without shuffling (padding, drop_last), and with shuffling the
properties PyTorch guarantees (one order shared by the replicas for a seed and epoch, a new one
per epoch, the replicas' shares covering the dataset); its use in a DataLoader; errors."""

import pytest
import torch
from torch.utils.data import DistributedSampler as TSampler

import torchweb
from torchweb.utils.data import DataLoader, DistributedSampler, TensorDataset


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
                                                  (7, 2, True), (1, 4, False)])
def test_unshuffled_matches_pytorch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        mine = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        ref = TSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(mine) == list(ref)
        assert len(mine) == len(ref) and mine.total_size == ref.total_size and mine.num_samples == ref.num_samples


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (16, 4, False)])
def test_shuffled_shares(n, replicas, drop_last):
    data = list(range(n))

    def shares(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = DistributedSampler(data, num_replicas=replicas, rank=rank, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    ref = [list(TSampler(data, num_replicas=replicas, rank=r, drop_last=drop_last)) for r in range(replicas)]
    a = shares(0)
    assert [len(x) for x in a] == [len(x) for x in ref]
    flat = [i for x in a for i in x]
    if drop_last:
        assert len(set(flat)) == len(flat) == len(ref) * len(ref[0])     # disjoint, none repeated
    else:
        assert set(flat) == set(data)                                   # every sample in some replica
    assert shares(0) == a                                               # the same order for seed + epoch
    assert shares(1) != a and shares(0, seed=5) != a                    # another epoch or seed: another order
    # the order of one epoch is a permutation: interleaving the shares gives it back
    order = [a[i % replicas][i // replicas] for i in range(replicas * len(a[0]))]
    assert sorted(order[:n] if not drop_last else order) == sorted(data if not drop_last else order)


def test_in_a_dataloader(device):
    ds = TensorDataset(torchweb.arange(10, device=device))
    seen = []
    for rank in range(2):
        loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=False))
        for (batch,) in loader:
            assert batch.device == torchweb.device(device)
            seen += batch.tolist()
    assert sorted(seen) == list(range(10))
    ref = [b[0].tolist() for b in torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(10)), batch_size=2,
        sampler=TSampler(range(10), num_replicas=2, rank=1, shuffle=False))]
    mine = [b[0].tolist() for b in DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, 1, shuffle=False))]
    assert mine == ref


def test_errors():
    for rank in (3, -1):
        with pytest.raises(ValueError) as info:
            TSampler(range(4), num_replicas=3, rank=rank)
        with pytest.raises(ValueError) as mine:
            DistributedSampler(range(4), num_replicas=3, rank=rank)
        assert str(mine.value) == str(info.value)
    # without a process group PyTorch needs num_replicas and rank; torchweb has none
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        TSampler(range(4))
    with pytest.raises(ValueError, match="Default process group has not been initialized.*num_replicas= and rank="):
        DistributedSampler(range(4), rank=0)
