"""Loading a Hugging Face checkpoint: config.json, then model.safetensors or the shards named by
model.safetensors.index.json, from a directory or a base URL (a Hub repository's
`https://huggingface.co/<repo>/resolve/main/`, or any server holding the same files).

The steps are written once, as a generator that asks for files by name (`_steps`); the blocking
`from_pretrained` and the awaitable `from_pretrained_async` (for pages that cannot block) only
differ in how they fetch. Shards are loaded into the model one at a time, so at most one
shard's bytes are held besides the weights."""

import json
import os

from .. import _dtype as D
from ..serialization import safetensors as _st
from ..serialization.url_fetch import fetch_bytes, fetch_bytes_async, in_browser
from .config import config_from_dict
from .gpt2 import GPT2LMHeadModel
from .llama import LlamaForCausalLM

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
_MODELS = {"gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM}
# buffers old checkpoints carry that the modules compute instead
_DROPPED = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")


class _Missing(Exception):
    pass


def model_for_config(config):
    """An (initialized) model for a config object."""
    return _MODELS[config.model_type](config)


def hf_key(name, model_type):
    """A checkpoint's key as the module names it: GPT-2 files saved from GPT2Model lack the
    `transformer.` prefix."""
    if model_type == "gpt2" and not name.startswith(("transformer.", "lm_head.")):
        return "transformer." + name
    return name


def load_weights(model, tensors, loaded):
    """Copy one file's tensors into model (in place), recording the keys in loaded."""
    kind = model.config.model_type
    sd = {}
    for name, t in tensors.items():
        if name.endswith(_DROPPED):
            continue
        sd[hf_key(name, kind)] = t
    result = model.load_state_dict(sd, strict=False)
    if result.unexpected_keys:
        raise RuntimeError(f"checkpoint has keys the {type(model).__name__} does not: "
                           f"{', '.join(result.unexpected_keys[:8])}")
    loaded.update(sd)


def _check_complete(model, loaded):
    tied = {"lm_head.weight"} if model.config.tie_word_embeddings else set()
    missing = [k for k in model.state_dict() if k not in loaded and k not in tied]
    if missing:
        raise RuntimeError(f"checkpoint lacks weights of the {type(model).__name__}: {', '.join(missing[:8])}")


def _steps(device, dtype, config):
    """The loading steps: yields a file name, receives its bytes (None where it is absent)."""
    if config is None:
        raw = yield "config.json"
        if raw is None:
            raise FileNotFoundError("config.json not found")
        config = json.loads(raw)
    config = config_from_dict(config) if isinstance(config, dict) else config
    model = model_for_config(config)
    if device is not None:
        model.to(device)
    index = yield INDEX
    files = [SINGLE] if index is None else sorted(set(json.loads(index)["weight_map"].values()))
    loaded = set()
    for name in files:
        data = yield name
        if data is None:
            raise FileNotFoundError(f"{name} not found (neither {SINGLE} nor {INDEX} is there)")
        w = next(iter(model.parameters()))
        load_weights(model, _st.load(data, device=str(w.device)), loaded)
        del data
    _check_complete(model, loaded)
    if dtype is not None:
        model.to(dtype)
    return model.eval()


def _join(source, name):
    if os.path.isdir(source) and not in_browser():
        return os.path.join(source, name)
    return source.rstrip("/") + "/" + name


def _read_local(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def _is_local(source):
    return not in_browser() and not source.startswith(("http://", "https://"))


def _fetch(source, name, progress):
    """A file's bytes, or None where the server has none (HTTP 404)."""
    if _is_local(source):
        return _read_local(_join(source, name))
    try:
        return fetch_bytes(_join(source, name), progress)
    except Exception as e:   # urllib's HTTPError, or the browser's RuntimeError naming the status
        if "404" in str(e):
            return None
        raise


async def _fetch_async(source, name, progress):
    if _is_local(source):
        return _read_local(_join(source, name))
    try:
        return await fetch_bytes_async(_join(source, name), progress)
    except Exception as e:
        if "404" in str(e):
            return None
        raise


def _check_args(device, dtype):
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"from_pretrained: dtype must be a torch.dtype, got {type(dtype).__name__}")


def from_pretrained(source, *, device=None, dtype=None, progress=True, config=None):
    """The model a Hugging Face checkpoint holds (GPT-2 or Llama-style), in eval mode.

    source: a directory or a base URL holding config.json and model.safetensors (or sharded
    model-0000k-of-0000n.safetensors with model.safetensors.index.json). progress: True prints a
    percentage for large downloads, a callable is called as progress(bytes_done, bytes_total)
    per file. config: a dict or config object to use instead of config.json. In a page that
    cannot block, use `await from_pretrained_async(...)`."""
    _check_args(device, dtype)
    steps = _steps(device, dtype, config)
    reply = None
    try:
        while True:
            name = steps.send(reply)
            reply = _fetch(os.fspath(source), name, progress)
    except StopIteration as done:
        return done.value


async def from_pretrained_async(source, *, device=None, dtype=None, progress=True, config=None):
    """The awaitable form of from_pretrained."""
    _check_args(device, dtype)
    steps = _steps(device, dtype, config)
    reply = None
    try:
        while True:
            name = steps.send(reply)
            reply = await _fetch_async(os.fspath(source), name, progress)
    except StopIteration as done:
        return done.value
