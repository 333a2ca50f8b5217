"""GPT-2 as Hugging Face's GPT2LMHeadModel lays it out: the same module names, so its
state_dict keys are a checkpoint's (transformer.wte, transformer.h.N.attn.c_attn, ..., lm_head
tied to wte), and the same Conv1D layout (weight is in_features x out_features).

Plain PyTorch code: the tests run this file under PyTorch too. Works in the weights' dtype.
`model(input_ids)` gives the logits (B, T, vocab); `model(input_ids, positions)` reads and writes
the static KV cache set up by `model.setup_cache(batch, max_len)` (generate() does that);
attention_mask and position_ids serve left-padded batches (see kv_cache.py)."""

import torchweb as torch
from torchweb import nn
from torchweb.models.config import GPT2Config
from torchweb.models.kv_cache import CausalLM, StaticKVCache, attend

F = nn.functional   # an attribute, not an import: the file also runs with `torchweb` bound to PyTorch

_ACTIVATIONS = {"gelu_new": lambda x: F.gelu(x, approximate="tanh"),
                "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
                "gelu_fast": lambda x: F.gelu(x, approximate="tanh"),
                "gelu": F.gelu, "relu": F.relu, "silu": F.silu}


class Conv1D(nn.Module):
    """HF's Conv1D: a linear layer whose weight is stored transposed, (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], self.nf)


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.head_dim = config.n_embd // config.n_head
        self.c_attn = Conv1D(3 * config.n_embd, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_embd)
        self.cache = StaticKVCache()

    def forward(self, x, positions=None, mask=None):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))
        y = attend(q, k, v, self.cache, positions, mask)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class GPT2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        inner = config.n_inner or 4 * config.n_embd
        self.c_fc = Conv1D(inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, inner)
        if config.activation_function not in _ACTIVATIONS:
            raise NotImplementedError(f"GPT-2 activation_function {config.activation_function!r} is not "
                                      f"supported ({', '.join(_ACTIVATIONS)} are)")
        self.act = _ACTIVATIONS[config.activation_function]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(config)

    def forward(self, x, positions=None, mask=None):
        x = x + self.attn(self.ln_1(x), positions, mask)
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.h = nn.ModuleList(GPT2Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

    @property
    def embeddings(self):
        return self.wte

    def forward(self, input_ids, position_ids, positions=None, mask=None):
        x = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            x = block(x, positions, mask)
        return self.ln_f(x)


class GPT2LMHeadModel(CausalLM):
    config_class = GPT2Config

    def __init__(self, config):
        super().__init__(config, "transformer", GPT2Model(config), config.n_embd, config.n_head,
                         config.n_embd // config.n_head, config.n_positions)
