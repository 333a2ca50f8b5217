"""Long runs natively (issue 22): the browser tier's soak scripts (tests/browser/scripts/soak_*.py:
an MLP and the GPT demo's model trained eagerly and under torch.compile) run here on lavapipe,
in a subprocess where `import torch` gives torchweb, and must keep GPU bytes, live buffers,
bind groups and Python's objects flat (tests/browser/soak_stats.py). Also the leak they found:
the device-side checks kept between readbacks held every step's targets."""

import gc
import json
import os
import subprocess
import sys
import weakref

import torch
import torchweb
from torchweb.backends.webgpu import errors
from torchweb.backends.webgpu.runtime import get_runtime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = ("soak_mlp", "soak_gpt")

# Runs the scripts as the page does (replay.py: modules named on the `# modules:` line first),
# with torchweb as torch; prints each script's result and figures as one JSON line.
RUNNER = r"""
import json, os, sys, types
import torchweb
torchweb.install_torch_alias()
torchweb.set_default_device("webgpu")
for name in sys.argv[1:]:
    path = os.path.join("tests", "browser", "scripts", name + ".py")
    code = open(path).read()
    mods = next((l.split(":", 1)[1].split() for l in code.splitlines() if l.startswith("# modules:")), [])
    for p in mods:
        m = types.ModuleType(os.path.basename(p)[:-3])
        sys.modules[m.__name__] = m
        exec(compile(open(p).read(), p, "exec"), m.__dict__)
    ns = {"__name__": "__script__"}
    exec(compile(code, path, "exec"), ns)
    print("SOAK " + json.dumps({"name": name, "result": ns["result"], "runs": ns["soak_runs"]}))
"""


def test_soak_scripts_stay_flat_natively():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    r = subprocess.run([sys.executable, "-c", RUNNER, *SCRIPTS], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    done = [json.loads(line[5:]) for line in r.stdout.splitlines() if line.startswith("SOAK ")]
    assert [d["name"] for d in done] == list(SCRIPTS), r.stdout[-2000:]
    for d in done:
        for mode, res in d["result"].items():
            assert res["grew"] == [], (d["name"], mode, res["grew"])
            assert res["learned"], (d["name"], mode, res["losses"])
        for run, fig in d["runs"].items():
            assert fig["steps"] >= 70, run
            b, a = fig["before"], fig["after"]
            # the figures were measured (a snapshot of nothing would pass grew() too)
            assert b["buffers"] > 0 and b["bind_groups"] > 0 and b["allocated"] > 0, (run, b)
            assert a["buffers"] == b["buffers"] and a["allocated"] == b["allocated"], (run, b, a)


def _live_targets():
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is torchweb.Tensor and o.dtype == torchweb.int64)


def test_checks_between_readbacks_keep_few_targets():
    """A loss per step and no readback: the checks of the targets' range wait for the next
    readback, each holding its target (to name a bad value); only the last PENDING_KEPT do."""
    logits = torchweb.zeros(4, 3, device="webgpu")
    torchweb.webgpu.synchronize()
    base = _live_targets()
    losses = [torchweb.nn.functional.cross_entropy(logits, torchweb.tensor([0, 1, 2, 1], device="webgpu"))
              for _ in range(3 * errors.PENDING_KEPT)]
    held = _live_targets() - base
    assert 0 < held <= errors.PENDING_KEPT, held
    assert len(get_runtime().errors._pending) == errors.PENDING_KEPT
    torchweb.webgpu.synchronize()
    assert _live_targets() == base
    assert losses[-1].item() == torch.nn.functional.cross_entropy(torch.zeros(4, 3), torch.tensor([0, 1, 2, 1])).item()


def test_check_past_the_kept_ones_still_raises():
    """A bad target after PENDING_KEPT good ones raises IndexError at the next readback (named
    generically: the entry that would name it is not kept)."""
    logits = torchweb.zeros(2, 3, device="webgpu")
    torchweb.webgpu.synchronize()
    good = torchweb.tensor([0, 2], device="webgpu")
    for _ in range(errors.PENDING_KEPT + 5):
        torchweb.nn.functional.cross_entropy(logits, good)
    bad = torchweb.nn.functional.cross_entropy(logits, torchweb.tensor([0, 7], device="webgpu"))
    try:
        bad.item()
    except IndexError as e:
        assert "past the 64 error-checked ops since the last readback" in str(e), e
    else:
        raise AssertionError("a target of 7 for 3 classes did not raise")
    ok = torchweb.nn.functional.cross_entropy(logits, good)   # the device stays usable
    assert abs(ok.item() - torch.nn.functional.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 2])).item()) < 1e-6


def test_compiled_call_frees_its_inputs_without_a_collection():
    """A compiled call's input tensors die with their last reference, not at the next garbage
    collection (the input signature was a recursive closure, a reference cycle that held them:
    in the page, 77 buffers piled up in 120 replayed steps)."""
    step = torchweb.compile(lambda x: (x * 2).sum())
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):   # eager, two recordings, replays
            x = torchweb.ones(8, device="webgpu")
            ref = weakref.ref(x._storage)
            step(x)
            del x
            assert ref() is None, "the input's storage outlived the call"
    finally:
        gc.enable()
    assert step.compile_stats["replays"] >= 1, step.compile_stats


def test_dropped_compiled_step_frees_its_captures():
    """A compiled training step that is dropped (a notebook cell run again, a page's second run)
    gives back its captures' GPU memory: torch.compile's registry of compiled functions (for
    torch.compiler.reset) held every one made, with its model and captured buffers."""
    gc.collect()
    base = torchweb.webgpu.memory_allocated()

    def run():
        model = torchweb.nn.Linear(8, 4, device="webgpu")
        opt = torchweb.optim.SGD(model.parameters(), lr=0.1)

        @torchweb.compile
        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss

        for _ in range(5):
            step(torchweb.ones(16, 8, device="webgpu"))
        assert step.compile_stats["replays"] >= 1, step.compile_stats
        return weakref.ref(step)

    ref = run()
    gc.collect()
    assert ref() is None, "the compiled step outlived its last reference"
    assert torchweb.webgpu.memory_allocated() == base
