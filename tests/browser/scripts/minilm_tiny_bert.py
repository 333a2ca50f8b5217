# A tiny BERT (2 layers, hidden 32, 4 heads, a 40-token vocabulary) running the MiniLM demo's code:
# site/demos/minilm/model.py and tokenizer.py are inlined below, unchanged (the page runs a script
# as one source, with no files to import; tests/test_minilm.py checks the blocks are the files'
# text). Weights from formulas: embeddings, hidden states, pooled outputs, semantic search and the
# gradients of every parameter after a backward through the padded, masked attention.
# ---- begin site/demos/minilm/tokenizer.py ----
"""A BERT WordPiece tokenizer in pure Python (standard library only: runs in Pyodide as it is).

It gives the same ids as Hugging Face's tokenizers (BertNormalizer + BertPreTokenizer + WordPiece +
the [CLS] ... [SEP] template) and transformers' BertTokenizer for a BERT vocab.txt, as used by
sentence-transformers' all-MiniLM-L6-v2:

    tok = BertTokenizer.from_files("vocab.txt", "tokenizer_config.json")
    batch = tok(["A sentence.", "Another one"], max_length=256)
    batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]   # lists of lists

The steps, as Hugging Face does them:
  1. special tokens written in the text ("[SEP]", "[MASK]", ...) are split off first and kept;
  2. normalize: drop NUL, U+FFFD and control/format characters, map whitespace to " ", put spaces
     around CJK ideographs, strip accents (NFD, drop non-spacing marks) when lower-casing (or as
     strip_accents says), lower-case;
  3. pre-tokenize: split on whitespace, split off each punctuation character;
  4. WordPiece: greedy longest match from the left, continuations prefixed "##"; a word with no
     full match, or longer than 100 characters, is one [UNK];
  5. [CLS] + tokens + [SEP], truncated to max_length (the tokens, not the specials, are cut),
     padded with [PAD] (id 0) to the longest in the batch with attention_mask 0 there.
"""

import json
import unicodedata

__all__ = ["BertTokenizer", "load_vocab"]

# Unicode's White_Space property (what Rust's char::is_whitespace tests); tab, newline and
# carriage return count as whitespace, not as control characters.
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                        "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# the CJK Unified Ideographs blocks BERT isolates, as Hugging Face's tokenizers lists them (its
# fifth range starts at U+2B920 where BERT's Python code says U+2B820; the fast tokenizer, which
# sentence-transformers uses, is the one followed here)
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_whitespace(ch):
    return ch in _WHITESPACE


def _is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def _is_punctuation(ch):
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    for lo, hi in _CJK:
        if lo <= cp <= hi:
            return True
    return False


