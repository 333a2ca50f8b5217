"""What real scripts touch besides the op namespaces (issue 18, item 6), each used the way
scripts use it and compared with PyTorch: constants, finfo/iinfo, the legacy tensor types,
torch.nn.attention, torch._dynamo / torch.jit / torch.compiler, versions, and "cuda" under the
torch alias (that part in fresh interpreters: the alias cannot coexist with the real torch)."""

import math
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import torchweb as tw
from oracle import assert_close, ours

_SRC = os.path.join(os.path.dirname(__file__), "..", "src")


# -- constants ------------------------------------------------------------------------------
def test_constants_are_pytorchs():
    for name in ("inf", "pi", "e"):
        assert getattr(tw, name) == getattr(torch, name), name
    assert math.isnan(tw.nan) and tw.newaxis is torch.newaxis is None


def test_constants_in_masking_and_indexing(device):
    x = torch.randn(3, 4)
    mask = torch.tensor([[True, False, True, False]] * 3)
    got = ours(x, device).masked_fill(ours(mask, device), -tw.inf).softmax(-1)
    assert_close(got, x.masked_fill(mask, -torch.inf).softmax(-1))
    assert_close(ours(x, device)[:, tw.newaxis] * tw.pi, x[:, torch.newaxis] * torch.pi)
    assert_close(tw.full((2,), tw.nan, device=device).isnan(), torch.full((2,), torch.nan).isnan())


