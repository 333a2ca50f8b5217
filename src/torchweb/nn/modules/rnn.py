"""Recurrent layers as PyTorch's torch/nn/modules/rnn.py: RNNBase, RNN (tanh/relu), LSTM (with
proj_size), GRU, and the cells RNNCell, LSTMCell, GRUCell. Parameter names (weight_ih_l0,
weight_hh_l0, bias_ih_l0, bias_hh_l0, *_reverse, weight_hr_l0), shapes, the uniform(-1/sqrt(H),
1/sqrt(H)) initialization, argument checks and messages are PyTorch's, so state_dicts load both
ways.

The time loop runs in Python: for each layer and direction, the input contributions to the gates
of every step come from ONE matmul over the whole sequence (linear(x, W_ih, b_ih): (T, N, G)),
then each step does one matmul with the hidden state (linear(h, W_hh, b_hh)) and the gate
elementwise ops. Gradients come from those ops (backpropagation through time by autograd).
PackedSequence inputs run the same loop with each step's batch size (the packed data's rows of
that step); sequences that ended keep their last state, which becomes their h_n."""

import math
import numbers
import warnings

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from ...ops.join import cat, stack
from ..utils.rnn import PackedSequence
from .utils import options_repr

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


# -- one step of each cell, from precomputed input gates gx (N, G) and state ------------------
def _rnn_step(gx, h, w_hh, b_hh, relu):
    pre = gx + F.linear(h, w_hh, b_hh)
    return F.relu(pre) if relu else pre.tanh()


def _lstm_step(gx, h, c, w_hh, b_hh, w_hr):
    gates = gx + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gx, h, w_hh, b_hh):
    gh = F.linear(h, w_hh, b_hh)
    rx, zx, nx = gx.chunk(3, 1)
    rh, zh, nh = gh.chunk(3, 1)
    r = (rx + rh).sigmoid()
    z = (zx + zh).sigmoid()
    n = (nx + r * nh).tanh()
    return n + z * (h - n)