def load_vocab(text):
    """{token: id} from the text of a vocab.txt (one token a line, the id is the line number; a
    token listed twice keeps its last line, as Hugging Face reads it)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {line.rstrip("\r"): i for i, line in enumerate(lines)}


class BertTokenizer:
    """BERT's uncased/cased WordPiece tokenizer. `vocab` maps token -> id."""

    def __init__(self, vocab, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True,
                 clean_text=True, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                 cls_token="[CLS]", mask_token="[MASK]", model_max_length=512,
                 max_input_chars_per_word=100, continuing_subword_prefix="##"):
        self.vocab = dict(vocab)
        self.ids_to_tokens = {i: t for t, i in self.vocab.items()}
        self.do_lower_case = do_lower_case
        # Hugging Face: strip_accents=None means "strip when lower-casing"
        self.strip_accents = do_lower_case if strip_accents is None else strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.clean_text = clean_text
        self.unk_token, self.sep_token, self.pad_token = unk_token, sep_token, pad_token
        self.cls_token, self.mask_token = cls_token, mask_token
        self.model_max_length = model_max_length
        self.max_input_chars_per_word = max_input_chars_per_word
        self.prefix = continuing_subword_prefix
        for t in (unk_token, sep_token, pad_token, cls_token):
            if t not in self.vocab:
                raise ValueError(f"special token {t!r} is not in the vocabulary")
        # special tokens found in the raw text, longest first (Hugging Face's leftmost-longest match)
        self.special_tokens = sorted({t for t in (unk_token, sep_token, pad_token, cls_token, mask_token)
                                      if t and t in self.vocab}, key=lambda t: (-len(t), t))
        self.unk_token_id = self.vocab[unk_token]
        self.sep_token_id = self.vocab[sep_token]
        self.pad_token_id = self.vocab[pad_token]
        self.cls_token_id = self.vocab[cls_token]

    @classmethod
    def from_files(cls, vocab_path, config_path=None, **kwargs):
        """From a vocab.txt and (optionally) a tokenizer_config.json."""
        with open(vocab_path, encoding="utf-8") as f:
            vocab_text = f.read()
        config = {}
        if config_path is not None:
            with open(config_path, encoding="utf-8") as f:
                config = json.load(f)
        return cls.from_text(vocab_text, config, **kwargs)

    @classmethod
    def from_text(cls, vocab_text, config=None, **kwargs):
        """From the text of a vocab.txt and a tokenizer_config dict (what a page fetched)."""
        config = dict(config or {})
        args = {}
        for key in ("do_lower_case", "strip_accents", "tokenize_chinese_chars", "unk_token", "sep_token",
                    "pad_token", "cls_token", "mask_token", "model_max_length"):
            if config.get(key) is not None:
                args[key] = config[key]
        args.update(kwargs)
        return cls(load_vocab(vocab_text), **args)

    # -- the steps -------------------------------------------------------------------------
    def normalize(self, text):
        """BertNormalizer: clean, isolate CJK ideographs, strip accents, lower-case."""
        if self.clean_text:
            text = "".join(" " if _is_whitespace(c) else c for c in text
                           if not (c == "\0" or c == "\ufffd" or _is_control(c)))
        if self.tokenize_chinese_chars:
            text = "".join(f" {c} " if _is_cjk(ord(c)) else c for c in text)
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        if self.do_lower_case:
            text = "".join(c.lower() for c in text)   # per character: no final-sigma rule
        return text

    def pre_tokenize(self, text):
        """BertPreTokenizer: split on whitespace, each punctuation character its own word."""
        words, cur = [], []
        for c in text:
            if _is_whitespace(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
            elif _is_punctuation(c):
                if cur:
                    words.append("".join(cur))
                    cur = []
                words.append(c)
            else:
                cur.append(c)
        if cur:
            words.append("".join(cur))
        return words

    def wordpiece(self, word):
        """Greedy longest-match-first WordPiece of one word: a list of tokens."""
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        tokens, start, n = [], 0, len(word)
        while start < n:
            end = n
            piece = None
            while start < end:
                sub = word[start:end]
                if start > 0:
                    sub = self.prefix + sub
                if sub in self.vocab:
                    piece = sub
                    break
                end -= 1
            if piece is None:
                return [self.unk_token]
            tokens.append(piece)
            start = end
        return tokens

    def _split_special(self, text):
        """[(segment, is_special)]: special tokens written in the text are matched first."""
        out, i, n, last = [], 0, len(text), 0
        while i < n:
            if text[i] == "[":       # every BERT special token starts with "["
                for t in self.special_tokens:
                    if text.startswith(t, i):
                        if last < i:
                            out.append((text[last:i], False))
                        out.append((t, True))
                        i += len(t)
                        last = i
                        break
                else:
                    i += 1
            else:
                i += 1
        if last < n:
            out.append((text[last:], False))
        return out

    def tokenize(self, text):
        """The WordPiece tokens of a text, without [CLS]/[SEP]."""
        tokens = []
        for segment, special in self._split_special(text):
            if special:
                tokens.append(segment)
                continue
            for word in self.pre_tokenize(self.normalize(segment)):
                tokens.extend(self.wordpiece(word))
        return tokens

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.get(t, self.unk_token_id) for t in tokens]

    def convert_ids_to_tokens(self, ids):
        return [self.ids_to_tokens.get(i, self.unk_token) for i in ids]

    def encode(self, text, max_length=None, truncation=True, add_special_tokens=True):
        """The ids of one text: [CLS] tokens [SEP], at most max_length in all when truncating."""
        ids = self.convert_tokens_to_ids(self.tokenize(text))
        if truncation:
            limit = self.model_max_length if max_length is None else max_length
            keep = limit - (2 if add_special_tokens else 0)
            if keep < 0:
                raise ValueError(f"max_length={limit} leaves no room for the special tokens")
            ids = ids[:keep]
        if add_special_tokens:
            ids = [self.cls_token_id] + ids + [self.sep_token_id]
        return ids

    def __call__(self, texts, max_length=None, truncation=True, padding=True, add_special_tokens=True):
        """A batch: {"input_ids", "token_type_ids", "attention_mask"}, lists of lists of ints, padded
        with [PAD] to the longest text (padding=True) or to max_length (padding="max_length")."""
        single = isinstance(texts, str)
        if single:
            texts = [texts]
        seqs = [self.encode(t, max_length, truncation, add_special_tokens) for t in texts]
        if padding == "max_length":
            width = self.model_max_length if max_length is None else max_length
        elif padding:
            width = max((len(s) for s in seqs), default=0)
        else:
            width = None
        ids, masks = [], []
        for s in seqs:
            pad = 0 if width is None else max(0, width - len(s))
            ids.append(s + [self.pad_token_id] * pad)
            masks.append([1] * len(s) + [0] * pad)
        out = {"input_ids": ids, "token_type_ids": [[0] * len(s) for s in ids], "attention_mask": masks}
        if single:
            out = {k: v[0] for k, v in out.items()}
        return out