# -- finfo / iinfo --------------------------------------------------------------------------
FLOATS = ["float16", "float32", "float64", "bfloat16"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_fields_are_pytorchs(name):
    got, want = tw.finfo(getattr(tw, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, field) == getattr(want, field), (name, field)
    assert repr(got) == repr(want)
    assert got == tw.finfo(getattr(tw, name))


def test_finfo_default_is_the_default_dtype():
    assert repr(tw.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("name", INTS)
def test_iinfo_fields_are_pytorchs(name):
    got, want = tw.iinfo(getattr(tw, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(got, field) == getattr(want, field), (name, field)
    assert repr(got) == repr(want)


def test_finfo_iinfo_refuse_the_wrong_kind_as_pytorch():
    for ours_call, theirs_call in ((lambda: tw.finfo(tw.int32), lambda: torch.finfo(torch.int32)),
                                   (lambda: tw.iinfo(tw.float32), lambda: torch.iinfo(torch.float32)),
                                   (lambda: tw.iinfo(tw.bool), lambda: torch.iinfo(torch.bool))):
        with pytest.raises(TypeError) as want:
            theirs_call()
        with pytest.raises(TypeError) as got:
            ours_call()
        assert str(got.value) == str(want.value)


def test_finfo_as_scripts_use_it(device):
    # attention masks with the dtype's most negative value, clamping away from zero
    x = torch.randn(2, 5)
    m = torch.tensor([[False, True, False, False, True]] * 2)
    got = ours(x, device).masked_fill(ours(m, device), tw.finfo(tw.float32).min).softmax(-1)
    assert_close(got, x.masked_fill(m, torch.finfo(x.dtype).min).softmax(-1))
    got = ours(x, device).abs().clamp(min=tw.finfo(ours(x, device).dtype).eps).log()
    assert_close(got, x.abs().clamp(min=torch.finfo(x.dtype).eps).log())
    i = torch.tensor([3, -7])
    assert_close(ours(i, device).clamp(max=tw.iinfo(tw.int32).max), i.clamp(max=torch.iinfo(torch.int32).max))


# -- the legacy tensor types ----------------------------------------------------------------
LEGACY = ["FloatTensor", "HalfTensor", "ByteTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_constructors(name, device):
    ours_t, theirs_t = getattr(tw, name), getattr(torch, name)
    assert ours_t.dtype.name == str(theirs_t.dtype).replace("torch.", "")
    got = ours_t(2, 3, device=device)     # uninitialized, of that shape
    assert tuple(got.shape) == (2, 3) and got.dtype is ours_t.dtype and got.device.type == device
    assert tuple(ours_t(tw.Size([4, 1]), device=device).shape) == tuple(theirs_t(torch.Size([4, 1])).shape)
    assert tuple(ours_t(device=device).shape) == tuple(theirs_t().shape) == (0,)
    data = [[1, 0, 2], [3, 1, 0]]
    assert_close(ours_t(data, device=device), theirs_t(data))
    assert_close(ours_t((1, 2), device=device), theirs_t((1, 2)))   # a tuple is data, not a shape
    t = ours_t(data, device=device)
    assert ours_t(t) is t


def test_legacy_type_constructor_refusals():
    for make in (lambda T: T(2.5), lambda T: T(tw.zeros(2, dtype=tw.int64) if T is tw.FloatTensor
                                                  else torch.zeros(2, dtype=torch.long))):
        with pytest.raises(TypeError):
            make(torch.FloatTensor)
        with pytest.raises(TypeError):
            make(tw.FloatTensor)


def test_legacy_types_in_isinstance_follow_the_dtype(device):
    dtypes = ["float32", "float16", "uint8", "int32", "int64", "bool"]
    for d in dtypes:
        x, y = tw.zeros(2, dtype=getattr(tw, d), device=device), torch.zeros(2, dtype=getattr(torch, d))
        for name in LEGACY:
            assert isinstance(x, getattr(tw, name)) == isinstance(y, getattr(torch, name)), (d, name)
        assert isinstance(x, tw.cuda.FloatTensor) == (d == "float32" and device == "webgpu")
    assert not isinstance([1.0], tw.FloatTensor) and not issubclass(tw.FloatTensor, tw.Tensor)
    assert repr(tw.FloatTensor) == repr(torch.FloatTensor) and repr(tw.cuda.LongTensor) == repr(torch.cuda.LongTensor)


def test_legacy_types_of_dtypes_held_elsewhere_or_refused():
    got, want = tw.DoubleTensor([[0.1, 2.0]]), torch.DoubleTensor([[0.1, 2.0]])
    assert got.dtype is tw.float64 and got.tolist() == want.tolist()     # on the host
    assert isinstance(got, tw.DoubleTensor) and not isinstance(got, tw.FloatTensor)
    assert got.type() == want.type() == "torch.DoubleTensor"
    for name in ("CharTensor", "ShortTensor"):
        assert not isinstance(tw.zeros(2), getattr(tw, name)) and getattr(torch, name)(2).dim() == 1
        with pytest.raises(TypeError, match="not supported"):
            getattr(tw, name)(2)


def test_legacy_types_in_annotations():
    import typing

    def f(x: tw.FloatTensor, y: typing.Optional[tw.LongTensor] = None) -> tw.BoolTensor | None:
        return x > 0
    hints = typing.get_type_hints(f)
    assert hints["x"] is tw.FloatTensor and hints["y"] == typing.Optional[tw.LongTensor]
    assert_close(f(tw.tensor([1.0, -1.0])), torch.tensor([True, False]))


def test_tensor_type_conversions(device):
    x = torch.tensor([1.5, -2.25, 0.0])
    ox = ours(x, device)
    assert ox.type() == x.type() == "torch.FloatTensor"
    for target in ("LongTensor", "IntTensor", "BoolTensor", "HalfTensor", "ByteTensor"):
        want = x.abs().type(getattr(torch, target))
        assert_close(ox.abs().type(getattr(tw, target)), want)
        assert_close(ox.abs().type("torch." + target), want)
        assert ox.abs().type(getattr(tw, target)).type() == want.type()
    assert_close(ox.type(tw.int32), x.type(torch.int32))
    assert ox.type("torch.cuda.FloatTensor").device.type == "webgpu"
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        ox.type("torch.Foo")


def test_module_type_with_a_legacy_type(device):
    m = tw.nn.Linear(3, 2).to(device).type(tw.HalfTensor)
    assert all(isinstance(p, tw.HalfTensor) for p in m.parameters())
    m.type(tw.FloatTensor)
    assert all(p.type() == "torch.FloatTensor" for p in m.parameters())


# -- torch.nn.attention ---------------------------------------------------------------------
def test_sdpbackend_is_pytorchs():
    from torch.nn.attention import SDPBackend as Theirs
    from torchweb.nn.attention import SDPBackend
    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in Theirs.__members__.items()}


@pytest.mark.parametrize("backends", ["FLASH_ATTENTION", ["MATH", "EFFICIENT_ATTENTION"]])
def test_sdpa_kernel_runs_attention_with_torchwebs_kernel(backends, device):
    from torch.nn.attention import SDPBackend as TB, sdpa_kernel as theirs_kernel
    from torchweb.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    pick = (lambda E: getattr(E, backends)) if isinstance(backends, str) else \
        (lambda E: [getattr(E, b) for b in backends])
    with theirs_kernel(pick(TB) if "FLASH" not in str(backends) else TB.MATH):
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel(pick(SDPBackend)):
        got = tw.nn.functional.scaled_dot_product_attention(ours(q, device), ours(k, device),
                                                            ours(v, device), is_causal=True)
    assert_close(got, want, atol=1e-5, rtol=1e-4)
    with tw.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True):
        assert_close(tw.nn.functional.scaled_dot_product_attention(
            ours(q, device), ours(k, device), ours(v, device)),
            torch.nn.functional.scaled_dot_product_attention(q, k, v), atol=1e-5, rtol=1e-4)


def test_sdpa_kernel_checks_its_argument_as_pytorch():
    from torch.nn.attention import sdpa_kernel as theirs_kernel
    from torchweb.nn.attention import sdpa_kernel
    with pytest.raises(AssertionError) as want:
        with theirs_kernel("flash"):
            pass
    with pytest.raises(AssertionError) as got:
        with sdpa_kernel("flash"):
            pass
    assert str(got.value) == str(want.value)


# -- torch.jit, torch._dynamo, torch.compiler -----------------------------------------------
def _scripted_pair(T):
    """The same decorated module for torch and torchweb: jit decorators on methods, a scripted
    function, is_scripting branches."""
    class Block(T.nn.Module):
        scale: T.jit.Final[float]

        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 3)
            self.scale = 2.0

        @T.jit.ignore
        def debug(self, x):
            return x

        @T.jit.unused
        def unused_path(self, x):
            return x * 0

        @T.jit.export
        def double(self, x):
            return x * self.scale

        def forward(self, x):
            x = T.jit.annotate(T.Tensor, self.lin(x))
            if T.jit.is_scripting() or T.jit.is_tracing():
                return x
            return self.double(self.debug(x)).relu()

    @T.jit.script
    def gelu_ish(x):
        return x * T.sigmoid(1.702 * x)
    T.manual_seed(0)
    return T.jit.script(Block()) if T is tw else Block(), gelu_ish


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
def test_jit_script_trace_and_decorators_run_eagerly(device):
    theirs_m, theirs_f = _scripted_pair(torch)
    ours_m, ours_f = _scripted_pair(tw)
    ours_m.to(device).load_state_dict({k: ours(v, device) for k, v in theirs_m.state_dict().items()})
    x = torch.randn(5, 4)
    want = theirs_f(theirs_m(x))
    assert_close(ours_f(ours_m(ours(x, device))), want, atol=1e-5, rtol=1e-5)
    traced = tw.jit.trace(ours_m, (ours(x, device),))
    assert traced is ours_m
    assert_close(traced(ours(x, device)), theirs_m(x), atol=1e-5, rtol=1e-5)
    assert tw.jit.is_scripting() is torch.jit.is_scripting() is False
    assert tw.jit.Attribute(3, int) == torch.jit.Attribute(3, int)
    assert tw.jit.Final is torch.jit.Final


def _overloaded_pair(T):
    """torchvision DenseNet's shape: typed overload declarations of a method and of a function,
    then the definitions that run."""
    class Layer(T.nn.Module):
        @T.jit._overload_method  # noqa: F811
        def forward(self, input):
            # type: (List[Tensor]) -> Tensor
            pass

        @T.jit._overload_method  # noqa: F811
        def forward(self, input):
            # type: (Tensor) -> Tensor
            ...

        def forward(self, input):  # noqa: F811
            prev = [input] if isinstance(input, T.Tensor) else input
            return T.cat(prev, 1) * 2

    @T.jit._overload
    def first(x: T.Tensor) -> T.Tensor:
        pass

    def first(x):  # noqa: F811
        return x[:1]
    return Layer(), first


def test_jit_overload_declarations_run_the_definition(device):
    x = torch.arange(12.0).reshape(2, 6)
    (layer_t, first_t), (layer_o, first_o) = _overloaded_pair(torch), _overloaded_pair(tw)
    assert_close(layer_o(ours(x, device)), layer_t(x))
    assert_close(layer_o([ours(x, device), ours(x, device)]), layer_t([x, x]))
    assert_close(first_o(ours(x, device)), first_t(x))
    for T in (torch, tw):
        def bad(x):
            return x
        for deco in (T.jit._overload, T.jit._overload_method):
            with pytest.raises(RuntimeError, match="Only `pass` statement or `...` can be the body of "
                                                   "overload declaration"):
                deco(bad)


def test_jit_refuses_torchscript_with_a_reason():
    assert not hasattr(tw.jit, "save") and not hasattr(tw.jit, "ScriptModule")
    with pytest.raises(AttributeError, match="TorchScript is not part of"):
        tw.jit.load("model.pt")


def test_dynamo_entry_points_are_eager_identities(device):
    f = lambda x: x * 3  # noqa: E731
    for deco in (tw._dynamo.allow_in_graph, tw._dynamo.disable, tw._dynamo.disable(),
                 tw.compiler.disable, tw.compiler.allow_in_graph):
        assert deco(f) is f
    x = ours(torch.arange(6.0).reshape(2, 3), device)
    assert tw._dynamo.mark_dynamic(x, 0) is None and tw._dynamo.maybe_mark_dynamic(x, 1) is None
    for name in ("suppress_errors", "capture_scalar_outputs", "cache_size_limit",
                 "automatic_dynamic_shapes", "accumulated_cache_size_limit"):
        assert getattr(tw._dynamo.config, name) == getattr(torch._dynamo.config, name), name
    tw._dynamo.config.suppress_errors = True
    assert tw._dynamo.config.suppress_errors is True
    tw._dynamo.config.suppress_errors = False
    with pytest.raises(AttributeError):
        tw._dynamo.config.no_such_setting
    tw._dynamo.reset()
    assert not tw.compiler.is_compiling() and not tw._dynamo.is_compiling()
    assert tw.compiler.is_dynamo_compiling() is torch.compiler.is_dynamo_compiling() is False


def test_is_compiling_is_true_while_torch_compile_captures():
    # the usual pattern: a readback for logging kept out of the compiled program
    seen, flags = [], []

    def step(x):
        y = x * 2 + 1
        flags.append(tw.compiler.is_compiling())
        if not tw.compiler.is_compiling():
            seen.append(y.sum().item())
        return y
    compiled = tw.compile(step)
    x = torch.randn(8)
    for _ in range(5):
        got = compiled(ours(x, "webgpu"))
    assert_close(got, x * 2 + 1)
    assert compiled.compile_stats["replays"] >= 1, compiled.compile_stats
    assert flags[0] is False and all(flags[1:]) and len(seen) == 1
    assert not tw.compiler.is_compiling()


# -- versions -------------------------------------------------------------------------------
VERSION_CASES = ["2.0", "2.2", "2.13", "2.13.0", "2.13.1", "2.14.0a0", "1.13.1", "3", "2.13.0+cpu",
                 "2.13.0.dev20260101", "2.13.0rc1", "2.13.0.post1", (2, 0), (2, 13), (2, 13, 0),
                 [1, 9], (2, 14), "parrot"]


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "1.10.0a0", "2.1.0.dev20230101"])
def test_torch_version_compares_as_pytorchs(version):
    from packaging.version import Version
    from torch.torch_version import TorchVersion as Theirs
    from torchweb.torch_version import TorchVersion
    import operator
    ours_v, theirs_v = TorchVersion(version), Theirs(version)
    assert isinstance(ours_v, str) and ours_v == version and hash(ours_v) == hash(version)
    ops = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)
    for other in VERSION_CASES:
        for op in ops:
            assert op(ours_v, other) == op(theirs_v, other), (version, op, other)
    for other in (Version("2.0"), Version("2.13.0"), Version("2.13.0a1")):
        # (torch compares with its vendored packaging only; packaging's own Version's answer here)
        for op in ops[:5]:   # (!= is str's, as PyTorch's)
            assert op(ours_v, other) == op(Version(version), other), (version, op, other)


