"""What a long training run must keep flat, measured between steps (tests/browser/scripts/soak_*.py,
bench/soak_page.py): torchweb's GPU bytes, its live GPU buffers and bind groups, and in the page
Pyodide's live PyProxies and JS references, Python's objects and the JS heap.

Under PyTorch (record_cases.py runs the scripts there) there is nothing of this to measure:
snapshot() is {} and grew() is [], which is what the page's run must give too.
"""

import gc
import math
import os
import sys

import torch

STEPS = int(os.environ.get("TORCHWEB_SOAK_STEPS", "160"))   # the long mode (bench/soak_page.py) sets 1000+
# Steps before the first snapshot: pools, caches and captures filled, and the 64 device-side
# checks that torchweb keeps (with their targets) between readbacks (backends/webgpu/errors.py):
# the script reads nothing back between its snapshots
WARMUP = max(80, STEPS // 5)

# The most each figure may grow between the snapshot after warm-up and the one at the end,
# as (fixed slack, per step). GPU bytes, buffers, PyProxies: nothing (a step frees all it makes).
# Bind groups and JS references: under half a step's worth (the bind-group cache keeps groups of
# buffers the pool re-creates until it holds 4096: runtime.mjs). Python's objects tracked by the
# collector move by up to ~100 either way between two collections of a flat run (lavapipe, 160 to
# 1000 steps), so 256 of slack: CI's 80 steps catch a leak of 4 objects a step (a tensor is
# more), the long mode's 800 one of one. The JS heap: one GC leaves some hundreds of KB of noise: 2 MB.
ALLOWED = {"allocated": (0, 0), "reserved": (0, 0), "buffers": (0, 0), "pyproxies": (0, 0),
           "bind_groups": (0, 0.5), "js_refs": (0, 0.5), "python_objects": (256, 0.25),
           "js_heap": (2 << 20, 0)}


def _page():
    """pyodide's JS module object and the js namespace, or (None, None) outside Pyodide."""
    if "pyodide" not in sys.modules and sys.platform != "emscripten":
        return None, None
    import js
    import pyodide_js
    return pyodide_js._module, js


def start():
    """Call once before training: PyProxies are counted from here (Pyodide's allocation tracing,
    present in release builds: Module.pyproxy_alloc_map)."""
    mod, _ = _page()
    if mod is None:
        return
    from pyodide.ffi import create_proxy
    mod.enable_pyproxy_allocation_tracing()
    n = mod.pyproxy_alloc_map.size
    probe = create_proxy([])   # the count must see a proxy made and destroyed, or it proves nothing
    made = mod.pyproxy_alloc_map.size - n
    probe.destroy()
    if made != 1 or mod.pyproxy_alloc_map.size != n:
        raise RuntimeError(f"Pyodide's PyProxy count did not follow a probe proxy ({made} made)")


def snapshot():
    """The figures now, after a garbage collection; {} under PyTorch. Takes no readback: one would
    drop the device-side checks kept since the last (and their targets), which a training step
    that never reads back keeps at the most (64) after warm-up."""
    wg = getattr(torch, "webgpu", None)
    if wg is None or not hasattr(wg, "memory_reserved"):
        return {}
    gc.collect()
    from torchweb.backends.webgpu.runtime import get_runtime
    rt = get_runtime()
    rt.flush()   # buffers freed by the collection are destroyed by the next flush
    stats = rt.driver.stats()
    s = {"allocated": wg.memory_allocated(), "reserved": wg.memory_reserved(),
         "buffers": stats["buffers"], "bind_groups": stats["bindGroups"],
         "python_objects": len(gc.get_objects())}
    mod, js = _page()
    if mod is not None:
        s["pyproxies"] = mod.pyproxy_alloc_map.size
        s["js_refs"] = mod._hiwire_num_refs()
        s["wasm_heap"] = mod.HEAP8.length
        if hasattr(js, "gc"):   # Chromium with --js-flags=--expose-gc
            js.gc()
        mem = getattr(js.performance, "memory", None)   # window only, not in a worker
        if mem is not None:
            s["js_heap"] = mem.usedJSHeapSize
    return s


def grew(before, after, steps):
    """One line per figure that grew past its allowance over `steps` steps; [] when flat."""
    out = []
    for k, b in before.items():
        if k not in ALLOWED or k not in after:
            continue
        fixed, per_step = ALLOWED[k]
        allowed = fixed + int(per_step * steps)
        if after[k] - b > allowed:
            out.append(f"{k} grew {b} -> {after[k]} in {steps} steps (allowed {allowed})")
    return out


def line(name, before, after, steps):
    """The figures before -> after, for the page's log and the bench's report."""
    parts = [f"{k} {before[k]} -> {after.get(k)}" for k in before]
    return f"soak {name}: {steps} steps after warm-up: " + ", ".join(parts)


def soak(name, step, batch, runs, learns=0.5):
    """STEPS calls of step(*batch(i)) (a training step returning its loss), snapshots after
    WARMUP and at the end, nothing read back between them. Notes the figures in runs[name] (for
    bench/soak_page.py) and returns what the page's run must match: the first three losses,
    whether the last is under `learns` times the first, and what grew ([])."""
    losses, before = [], None
    for i in range(STEPS):
        if i == WARMUP:
            before = snapshot()
        loss = step(*batch(i))
        if i < 3:
            losses.append(loss.item())
    after = snapshot()   # (before the last loss is read: see snapshot)
    losses.append(loss.item())
    steps = STEPS - WARMUP
    print(line(name, before, after, steps))
    runs[name] = {"steps": steps, "before": before, "after": after,
                  "compile": dict(getattr(step, "compile_stats", {}))}
    return {"losses": losses[:3], "learned": losses[-1] < learns * losses[0],
            "grew": grew(before, after, steps)}


def formula_weights(model, freq, scale):
    """Every parameter from a formula, the same under PyTorch and torchweb (the scripts may not
    depend on random numbers: the generators differ)."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            p.copy_(torch.tensor([math.sin(freq * i + k) * scale for i in range(p.numel())]).reshape(p.shape))
    return model