# ---- end site/demos/minilm/tokenizer.py ----
# ---- begin site/demos/minilm/model.py ----
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
# ---- end site/demos/minilm/model.py ----

# ---- the script ----
import math

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sat", "on", "mat", "ran",
         "in", "park", "is", "eating", "food", "man", "horse", "riding", "play", "##s", "##ing", "##ed", "un",
         "##believ", "##able", ".", ",", "!", "?", "cafe", "北", "京", "x", "##y", "##z", "big", "red"]
tok = BertTokenizer.from_text("\n".join(VOCAB) + "\n", {"do_lower_case": True, "model_max_length": 12})
config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, max_position_embeddings=16, type_vocab_size=2)
model = BertModel(config)
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        scale = 1.0 if "LayerNorm.weight" in name else 0.3
        base = 1.0 if "LayerNorm.weight" in name else 0.0
        vals = [base + scale * math.sin(0.37 * i + 1.3 * k) for i in range(p.numel())]
        p.copy_(torch.tensor(vals).reshape(p.shape))
model.to(device).eval()

sentences = ["The cat sat on the mat.", "A dog ran in the park!", "A man is eating food",
             "A man riding a horse", "Unbelievable, Café 北京 xyz?", "big red dogs playing"]
result = {"ids": tok(sentences)["input_ids"], "mask": tok(sentences)["attention_mask"],
          "truncated": tok.encode("the cat " * 20)}

emb = encode(model, tok, sentences, batch_size=4)
result["embeddings"] = emb.tolist()
result["search"] = [[i for i, _ in hits] for hits in semantic_search(emb[:2], emb[2:], top_k=4)]

batch = tok(sentences[:3])
ids = torch.tensor(batch["input_ids"]).to(device)
mask = torch.tensor(batch["attention_mask"]).to(device)
hidden, pooled = model(ids, attention_mask=mask)
result["hidden"] = hidden.tolist()
result["pooled"] = pooled.tolist()
loss = (mean_pooling(hidden, mask) * torch.arange(32.0).to(device) / 32).sum() + pooled.square().mean()
loss.backward()
result["loss"] = loss.item()
result["grads"] = {name: p.grad.tolist() for name, p in model.named_parameters()}
