"""generate(): text generation with a static KV cache, as plain PyTorch code (the tests run this
file under PyTorch too).

The prompt runs once through the model (prefill), filling the cache at positions 0..T-1. Each
new token then runs through `decode_step(model, token, position)`, whose shapes never change
and whose position is a tensor: under torch.compile the step is captured once and replayed per
token, one program whatever the position. The cache is kept between calls when it is big
enough, so a second generate() replays the first one's capture.

A batch of prompts of different lengths comes left-padded with its attention_mask, as a
tokenizer with padding_side="left" gives it (Hugging Face's way): every row's tokens end at the
same slot, padded slots are hidden from attention, and each token's position is its place in its
own text (the mask's cumulative sum), so each row generates what it would alone. A row that has
produced eos_token_id emits pad_token_id from then on."""

import warnings
import weakref

import torchweb as torch

_compiled = weakref.WeakKeyDictionary()
_CACHE_ROUND = 128      # cache lengths are rounded up, so prompts of similar length share a capture


def decode_step(model, token, position, attention_mask=None, position_ids=None):
    """Logits (B, vocab) of the next token after token (B, 1) at cache slot position (1,) int64;
    for a padded batch, attention_mask (B, cache length) and position_ids (B, 1)."""
    return model(token, position, attention_mask, position_ids)[:, -1, :]


def _step_for(model, compile):
    if not compile:
        return decode_step
    if model not in _compiled:
        _compiled[model] = torch.compile(decode_step)
    return _compiled[model]


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, greedy=False, generator=None):
    """The next token (B, 1) from logits (B, vocab): argmax when greedy (or temperature 0), else
    a draw from softmax(logits / temperature) kept to the top_k tokens and to the smallest set
    whose probability reaches top_p (HF's order: temperature, top-k, top-p)."""
    if greedy or temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits.float() / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=False)
        cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        drop = cumulative <= 1 - top_p
        drop[:, -1] = False                                   # the likeliest token always stays
        logits = logits.masked_fill(drop.scatter(1, order, drop), float("-inf"))
    return torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)


def _check(model, input_ids, max_new_tokens, temperature, top_k, top_p):
    if input_ids.dim() != 2 or input_ids.shape[1] == 0:
        raise ValueError(f"generate: input_ids must be (batch, length) with length >= 1, got {tuple(input_ids.shape)}")
    if input_ids.dtype.is_floating_point or input_ids.dtype == torch.bool:
        raise TypeError(f"generate: input_ids must be integer token ids, got {input_ids.dtype}")
    if max_new_tokens < 0:
        raise ValueError(f"generate: max_new_tokens must be >= 0, got {max_new_tokens}")
    if input_ids.shape[1] + max_new_tokens > model.max_positions:
        raise ValueError(f"generate: {input_ids.shape[1]} prompt tokens + {max_new_tokens} new ones exceed the "
                         f"model's {model.max_positions} positions")
    if temperature < 0 or (top_p is not None and not 0 < top_p <= 1) or (top_k is not None and top_k < 1):
        raise ValueError(f"generate: need temperature >= 0, 0 < top_p <= 1, top_k >= 1; got "
                         f"temperature={temperature}, top_p={top_p}, top_k={top_k}")


def _padding(attention_mask, input_ids):
    """The prompt's mask as lists of 0/1 rows, or None when nothing is padded."""
    if attention_mask is None:
        return None
    rows = attention_mask.tolist() if torch.is_tensor(attention_mask) else [list(r) for r in attention_mask]
    if [len(rows), len(rows[0]) if rows else 0] != list(input_ids.shape):
        raise ValueError(f"generate: attention_mask must have input_ids' shape {tuple(input_ids.shape)}, got "
                         f"{(len(rows), len(rows[0]) if rows else 0)}")
    if any(v not in (0, 1) for r in rows for v in r) or not all(any(r) for r in rows):
        raise ValueError("generate: attention_mask must hold 0 (padding) and 1 (token), with a token in every row")
    if all(all(r) for r in rows):
        return None
    if any(r[-1] == 0 for r in rows):
        warnings.warn("A decoder-only architecture is being used, but right-padding was detected! For correct "
                      "generation results, please set `padding_side='left'` when initializing the tokenizer.")
    return rows


