# Checkpoints in the browser: run by site/tests.mjs after the driver checks, in the same
# interpreter. A torch.save file and a safetensors file written by PyTorch
# (tests/browser/fixtures/make_checkpoints.py) are loaded from the served URL through
# torchweb.hub (the JS fetch API), onto webgpu, and compared with checkpoint.json; then a
# save/load round trip and a hostile pickle, in Pyodide. Defines
# `await run_checkpoint_checks(summary)`, which adds its checks to the driver summary dict.
import io
import json
import traceback
import warnings
import urllib.parse
import zipfile

import torchweb


def _fixture_url(name):
    import js
    return urllib.parse.urljoin(str(js.location.href), "../tests/browser/fixtures/" + name)


async def _expected():
    from pyodide.http import pyfetch
    resp = await pyfetch(_fixture_url("checkpoint.json"))
    return json.loads(await resp.string())


def _compare(got, want, name):
    assert torchweb.is_tensor(got), f"{name}: got {type(got).__name__}"
    assert got.device.type == "webgpu", f"{name}: on {got.device}"
    dtype = want["dtype"]   # (float16 too: held in f32 words without shader-f16)
    assert got.dtype.name == dtype, f"{name}: dtype {got.dtype}, expected {dtype}"
    assert list(got.shape) == want["shape"], f"{name}: shape {list(got.shape)}"
    assert list(got.stride()) == want["stride"], f"{name}: stride {list(got.stride())}"
    assert got.storage_offset() == want["offset"], f"{name}: offset {got.storage_offset()}"
    assert got.tolist() == want["values"], f"{name}: values {got.tolist()}"
    assert isinstance(got, torchweb.nn.Parameter) == want["parameter"], f"{name}: Parameter?"


async def check_pt_from_url_async():
    want = await _expected()
    ckpt = await torchweb.hub.load_state_dict_from_url_async(_fixture_url("checkpoint.pt"),
                                                             map_location="webgpu", progress=False)
    assert ckpt["iter_num"] == 1200 and ckpt["config"] == {"n_layer": 2, "bias": True}, "plain values"
    sd = ckpt["model"]
    assert list(sd) == list(want["pt"]), f"keys {list(sd)}"
    for k, w in want["pt"].items():
        _compare(sd[k], w, k)
    for a, b in want["shared"]:
        assert sd[a]._storage is sd[b]._storage, f"{a} and {b} should share a storage"


async def check_pt_from_url_sync():
    from pyodide.ffi import can_run_sync
    url = _fixture_url("checkpoint.pt")
    if not can_run_sync():
        try:
            torchweb.hub.load_state_dict_from_url(url, map_location="webgpu")
        except RuntimeError as e:
            assert "load_state_dict_from_url_async" in str(e), str(e)
            return
        raise AssertionError("the sync form should refuse where the page cannot block")
    want = await _expected()
    sd = torchweb.hub.load_state_dict_from_url(url, map_location="webgpu", progress=False)["model"]
    for k, w in want["pt"].items():
        _compare(sd[k], w, k)


async def check_safetensors_from_url():
    want = await _expected()
    sd = await torchweb.hub.load_state_dict_from_url_async(_fixture_url("checkpoint.safetensors"),
                                                           map_location="webgpu", progress=False)
    assert sorted(sd) == sorted(want["safetensors"]), f"keys {sorted(sd)}"
    for k, w in want["safetensors"].items():
        _compare(sd[k], w, k)


async def check_save_load_roundtrip():
    w = torchweb.arange(12, dtype=torchweb.float32, device="webgpu").reshape(3, 4) / 4
    obj = {"w": w, "view": w[1:, ::2], "ids": torchweb.tensor([5, -6], device="webgpu"),
           "mask": torchweb.tensor([True, False], device="webgpu"),
           "half": torchweb.tensor([1.5, -2.0], dtype=torchweb.float16, device="webgpu")}
    buf = io.BytesIO()
    torchweb.save(obj, buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"
    back = torchweb.load(buf.getvalue(), map_location="webgpu")
    for k, v in obj.items():
        assert back[k].tolist() == v.tolist() and back[k].dtype is v.dtype, k
        assert back[k].stride() == v.stride(), k
    assert back["w"]._storage is back["view"]._storage, "views share their storage"


async def check_hostile_pickle_refused():
    import pickle
    pkl = b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueR."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
    try:
        torchweb.load(buf.getvalue())
    except pickle.UnpicklingError as e:
        assert "GLOBAL os.system" in str(e), str(e)
        return
    raise AssertionError("a pickle naming os.system was not refused")


async def check_language_model_from_url():
    """torchweb.models in the page: a tiny GPT-2 in HF's sharded layout (fixtures/lm_tiny, written by
    make_lm_tiny.py with transformers) and its tokenizer.json, loaded from the served URL into the
    browser's Cache Storage; transformers' ids, logits and greedy tokens; a second load from the cache."""
    import js
    from torchweb.models import Tokenizer, from_pretrained_async, generate
    base = _fixture_url("lm_tiny/")
    from pyodide.http import pyfetch
    want = json.loads(await (await pyfetch(base + "expected.json")).string())
    await js.caches.delete("torchweb-lm-check")
    seen = []
    model = await from_pretrained_async(base, device="webgpu", cache="torchweb-lm-check",
                                        progress=lambda done, total: seen.append((done, total)))
    tok = await Tokenizer.from_pretrained_async(base)
    ids = tok.encode(want["prompt"])
    assert ids == want["ids"], f"ids {ids}"
    with torchweb.no_grad():
        last = model(torchweb.tensor([ids], device="webgpu"))[0, -1].tolist()
    worst = max(abs(a - b) for a, b in zip(last, want["last_logits"]))
    assert worst < 1e-3, f"last logits off by {worst}"
    streamed = []
    out = generate(model, [ids], len(want["tokens"]) - len(ids), greedy=True, callback=streamed.append)
    assert out[0].tolist() == want["tokens"], f"tokens {out[0].tolist()}"
    assert [t[0] for t in streamed] == want["tokens"][len(ids):]
    assert tok.decode(out[0].tolist()) == want["text"]
    cache = await js.caches.open("torchweb-lm-check")
    assert await cache.match(base + "model-00002-of-00003.safetensors"), "a shard was not cached"
    again = await from_pretrained_async(base, device="webgpu", cache="torchweb-lm-check")
    assert generate(again, [ids], 3, greedy=True).tolist()[0] == want["tokens"][:len(ids) + 3]
    await js.caches.delete("torchweb-lm-check")


CHECKPOINT_CHECKS = [check_pt_from_url_async, check_pt_from_url_sync, check_safetensors_from_url,
                     check_save_load_roundtrip, check_hostile_pickle_refused, check_language_model_from_url]


async def run_checkpoint_checks(summary):
    for check in CHECKPOINT_CHECKS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await check()
            summary["passed"].append(check.__name__)
        except Exception:
            summary["failed"].append([check.__name__, traceback.format_exc(limit=3)])
    return summary
