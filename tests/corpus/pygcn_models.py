# Vendored for torchweb's corpus test (tests/test_corpus.py) from https://github.com/tkipf/pygcn @ 1600b5b, pygcn/models.py
# License: MIT, Copyright (c) 2017 Thomas Kipf (full text in tests/corpus/LICENSES.md).
# Unchanged; `from pygcn.layers import ...` resolves to the vendored pygcn_layers.py.

import torch.nn as nn
import torch.nn.functional as F
from pygcn.layers import GraphConvolution


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super(GCN, self).__init__()

        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)
