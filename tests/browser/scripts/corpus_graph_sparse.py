# Browser-tier copy of torchweb's corpus programs Diego999/pyGAT (SpGAT) and tkipf/pygcn (GCN),
# on sparse COO adjacency matrices: the vendored code below is unchanged but for the imports
# named here; the driver at the end sets formula weights and records forward, loss, gradients
# and optimizer steps (tests/test_corpus.py runs the same programs natively).
# In this copy only the sparse classes are kept: pyGAT's SpecialSpmmFunction, SpecialSpmm,
# SpGraphAttentionLayer (layers.py) and SpGAT (models.py), pygcn's GraphConvolution
# (layers.py) and GCN (models.py); `import numpy` (unused by them) and the modules' imports of
# each other are dropped.
# From https://github.com/Diego999/pyGAT @ 3664f2d, layers.py and models.py
# License: MIT, Copyright (c) 2018 Diego Antognini (full text in tests/corpus/LICENSES.md).
# From https://github.com/tkipf/pygcn @ 1600b5b, pygcn/layers.py and pygcn/models.py
# License: MIT, Copyright (c) 2017 Thomas Kipf (full text in tests/corpus/LICENSES.md).

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter
from torch.nn.modules.module import Module


# -- pyGAT layers.py --------------------------------------------------------------------------
class SpecialSpmmFunction(torch.autograd.Function):
    """Special function for only sparse region backpropataion layer."""
    @staticmethod
    def forward(ctx, indices, values, shape, b):
        assert indices.requires_grad == False
        a = torch.sparse_coo_tensor(indices, values, shape)
        ctx.save_for_backward(a, b)
        ctx.N = shape[0]
        return torch.matmul(a, b)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_values = grad_b = None
        if ctx.needs_input_grad[1]:
            grad_a_dense = grad_output.matmul(b.t())
            edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
            grad_values = grad_a_dense.view(-1)[edge_idx]
        if ctx.needs_input_grad[3]:
            grad_b = a.t().matmul(grad_output)
        return None, grad_values, None, grad_b


class SpecialSpmm(nn.Module):
    def forward(self, indices, values, shape, b):
        return SpecialSpmmFunction.apply(indices, values, shape, b)

    
class SpGraphAttentionLayer(nn.Module):
    """
    Sparse version GAT layer, similar to https://arxiv.org/abs/1710.10903
    """

    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super(SpGraphAttentionLayer, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.alpha = alpha
        self.concat = concat

        self.W = nn.Parameter(torch.zeros(size=(in_features, out_features)))
        nn.init.xavier_normal_(self.W.data, gain=1.414)
                
        self.a = nn.Parameter(torch.zeros(size=(1, 2*out_features)))
        nn.init.xavier_normal_(self.a.data, gain=1.414)

        self.dropout = nn.Dropout(dropout)
        self.leakyrelu = nn.LeakyReLU(self.alpha)
        self.special_spmm = SpecialSpmm()

    def forward(self, input, adj):
        dv = 'cuda' if input.is_cuda else 'cpu'

        N = input.size()[0]
        edge = adj.nonzero().t()

        h = torch.mm(input, self.W)
        # h: N x out
        assert not torch.isnan(h).any()

        # Self-attention on the nodes - Shared attention mechanism
        edge_h = torch.cat((h[edge[0, :], :], h[edge[1, :], :]), dim=1).t()
        # edge: 2*D x E

        edge_e = torch.exp(-self.leakyrelu(self.a.mm(edge_h).squeeze()))
        assert not torch.isnan(edge_e).any()
        # edge_e: E

        e_rowsum = self.special_spmm(edge, edge_e, torch.Size([N, N]), torch.ones(size=(N,1), device=dv))
        # e_rowsum: N x 1

        edge_e = self.dropout(edge_e)
        # edge_e: E

        h_prime = self.special_spmm(edge, edge_e, torch.Size([N, N]), h)
        assert not torch.isnan(h_prime).any()
        # h_prime: N x out
        
        h_prime = h_prime.div(e_rowsum)
        # h_prime: N x out
        assert not torch.isnan(h_prime).any()

        if self.concat:
            # if this layer is not last layer,
            return F.elu(h_prime)
        else:
            # if this layer is last layer,
            return h_prime

    def __repr__(self):
        return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' + str(self.out_features) + ')'


