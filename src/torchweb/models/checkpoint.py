"""Loading a Hugging Face checkpoint: config.json, then model.safetensors or the shards named by
model.safetensors.index.json, from a directory or a base URL (a Hub repository's
`https://huggingface.co/<repo>/resolve/main/`, or any server holding the same files).

The steps are written once, awaitable (`_load`): the blocking `from_pretrained` runs them
through _run_blocking (in CPython nothing in them waits; in the page it blocks where JSPI
allows), `from_pretrained_async` awaits them (pages that cannot block). Shards are loaded into
the model one at a time, so at most one shard's bytes are held besides the weights."""

import json
import os
import time

from .. import _dtype as D
from ..serialization import safetensors as _st
from ..serialization.url_fetch import in_browser
from . import browser_cache
from .config import config_from_dict
from .gpt2 import GPT2LMHeadModel
from .llama import LlamaForCausalLM

CACHE = "torchweb-models"      # the browser Cache Storage name files are kept in
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
_MODELS = {"gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM, "qwen2": LlamaForCausalLM}
# buffers old checkpoints carry that the modules compute instead
_DROPPED = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")


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


async def _load(source, device, dtype, progress, config, cache, timings=None):
    """The loading steps, fetching with _fetch (which awaits only in the browser). timings (a
    dict) gets the seconds spent reading files ("fetch_s", with "network_bytes" and
    "cache_bytes"), building the module on its device ("build_s") and loading the weights into
    it ("load_s"), for the pages' time-to-first-token figures."""
    t = {} if timings is None else timings
    t.update(fetch_s=0.0, network_bytes=0, cache_bytes=0)
    start = time.perf_counter()
    source = os.fspath(source)
    if config is None:
        raw = await _fetch(source, "config.json", progress, cache, t)
        if raw is None:
            raise FileNotFoundError(f"config.json not found at {source}")
        config = json.loads(raw)
    config = config_from_dict(config) if isinstance(config, dict) else config
    built = time.perf_counter()
    model = model_for_config(config)
    if device is not None:
        model.to(device)
    t["build_s"] = time.perf_counter() - built
    index = await _fetch(source, INDEX, progress, cache, t)
    files = [SINGLE] if index is None else sorted(set(json.loads(index)["weight_map"].values()))
    loaded = set()
    for name in files:
        data = await _fetch(source, name, progress, cache, t)
        if data is None:
            raise FileNotFoundError(f"{name} not found at {source} (neither {SINGLE} nor {INDEX} is there)")
        tensors = _st.load(data, device=str(model.lm_head.weight.device))
        del data
        if not loaded:      # before the first copy: the weights then load in their own dtype
            cast_weights(model, _auto_dtype(config, tensors) if dtype == "auto" else dtype)
        load_weights(model, tensors, loaded)
        del tensors
    _check_complete(model, loaded)
    t["load_s"] = time.perf_counter() - start - t["fetch_s"] - t["build_s"]
    return model.eval()


def _auto_dtype(config, tensors):
    """dtype="auto" (transformers 5's default): config.json's `dtype` (or its older name
    `torch_dtype`) where it names a floating dtype, else the dtype of the checkpoint's floating
    weights. float16 then holds 2 bytes a weight where the adapter has 'shader-f16', f32 words
    where it has not (quantize_(model, float16_weight_only()) packs them to 2 bytes there)."""
    named = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if isinstance(named, str):
        named = getattr(D, named.replace("torch.", ""), None)
    if named in (D.float32, D.float16, D.bfloat16):
        return named
    return next((t.dtype for t in tensors.values() if t.dtype.is_floating_point), None)


def cast_weights(model, dtype):
    """The model's parameters and persistent buffers in dtype, as transformers' from_pretrained
    casts them; buffers computed at init and kept out of state_dict (RoPE's inv_freq) keep
    their dtype (float32), as transformers keeps them."""
    if dtype is None:
        return
    for module in model.modules():
        for name, p in module._parameters.items():
            if p is not None and p.is_floating_point() and p.dtype is not dtype:
                p.data = p.data.to(dtype)
        for name, b in module._buffers.items():
            if (b is not None and b.is_floating_point() and b.dtype is not dtype
                    and name not in module._non_persistent_buffers_set):
                module._buffers[name] = b.to(dtype)


def _join(source, name):
    if _is_local(source):
        return os.path.join(source, name)
    return source.rstrip("/") + "/" + name


def _is_local(source):
    return not in_browser() and not source.startswith(("http://", "https://"))


async def _fetch(source, name, progress, cache=None, timings=None):
    """A file's bytes, or None where there is none (no file, HTTP 404). In the page, with a
    cache name, files are read from and kept in the browser's Cache Storage. timings (a dict
    as _load's) counts the seconds and the bytes, by where they came from."""
    t0 = time.perf_counter()
    data, where = await _read(source, name, progress, cache)
    if timings is not None:
        timings["fetch_s"] += time.perf_counter() - t0
        if data is not None:
            timings[where + "_bytes"] += len(data)
    return data


async def _read(source, name, progress, cache):
    """(bytes or None, "network" or "cache"): _fetch's work; a local file counts as network."""
    path = _join(source, name)
    if _is_local(source):
        if not os.path.exists(path):
            return None, "network"
        with open(path, "rb") as f:
            return f.read(), "network"
    return await browser_cache.fetch(path, cache, progress)


def _run_blocking(coroutine):
    """The coroutine's result, blocking: in CPython its fetches never wait (urllib), so one step
    finishes it; in the page it blocks on the JS promises where JSPI allows."""
    if in_browser():
        from pyodide.ffi import can_run_sync, run_sync
        if not can_run_sync():
            coroutine.close()
            raise RuntimeError("torchweb.models.from_pretrained: this page cannot block on a download "
                               "(pyodide.ffi.can_run_sync() is False); use "
                               "`await torchweb.models.from_pretrained_async(...)`")
        return run_sync(coroutine)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("from_pretrained: a fetch waited outside the browser")


def _resolve_dtype(dtype, torch_dtype):
    """dtype or its older name torch_dtype: "auto", a torch.dtype, or its name ("bfloat16")."""
    if torch_dtype is not None:
        if dtype not in ("auto", None) and dtype is not torch_dtype:
            raise ValueError("from_pretrained: give dtype or torch_dtype (its older name), not both")
        dtype = torch_dtype
    if isinstance(dtype, str) and dtype != "auto":
        dtype = getattr(D, dtype, None) if isinstance(getattr(D, dtype, None), D.dtype) else dtype
    if dtype is None:
        return "auto"
    if dtype != "auto" and not (isinstance(dtype, D.dtype) and dtype.is_floating_point):
        raise TypeError(f"from_pretrained: dtype must be \"auto\" or a floating torch.dtype, got {dtype!r}")
    return dtype


def from_pretrained(source, *, device=None, dtype="auto", torch_dtype=None, progress=True, config=None,
                    cache=CACHE):
    """The model a Hugging Face checkpoint holds (GPT-2 or Llama-style), in eval mode.

    source: a directory or a base URL holding config.json and model.safetensors (or sharded
    model-0000k-of-0000n.safetensors with model.safetensors.index.json). dtype (or its older
    name torch_dtype): "auto" (the default, as transformers 5's) keeps the checkpoint's dtype, as
    config.json names it or else as its weights are (a bfloat16 or float16 checkpoint gives a
    bfloat16 or float16 model), a torch.dtype (or its name) casts to it. progress: True prints a
    percentage for large downloads, a callable is called as progress(bytes_done, bytes_total)
    per file. config: a dict or config object to use instead of config.json. cache: in the page,
    the name of the browser's Cache Storage the files are kept in (a second visit reads them
    from there), None for none; in CPython a URL's files are not kept. In a page that cannot
    block, use `await from_pretrained_async(...)`."""
    return _run_blocking(_load(source, device, _resolve_dtype(dtype, torch_dtype), progress, config, cache))


async def from_pretrained_async(source, *, device=None, dtype="auto", torch_dtype=None, progress=True, config=None,
                                cache=CACHE, timings=None):
    """The awaitable form of from_pretrained. timings: a dict that receives where the time went
    (seconds reading files, "fetch_s", and their bytes from the network and from the cache,
    "network_bytes" / "cache_bytes"; building the module, "build_s"; loading the weights into
    it, "load_s"), as the Complete page reports it."""
    return await _load(source, device, _resolve_dtype(dtype, torch_dtype), progress, config, cache, timings)