def test_version_module_without_the_alias():
    assert tw.version.__version__ == "2.13.0" == torch.__version__.split("+")[0]
    assert tw.version.cuda is None and tw.version.hip is None
    assert tw.__version__ == tw.version.torchweb
    with open(os.path.join(_SRC, "..", "pyproject.toml")) as f:
        assert f'version = "{tw.version.torchweb}"' in f.read()


def _fresh(code):
    """Run code in a new interpreter (the alias needs one without the real torch); its stdout."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(_SRC))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=env, cwd="/", timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_version_checks_under_the_alias():
    out = _fresh("""
        import torchweb
        torchweb.install_torch_alias()
        import torch
        from packaging import version
        assert torch.__version__ == "2.13.0" and torch.version.__version__ == "2.13.0"
        assert torch.__version__ >= "2.0" and torch.__version__ > "2.2" and torch.__version__ < (3, 0)
        assert version.parse(torch.__version__) >= version.parse("2.0")
        assert tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 0)
        assert torch.version.cuda is None and torch.version.hip is None
        print(torch.version.torchweb, type(torch.__version__).__name__)
        torchweb.uninstall_torch_alias()
        print(torchweb.__version__)
    """)
    assert out == [f"{tw.version.torchweb} TorchVersion", tw.version.torchweb]


# -- "cuda" under the alias -----------------------------------------------------------------
def test_cuda_without_the_alias_is_absent():
    assert tw.cuda.is_available() is False and tw.cuda.device_count() == 0
    assert not tw.ones(2).is_cuda
    for call in (lambda: tw.device("cuda"), tw.cuda.synchronize, tw.cuda.current_device,
                 lambda: tw.zeros(2, device="cuda:0")):
        with pytest.raises(RuntimeError, match="install_torch_alias|webgpu"):
            call()
    # .cuda() names no device string: it moves to the GPU torchweb has, alias or not
    assert tw.ones(2, device="cpu").cuda().device.type == "webgpu"
    assert tw.nn.Linear(2, 2).to("cpu").cuda().weight.device.type == "webgpu"
    assert tw.cuda.memory_allocated() == 0
    tw.cuda.manual_seed_all(0)      # no CUDA generator: nothing to do, as in PyTorch
    assert not hasattr(tw.cuda, "Stream")


_SCRIPT = """
    import json, torchweb
    torchweb.install_torch_alias({flag})
    import torch, torch.nn as nn
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    w = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor(w)); model.bias.fill_(0.1)
    model = model.to(device)
    x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], device=device)
    loss = model(x).pow(2).mean()
    loss.backward()
    out = dict(device=device, type=x.device.type, is_cuda=x.is_cuda, grad=model.weight.grad.tolist(),
               loss=loss.item())
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        y = torch.ones(4).cuda()
        out.update(moved=str(y.device), same=y.device == torch.device("cuda"),
                   eq_str=y.device == "cuda:0", count=torch.cuda.device_count(),
                   current=torch.cuda.current_device(), name=torch.cuda.get_device_name(0),
                   allocated=torch.cuda.memory_allocated() > 0,
                   peak=torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated(),
                   bf16=torch.cuda.is_bf16_supported(), module=str(nn.Linear(2, 2).cuda().weight.device))
        torch.cuda.manual_seed_all(3); a = torch.rand(3, device="cuda").tolist()
        torch.cuda.manual_seed(3); b = torch.rand(3, device="cuda").tolist()
        out.update(seeded=a == b)
        torch.cuda.set_device(0); torch.cuda.empty_cache()
        with torch.cuda.amp.autocast(enabled=False):
            pass
    print(json.dumps(out))
