"""BERT (Hugging Face's BertModel) and sentence embeddings, in plain PyTorch.

Only `torch`, `torch.nn` and `torch.nn.functional`: the same file runs on PyTorch and, unchanged, on
torchweb (`import torchweb as torch`, or torchweb.install_torch_alias()). The modules and their
attribute names follow transformers' modeling_bert.py, so the state_dict keys are the checkpoint's
(`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`, ...,
`pooler.dense.weight`, and the `embeddings.position_ids` buffer that older checkpoints store) and
`model.load_state_dict(tensors_of_model_safetensors)` loads all-MiniLM-L6-v2 as it is.

Sentence embeddings as sentence-transformers computes them for all-MiniLM-L6-v2: the last hidden
states, averaged over the real (not padded) tokens, then L2-normalized:

    model = BertModel(BertConfig.from_dict(json.load(open("config.json")))).eval()
    model.load_state_dict(state_dict)
    emb = encode(model, tokenizer, ["A man is eating food.", "A man rides a horse."])
    scores = emb @ emb.T          # cosine similarities
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertConfig:
    """The fields of a BERT config.json that the model uses (defaults: all-MiniLM-L6-v2's)."""

    def __init__(self, vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                 intermediate_size=1536, hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
                 layer_norm_eps=1e-12, pad_token_id=0, **unused):
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size {hidden_size} is not a multiple of num_attention_heads "
                             f"{num_attention_heads}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.layer_norm_eps = layer_norm_eps
        self.pad_token_id = pad_token_id

    @classmethod
    def from_dict(cls, d):
        return cls(**d)


ACTIVATIONS = {
    "gelu": F.gelu,                                             # the exact (erf) form, as HF's "gelu"
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "tanh": torch.tanh,
}


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.register_buffer("position_ids", torch.arange(config.max_position_embeddings).expand((1, -1)))

    def forward(self, input_ids, token_type_ids=None):
        seq_len = input_ids.shape[1]
        position_ids = self.position_ids[:, :seq_len]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(position_ids))
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout_prob = config.attention_probs_dropout_prob

    def heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.num_attention_heads, self.attention_head_size).transpose(1, 2)

    def forward(self, hidden_states, attn_mask=None):
        b, t, c = hidden_states.shape
        q = self.heads(self.query(hidden_states))
        k = self.heads(self.key(hidden_states))
        v = self.heads(self.value(hidden_states))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                           dropout_p=self.dropout_prob if self.training else 0.0)
        return y.transpose(1, 2).reshape(b, t, c)


class BertSelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)      # the checkpoint's name: attention.self.query...
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attn_mask=None):
        return self.output(self.self(hidden_states, attn_mask), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.act = ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states):
        return self.act(self.dense(hidden_states))


class BertOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attn_mask=None):
        a = self.attention(hidden_states, attn_mask)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, hidden_states, attn_mask=None):
        for layer in self.layer:
            hidden_states = layer(hidden_states, attn_mask)
        return hidden_states


class BertPooler(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        return torch.tanh(self.dense(hidden_states[:, 0]))


class BertModel(nn.Module):
    """Hugging Face's BertModel: forward(input_ids, attention_mask, token_type_ids) returns
    (last_hidden_state (B, T, H), pooler_output (B, H))."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        # BERT's initialization (normal(0, 0.02), zero biases, unit LayerNorm); pretrained weights
        # replace it with load_state_dict
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        if attention_mask is not None:
            # (B, T) with 1 for real tokens -> (B, 1, 1, T) booleans: True where a key is attended
            attention_mask = attention_mask[:, None, None, :].bool()
        x = self.embeddings(input_ids, token_type_ids)
        x = self.encoder(x, attention_mask)
        return x, self.pooler(x)


def mean_pooling(token_embeddings, attention_mask):
    """The average of the token embeddings over the real tokens (sentence-transformers' mean)."""
    mask = attention_mask.unsqueeze(-1).to(token_embeddings.dtype)
    return (token_embeddings * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)


def encode(model, tokenizer, sentences, batch_size=32, max_length=256, device=None):
    """L2-normalized sentence embeddings (len(sentences), hidden) of a list of texts, as
    sentence-transformers' all-MiniLM-L6-v2 gives them. `tokenizer(texts, max_length=...)` returns
    {"input_ids", "token_type_ids", "attention_mask"} as lists (tokenizer.py's BertTokenizer)."""
    if isinstance(sentences, str):
        sentences = [sentences]
    if device is None:
        device = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for i in range(0, len(sentences), batch_size):
            batch = tokenizer(list(sentences[i:i + batch_size]), max_length=max_length)
            ids = torch.tensor(batch["input_ids"], dtype=torch.long, device=device)
            mask = torch.tensor(batch["attention_mask"], dtype=torch.long, device=device)
            types = torch.tensor(batch["token_type_ids"], dtype=torch.long, device=device)
            hidden, _ = model(ids, attention_mask=mask, token_type_ids=types)
            out.append(F.normalize(mean_pooling(hidden, mask), p=2, dim=1))
    return out[0] if len(out) == 1 else torch.cat(out, 0)


def semantic_search(query_embeddings, corpus_embeddings, top_k=5):
    """For each query, the top_k corpus entries by cosine similarity (embeddings are normalized):
    a list per query of (corpus_index, score), best first."""
    scores = query_embeddings @ corpus_embeddings.T
    k = min(top_k, corpus_embeddings.shape[0])
    values, indices = torch.topk(scores, k, dim=1)
    return [list(zip(ix, v)) for ix, v in zip(indices.tolist(), values.tolist())]