def _pad_token(pad_token_id, stops):
    if pad_token_id is None and stops:
        pad_token_id = stops[0]
        warnings.warn(f"Setting `pad_token_id` to `eos_token_id`:{pad_token_id} for open-end generation.")
    return pad_token_id


@torch.no_grad()
def generate(model, input_ids, max_new_tokens, temperature=1.0, top_k=None, top_p=None, greedy=False,
             eos_token_id=None, callback=None, compile=True, generator=None, attention_mask=None,
             pad_token_id=None):
    """input_ids (B, T) followed by up to max_new_tokens generated tokens, (B, T + n).

    greedy=True (or temperature=0) takes the argmax; otherwise tokens are drawn (see
    sample_next). callback(tokens) is called with each step's tokens (a list of B ints) as they
    come, for streaming. Generation stops early once every sequence has produced eos_token_id
    (an int or a list of ints); a finished sequence emits pad_token_id (default: the eos id)
    until then. attention_mask (B, T) marks a left-padded batch's tokens (1) and padding (0), as
    `tokenizer(texts, padding=True, return_tensors="pt")` gives it with padding_side="left".
    compile=True runs the per-token step through torch.compile."""
    if not torch.is_tensor(input_ids):
        input_ids = torch.tensor(input_ids, dtype=torch.long)
        if input_ids.dim() == 1:
            input_ids = input_ids[None]
    device = model.get_input_embeddings().weight.device
    input_ids = input_ids.to(device)
    _check(model, input_ids, max_new_tokens, temperature, top_k, top_p)
    batch, length = input_ids.shape
    rows = _padding(attention_mask, input_ids)
    needed = min(-(-(length + max_new_tokens) // _CACHE_ROUND) * _CACHE_ROUND, model.max_positions)
    if getattr(model, "cache_len", 0) < needed or model.caches()[0].k.shape[0] != batch:
        model.setup_cache(batch, needed)
    stops = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or ())
    pad = _pad_token(pad_token_id, stops) if batch > 1 else pad_token_id
    step = _step_for(model, compile)
    mask = position_ids = None
    if rows is not None:       # padded: keys hidden by mask, positions counted within each row
        keys = [r + [1] * (model.cache_len - length) for r in rows]
        mask = torch.tensor(keys, dtype=torch.bool, device=device)
        places = [[sum(r[:i + 1]) - 1 if r[i] else 1 for i in range(length)] for r in rows]
        position_ids = torch.tensor([[sum(r) - 1] for r in rows], device=device)   # +1 before each step
        logits = model(input_ids, torch.arange(length, device=device), mask, torch.tensor(places, device=device))
    else:
        logits = model(input_ids, torch.arange(length, device=device))
    logits = logits[:, -1, :]
    out, finished = [input_ids], [False] * batch
    position = torch.tensor([length], device=device)
    for i in range(max_new_tokens):
        token = sample_next(logits, temperature, top_k, top_p, greedy, generator)
        values = token[:, 0].tolist()
        if any(finished):          # HF's rule: a finished row's tokens are padding
            values = [pad if f else v for f, v in zip(finished, values)]
            token = torch.tensor([[v] for v in values], device=device)
        out.append(token)
        if callback is not None:
            callback(values)
        finished = [f or v in stops for f, v in zip(finished, values)]
        if all(finished) or i == max_new_tokens - 1:
            break
        if position_ids is not None:
            position_ids = position_ids + 1
            logits = step(model, token, position, mask, position_ids)
        else:
            logits = step(model, token, position)
        position = position + 1
    return torch.cat(out, dim=1)
