"""torch.embedding_bag (the ATen form: weight first, mode 0/1/2, four results) against PyTorch,
F.embedding_bag's bags plus the CPU kernel's offset2bag, bag_size and max_indices."""

import pytest
import torch

from oracle import check, make
from test_autograd_ops import NoGrad, run_case

CASES = {
    "sum": lambda m, w, i, o: m.embedding_bag(w, i, o),
    "mean": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 1),
    "max": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 2),
    "psw": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 0, False, m.arange(8.0).to(w.device) / 8),
    "pad_mean": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 1, False, None, False, 2),
    "pad_max": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 2, False, None, False, 4),
    "pad_sum": lambda m, w, i, o: m.embedding_bag(w, i, o, False, 0, False, None, False, -6),
    # include_last_offset: the last offset is len(indices), as PyTorch documents
    "last_offset": lambda m, w, i, o: m.embedding_bag(w, i, m.cat([o[:3], o[:1] + 8]), mode=1,
                                                      include_last_offset=True),
    "last_offset_max": lambda m, w, i, o: m.embedding_bag(w, i, m.cat([o[:3], o[:1] + 8]), mode=2,
                                                          include_last_offset=True),
    "bad_mode": lambda m, w, i, o: m.embedding_bag(w, i, o, mode=3),
}


@pytest.mark.parametrize("name", CASES)
def test_embedding_bag(device, name):
    w, i, o = make((10, 3)), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4, 4, 6])
    check(CASES[name], w, i, o, device=device)
    if name != "bad_mode":
        run_case(device, lambda T, a, b, c: CASES[name](T, a, b, c)[0],
                 lambda: (make((10, 3)), NoGrad(i), NoGrad(o)))
