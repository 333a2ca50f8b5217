# Vendored for torchweb's corpus test (tests/test_corpus.py) from https://github.com/pytorch/examples @ 77f55b9, distributed/ddp-tutorial-series/datautils.py
# License: BSD-3-Clause, Copyright (c) 2017, Pytorch contributors (full text in tests/corpus/LICENSES.md).
# Unchanged; `from datautils import ...` resolves to the vendored examples_ddp_series_datautils.py.

import torch
from torch.utils.data import Dataset

class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        self.data = [(torch.rand(20), torch.rand(1)) for _ in range(size)]

    def __len__(self):
        return self.size
    
    def __getitem__(self, index):
        return self.data[index]