class RNNBase(Module):
    """The shared parameters, checks and time loop of RNN, LSTM and GRU."""

    __module__ = "torchweb.nn"
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4 * hidden_size, "GRU": 3 * hidden_size, "RNN_TANH": hidden_size,
                     "RNN_RELU": hidden_size}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden = proj_size if proj_size > 0 else hidden_size
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                params = [Parameter(_creation.empty((gate_size, layer_input), **fk)),
                          Parameter(_creation.empty((gate_size, real_hidden), **fk))]
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [Parameter(_creation.empty(gate_size, **fk)), Parameter(_creation.empty(gate_size, **fk))]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(_creation.empty((proj_size, hidden_size), **fk)))
                    names.append("weight_hr_l{}{}")
                names = [n.format(layer, suffix) for n in names]
                for n, p in zip(names, params):
                    setattr(self, n, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        """A no-op (cuDNN's weight packing)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    # -- checks (PyTorch's messages) ---------------------------------------------------------
    def check_input(self, input, batch_sizes):
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            raise ValueError(f"input must have the type {w0.dtype}, got type {input.dtype}")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def _state_size(self, input, batch_sizes, size):
        """(num_layers * directions, mini-batch, size): the shape of h_0, h_n, c_0 and c_n."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        nd = 2 if self.bidirectional else 1
        return (self.num_layers * nd, mini_batch, size)

    def get_expected_hidden_size(self, input, batch_sizes):
        return self._state_size(input, batch_sizes, self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(list(expected_hidden_size), list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx if permutation is None else _apply_permutation(hx, permutation)

    def extra_repr(self):
        return options_repr(self, f"{self.input_size}, {self.hidden_size}", (
            ("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0),
            ("bidirectional", False)))

    # -- the time loop -----------------------------------------------------------------------
    def _direction(self, x, steps, h0, c0, names, reverse):
        """One layer, one direction. x: (total rows, I) with the rows of step t at
        x[offsets[t]:offsets[t] + steps[t]] (steps: batch size per step, non-increasing).
        Returns (output rows in x's layout, h_n (N, Hout), c_n or None)."""
        w = {n.split("_l")[0]: getattr(self, n) for n in names}
        gx_all = F.linear(x, w["weight_ih"], w.get("bias_ih"))  # every step's input gates: one matmul
        w_hh, b_hh, w_hr = w["weight_hh"], w.get("bias_hh"), w.get("weight_hr")
        T = len(steps)
        uniform = all(s == steps[0] for s in steps)
        if uniform:
            gx_steps = gx_all.reshape(T, steps[0], gx_all.shape[-1]).unbind(0) if T else []
        else:
            offsets = [0]
            for s in steps:
                offsets.append(offsets[-1] + s)
            gx_steps = [gx_all[offsets[t]:offsets[t + 1]] for t in range(T)]
        lstm = self.mode == "LSTM"
        N = h0.shape[0]
        outs = [None] * T
        order = range(T - 1, -1, -1) if reverse else range(T)
        if reverse:
            cur = steps[-1] if T else N
            h = h0[:cur] if cur < N else h0
            c = (c0[:cur] if cur < N else c0) if lstm else None
        else:
            h, c, cur = h0, c0, N
            done_h, done_c = [], []  # rows of entries that ended, last first
        for t in order:
            bs = steps[t]
            if reverse and bs > cur:  # entries starting at this step (from the end) join
                h = cat([h, h0[cur:bs]])
                if lstm:
                    c = cat([c, c0[cur:bs]])
                cur = bs
            elif not reverse and bs < cur:  # entries past their end keep their last state
                done_h.append(h[bs:cur])
                h = h[:bs]
                if lstm:
                    done_c.append(c[bs:cur])
                    c = c[:bs]
                cur = bs
            if lstm:
                h, c = _lstm_step(gx_steps[t], h, c, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                h = _gru_step(gx_steps[t], h, w_hh, b_hh)
            else:
                h = _rnn_step(gx_steps[t], h, w_hh, b_hh, self.mode == "RNN_RELU")
            outs[t] = h
        if not reverse and done_h:
            h = cat([h] + done_h[::-1])
            if lstm:
                c = cat([c] + done_c[::-1])
        if T == 0:
            out = x.new_zeros((0, h0.shape[-1]))
        elif uniform:
            out = stack(outs, 0).reshape(T * steps[0], h0.shape[-1])
        else:
            out = cat(outs, 0)
        return out, h, c

    def _run(self, x, steps, hx, cx):
        """x: (rows, I) packed by steps; hx: (L * D, N, Hout); cx likewise or None."""
        nd = 2 if self.bidirectional else 1
        hs, cs = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(nd):
                k = layer * nd + d
                out, h, c = self._direction(layer_in, steps, hx[k], cx[k] if cx is not None else None,
                                            self._all_weights[k], reverse=d == 1)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if nd == 1 else cat(outs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = stack(hs, 0)
        c_n = stack(cs, 0) if cx is not None else None
        return layer_in, h_n, c_n

    def _forward(self, input, hx):
        """Shared by RNN, LSTM and GRU; hx a tensor or (h0, c0) for LSTM."""
        lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        nd = 2 if self.bidirectional else 1
        name = "LSTM" if lstm else ("GRU" if self.mode == "GRU" else "RNN")
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            steps = [int(b) for b in batch_sizes.tolist()]
            max_batch = steps[0]
            is_batched, batch_dim = True, None
            if hx is not None:
                if lstm:
                    hx = (self.permute_hidden(hx[0], sorted_indices), self.permute_hidden(hx[1], sorted_indices))
                else:
                    hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 + ("tensor instead" if name == "RNN" else "instead"))
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if lstm:
                        if hx[0].dim() != 2 or hx[1].dim() != 2:
                            raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                    else:
                        if hx.dim() != 2:
                            raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                        hx = hx.unsqueeze(1)
            elif hx is not None:
                if lstm:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                           f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                elif hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            max_batch = input.size(0) if self.batch_first else input.size(1)
            data = input
        fk = {"dtype": data.dtype, "device": data.device}
        if hx is None:
            h0 = _creation.zeros((self.num_layers * nd, max_batch, real_hidden), **fk)
            c0 = _creation.zeros((self.num_layers * nd, max_batch, self.hidden_size), **fk) if lstm else None
        elif lstm:
            h0, c0 = hx
        else:
            h0, c0 = hx, None
        self.check_input(data, batch_sizes)
        self.check_hidden_size(h0, self.get_expected_hidden_size(data, batch_sizes),
                               "Expected hidden[0] size {}, got {}" if lstm else "Expected hidden size {}, got {}")
        if lstm:
            exp_c = (self.num_layers * nd, max_batch, self.hidden_size)
            self.check_hidden_size(c0, exp_c, "Expected hidden[1] size {}, got {}")
        if packed:
            out, h_n, c_n = self._run(data, steps, h0, c0)
            output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            x = data.transpose(0, 1) if self.batch_first else data  # (T, N, I)
            T, N = x.shape[0], x.shape[1]
            out, h_n, c_n = self._run(x.reshape(T * N, x.shape[2]), [N] * T, h0, c0)
            output = out.reshape(T, N, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not is_batched:
                output = output.squeeze(batch_dim)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
        if packed:
            h_n = self.permute_hidden(h_n, unsorted_indices)
            c_n = self.permute_hidden(c_n, unsorted_indices) if c_n is not None else None
        return output, ((h_n, c_n) if lstm else h_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu)."""

    __module__ = "torchweb.nn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; proj_size > 0 projects h through weight_hr."""

    __module__ = "torchweb.nn"

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return self._state_size(input, batch_sizes, self.hidden_size)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit."""

    __module__ = "torchweb.nn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


# -- cells ----------------------------------------------------------------------------------
class RNNCellBase(Module):
    """weight_ih (G, input_size), weight_hh (G, hidden_size), bias_ih, bias_hh (G)."""

    __module__ = "torchweb.nn"
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _prepare(self, name, input, hx, n_states):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if isinstance(hx, tuple) else (hx,) if hx is not None else None
        if states is not None:
            for s in states:
                if s.dim() not in (1, 2):
                    raise ValueError(f"{name}: Expected {'hx[0], hx[1]' if n_states == 2 else 'hidden'} to be 1D "
                                     f"or 2D, got {s.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if states is None:
            z = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
            states = (z,) * n_states
        elif not batched:
            states = tuple(s.unsqueeze(0) for s in states)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for i, s in enumerate(states):
            if s.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, expected "
                                   f"{self.hidden_size}")
        return input, states, batched


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    __module__ = "torchweb.nn"
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare("RNNCell", input, hx, 1)
        gx = F.linear(input, self.weight_ih, self.bias_ih)
        if self.nonlinearity == "tanh":
            out = _rnn_step(gx, h, self.weight_hh, self.bias_hh, False)
        elif self.nonlinearity == "relu":
            out = _rnn_step(gx, h, self.weight_hh, self.bias_hh, True)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    __module__ = "torchweb.nn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._prepare("LSTMCell", input, hx, 2)
        gx = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(gx, h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    __module__ = "torchweb.nn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._prepare("GRUCell", input, hx, 1)
        gx = F.linear(input, self.weight_ih, self.bias_ih)
        out = _gru_step(gx, h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