"""


def test_cuda_names_webgpu_under_the_alias():
    import json
    out = json.loads(_fresh(_SCRIPT.format(flag=""))[-1])
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        model.bias.fill_(0.1)
    loss = model(torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])).pow(2).mean()
    loss.backward()
    assert out["device"] == "cuda" and out["type"] == "webgpu" and out["is_cuda"] is True
    assert out["loss"] == pytest.approx(loss.item(), rel=1e-6)
    torch.testing.assert_close(torch.tensor(out["grad"]), model.weight.grad)
    assert out["moved"] == "webgpu:0" and out["same"] and out["eq_str"] and out["module"] == "webgpu:0"
    assert out["count"] == 1 and out["current"] == 0 and out["name"]
    assert out["allocated"] and out["peak"] and out["bf16"] is False and out["seeded"]


def test_cuda_alias_switched_off_takes_the_cpu_branch():
    import json
    out = json.loads(_fresh(_SCRIPT.format(flag="cuda=False"))[-1])
    assert out["device"] == "cpu" and out["type"] == "cpu" and out["is_cuda"] is False


def test_torch_tensor_as_the_legacy_constructor(device):
    # nn.Parameter(torch.Tensor(out, in)) then an init: older layers' idiom
    got, want = tw.Tensor(3, 2), torch.Tensor(3, 2)
    assert tuple(got.shape) == tuple(want.shape) and got.dtype is tw.float32
    assert_close(tw.Tensor([[1, 2], [3, 4]]), torch.Tensor([[1, 2], [3, 4]]))
    assert tuple(tw.Tensor().shape) == tuple(torch.Tensor().shape)
    w = tw.nn.Parameter(tw.Tensor(4, 3).to(device))
    tw.nn.init.constant_(w, 0.5)
    assert_close(w.detach(), torch.full((4, 3), 0.5))
    assert isinstance(w, tw.Tensor) and isinstance(w, tw.FloatTensor)
    with pytest.raises(TypeError):
        tw.Tensor(2.5)


def test_set_default_tensor_type_as_old_scripts_call_it():
    try:
        for t in ("torch.FloatTensor", "HalfTensor", "torch.cuda.FloatTensor"):
            ours_t = getattr(tw, t) if "." not in t else t
            theirs_t = getattr(torch, t) if "." not in t else t
            with pytest.warns(UserWarning, match="deprecated"):
                tw.set_default_tensor_type(ours_t)
            if "cuda" not in t:
                with warnings.catch_warnings():   # (PyTorch warns once a process)
                    warnings.simplefilter("ignore")
                    torch.set_default_tensor_type(theirs_t)
                assert repr(tw.get_default_dtype()) == repr(torch.get_default_dtype())
                assert repr(tw.tensor([1.5]).dtype) == repr(torch.tensor([1.5]).dtype)
        assert tw.get_default_device().type == "webgpu" and tw.get_default_dtype() is tw.float32
        for bad in (tw.LongTensor, tw.DoubleTensor):
            with pytest.raises(TypeError), pytest.warns(UserWarning):
                tw.set_default_tensor_type(bad)
    finally:
        torch.set_default_dtype(torch.float32)
        tw.set_default_dtype(tw.float32)
        tw.set_default_device(None)