# -- pyGAT models.py --------------------------------------------------------------------------
class SpGAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        """Sparse version of GAT."""
        super(SpGAT, self).__init__()
        self.dropout = dropout

        self.attentions = [SpGraphAttentionLayer(nfeat, 
                                                 nhid, 
                                                 dropout=dropout, 
                                                 alpha=alpha, 
                                                 concat=True) for _ in range(nheads)]
        for i, attention in enumerate(self.attentions):
            self.add_module('attention_{}'.format(i), attention)

        self.out_att = SpGraphAttentionLayer(nhid * nheads, 
                                             nclass, 
                                             dropout=dropout, 
                                             alpha=alpha, 
                                             concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


# -- pygcn layers.py --------------------------------------------------------------------------
class GraphConvolution(Module):
    """
    Simple GCN layer, similar to https://arxiv.org/abs/1609.02907
    """

    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        else:
            return output

    def __repr__(self):
        return self.__class__.__name__ + ' (' \
               + str(self.in_features) + ' -> ' \
               + str(self.out_features) + ')'


# -- pygcn models.py --------------------------------------------------------------------------
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


# -- driver (torchweb's corpus, browser tier): weights and inputs from formulas, no random draws --
import math as _math

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"


def _values(n, k=0, scale=1.0):
    return [_math.sin(0.7 * i + k) * scale for i in range(n)]


def x_of(shape, k=0, scale=1.0):
    return torch.tensor(_values(_math.prod(shape), k, scale)).reshape(shape).to(device)


def set_weights(m, k=0):
    """Every parameter from a formula, scaled by 1/sqrt(fan-in)."""
    with torch.no_grad():
        for i, (name, p) in enumerate(m.named_parameters()):
            fan_in = p.numel() // p.shape[0] if p.dim() > 1 else 100
            p.copy_(x_of(tuple(p.shape), k + i, 1.0 / _math.sqrt(fan_in)))


def rounded(t):
    return [round(v, 6) for v in t.detach().reshape(-1).tolist()]


def grad_summary(model):
    return {n: [p.grad.abs().sum().item()] + rounded(p.grad)[:6] for n, p in model.named_parameters()
            if p.grad is not None}


def graph(n=6):
    """A ring with self loops and one chord: the dense adjacency, and pygcn's normalized sparse one."""
    a = torch.zeros(n, n)
    for i in range(n):
        a[i, i] = 1.0
        a[i, (i + 1) % n] = a[(i + 1) % n, i] = 1.0
    a[0, 3] = a[3, 0] = 1.0
    d = a.sum(1).rsqrt()
    return a.to(device), (d[:, None] * a * d[None, :]).to_sparse().to(device)


result = {}
adj, adj_sparse = graph()
x = x_of((6, 5), 2)
labels = torch.tensor([0, 2, 1, 1, 0, 2]).to(device)
for name, model, a in (("spgat", SpGAT(5, 4, 3, dropout=0.0, alpha=0.2, nheads=2), adj),
                       ("gcn", GCN(5, 8, 3, dropout=0.0), adj_sparse)):
    model = model.to(device)
    set_weights(model, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        out = model(x, a)
        loss = F.nll_loss(out[:4], labels[:4])
        loss.backward()
        if step == 0:
            result[name + "_out"] = rounded(out)
            result[name + "_grads"] = grad_summary(model)
        optimizer.step()
        losses.append(loss.item())
    result[name + "_losses"] = losses
