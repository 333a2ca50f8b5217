"""The device API unchanged scripts call, and install_torch_alias() (run in a fresh interpreter:
this one has the real torch imported as the oracle)."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torchweb as tw

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def test_accelerator_answers_with_webgpu():
    assert tw.accelerator.is_available()
    dev = tw.accelerator.current_accelerator()
    assert dev == tw.device("webgpu") and dev.type == "webgpu"
    assert tw.accelerator.device_count() == 1
    assert tw.zeros(2, device=dev).device.type == "webgpu"
    tw.accelerator.synchronize()


def test_absent_backends_say_no():
    assert tw.cuda.is_available() is False and tw.cuda.device_count() == 0
    assert tw.backends.mps.is_available() is False
    tw.backends.cudnn.benchmark = True          # accepted, as scripts set it
    tw.backends.cuda.matmul.allow_tf32 = True
    with pytest.raises(RuntimeError, match="no CUDA device"):
        tw.cuda.current_device()
    with pytest.raises(RuntimeError, match="webgpu"):
        tw.device("cuda")


def test_settings_round_trip_like_pytorch():
    tw.set_float32_matmul_precision("high")
    assert tw.get_float32_matmul_precision() == "high"
    tw.set_float32_matmul_precision("highest")
    with pytest.warns(UserWarning):
        tw.set_float32_matmul_precision("fast")
    assert tw.get_float32_matmul_precision() == "highest"
    f = lambda x: x * 2  # noqa: E731
    assert tw.compile(f, disable=True) is f          # as torch.compile(disable=True)
    assert tw.compile(f)(tw.tensor([1.5])).tolist() == [3.0]   # capture: tests/test_compile.py


def test_grad_scaler_matches_pytorch_scaling_and_skips_non_finite():
    def run(lib, amp):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1) if hasattr(lib, "optim") else None
        scaler = amp.GradScaler(init_scale=4.0, growth_interval=1) if lib is tw else \
            torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=1)
        out = []
        for step, bad in enumerate([False, True, False]):
            opt.zero_grad()
            loss = (w * w).sum() * (float("inf") if bad else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            out.append((round(scaler.get_scale(), 6), [round(v, 6) for v in w.tolist()]))
        return out
    assert run(tw, tw.amp) == run(torch, torch.amp)


def _fresh(code):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd="/", timeout=120)


def test_install_torch_alias_makes_import_torch_torchweb():
    r = _fresh("""
        import torchweb
        torchweb.install_torch_alias()
        import torch, torch.nn as nn, torch.nn.functional as F
        from torch.nn import Linear
        from torch.nn.modules.module import Module
        assert torch is torchweb and nn is torchweb.nn and F is torchweb.nn.functional
        assert Linear is torchweb.nn.Linear and Module is torchweb.nn.Module
        x = torch.ones(2, 3)
        print(F.relu(x - 2).sum().item(), type(Linear(3, 1)(x)).__module__)
        try:
            import torch.distributed
        except ModuleNotFoundError as e:
            print("refused", e.name, str(e))
        torchweb.uninstall_torch_alias()
        import sys
        print("torch" in sys.modules)
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "0.0 torchweb"
    assert lines[1].startswith("refused torch.distributed") and "torch.distributed" in lines[1]
    assert lines[2] == "False"


def test_install_torch_alias_refuses_when_real_torch_is_loaded():
    with pytest.raises(RuntimeError, match="real torch is already imported"):
        tw.install_torch_alias()
