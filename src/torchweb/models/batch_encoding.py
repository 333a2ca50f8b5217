"""`tokenizer(texts, padding=True, return_tensors="pt")` as transformers' tokenizers answer it:
a BatchEncoding (a dict with attribute access) of input_ids and attention_mask, each row padded
with the pad token on the tokenizer's padding_side ("left" for generation, so every prompt ends
at the last column) and truncated on its truncation_side to max_length."""

import torchweb as torch

_PADDINGS = {False: None, "do_not_pad": None, True: "longest", "longest": "longest", "max_length": "max_length"}


class BatchEncoding(dict):
    """transformers' BatchEncoding: a dict whose keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, device):
        return BatchEncoding({k: v.to(device) if torch.is_tensor(v) else v for k, v in self.items()})


def _cut(ids, max_length, side):
    if max_length is None or len(ids) <= max_length:
        return ids
    return ids[:max_length] if side == "right" else ids[len(ids) - max_length:]


def encode_batch(tokenizer, text, padding=False, truncation=False, max_length=None, return_tensors=None,
                 add_special_tokens=True, return_attention_mask=True, padding_side=None):
    """The BatchEncoding of text (a str or a list of str) under transformers' rules."""
    single = isinstance(text, str)
    texts = [text] if single else text
    if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
        raise ValueError("text input must be of type `str` (single example), `list[str]` (batch or single "
                         "pretokenized example) or `list[list[str]]` (batch of pretokenized examples).")
    if padding not in _PADDINGS:
        raise ValueError(f"padding must be True, False, 'longest', 'max_length' or 'do_not_pad', got {padding!r}")
    side = padding_side or tokenizer.padding_side
    if side not in ("left", "right"):
        raise ValueError(f"Padding side should be selected between 'right' and 'left', current value: {side}")
    limit = max_length if max_length is not None else tokenizer.model_max_length
    rows = [tokenizer.encode(t, add_special_tokens=add_special_tokens) for t in texts]
    if truncation not in (False, "do_not_truncate"):
        if limit is None:
            raise ValueError("truncation needs max_length (the tokenizer has no model_max_length)")
        rows = [_cut(r, limit, tokenizer.truncation_side) for r in rows]
    masks = [[1] * len(r) for r in rows]
    mode = _PADDINGS[padding]
    if mode is not None:
        width = max(map(len, rows), default=0) if mode == "longest" else limit
        if width is None:
            raise ValueError("padding='max_length' needs max_length (the tokenizer has no model_max_length)")
        pad = tokenizer.pad_token_id
        if pad is None and any(len(r) < width for r in rows):
            raise ValueError("Asking to pad but the tokenizer does not have a padding token. Please select a token "
                             "to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new "
                             "pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.")
        fill = [width - len(r) for r in rows]
        if side == "left":
            rows = [[pad] * n + r for n, r in zip(fill, rows)]
            masks = [[0] * n + m for n, m in zip(fill, masks)]
        else:
            rows = [r + [pad] * n for n, r in zip(fill, rows)]
            masks = [m + [0] * n for n, m in zip(fill, masks)]
    out = {"input_ids": rows}
    if return_attention_mask:
        out["attention_mask"] = masks
    if return_tensors is not None:
        if return_tensors != "pt":
            raise ValueError(f"return_tensors={return_tensors!r}: torchweb's tokenizer returns 'pt' tensors or lists")
        if len({len(r) for r in rows}) > 1:
            raise ValueError("Unable to create tensor, you should probably activate truncation and/or padding with "
                             "'padding=True' 'truncation=True' to have batched tensors with the same length.")
        return BatchEncoding({k: torch.tensor(v, dtype=torch.long) for k, v in out.items()})
    if single:
        out = {k: v[0] for k, v in out.items()}
    return BatchEncoding(out)
