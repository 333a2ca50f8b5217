"""GPU time per kernel family of a captured GPT train step (issue 9's profile): the step is
captured with torchweb.compile, then each dispatch of the captured program is run alone, R times
in one submission, and timed to the GPU's completion; times are summed per kernel family (the
first element of the pipeline's cache key) and per pipeline.

    PYTHONPATH=src python3 bench/kernel_profile.py [--smoke | --browser-gpt | --mlp | --lm VARIANT] [--repeat R] [--out FILE]

--browser-gpt: the browser suite's small GPT (2 layers, width 64, T 32, batch 4), e.g. on
SwiftShader natively (VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json): where the
browser's training step spends its time. --mlp: the MLP 784-256-10 Adam step (batch 64) instead.
--lm VARIANT: the compiled per-token decode step of a GPT-2 124M-shaped model (batch 1, a
160-long KV cache) with bench/lm_generate.py's weight variant (float32, int8-weight, ...).

Per-dispatch times include one submission and wait spread over R runs: small kernels read a
little high. The total is compared with the replayed step's measured GPU time.
"""

import argparse
import json
import struct
import os
import sys
from array import array
from functools import partial

sys.path.insert(0, os.path.dirname(__file__))
import torchweb  # noqa: E402
from torchweb.backends.webgpu import commands as C  # noqa: E402
from torchweb.backends.webgpu.runtime import PARAMS_BUFFER_ID, get_runtime  # noqa: E402
from timing import best_of, warm_up  # noqa: E402
from workloads import BROWSER_GPT, _gpt_step, _mlp_step  # noqa: E402


def profile_graph(graph, repeat):
    """Each dispatch of a captured program run alone, `repeat` times in one submission, timed
    to the GPU's completion: (total seconds, {family: (n, s)}, {pipeline: (n, s)})."""
    rt = get_runtime()
    names = {pid: key for key, pid in rt._pipelines.items()}
    w, blob = graph.words, graph.blob
    params_row = uniforms = None
    fam, per = {}, {}
    i = 0
    total = 0.0
    while i < len(w):
        op = w[i]
        if op == C.WRITE:
            params_row = w[i:i + 5]
            if w[i + 1] == PARAMS_BUFFER_ID:
                uniforms = params_row
            i += 5
        elif op == C.COPY:
            i += 6
        elif op == C.DISPATCH:
            row = w[i:i + 6 + 3 * w[i + 5]]
            i += len(row)
            prog = array("I", params_row)
            for _ in range(repeat):
                prog.extend(row)
            run = partial(rt.driver.execute, prog, blob)
            warm_up(run, rt.driver.wait)
            dt = best_of(run, rt.driver.wait, 1, 1)[0] / repeat   # one submission of R runs
            total += dt
            key = names.get(row[1], ("?",))
            f = str(key[0])
            off = uniforms[3] + row[7] - uniforms[2] if uniforms else -1   # binding 0: the uniform
            if f == "mmt" and 0 <= off <= len(blob) - 20:   # M, N, K, batch from its parameters
                m, n, k, _, nb = struct.unpack_from("<5I", blob, off)
                v = key[1]
                key = (f"mmt {m}x{n}x{k} b{nb} tile {v.rm}x{v.rn} kt{v.kt} ly{v.ly} warps{v.warps} "
                       f"modes {key[-3]},{key[-2]}",)
            fam[f] = (fam.get(f, (0, 0.0))[0] + 1, fam.get(f, (0, 0.0))[1] + dt)
            k = repr(key)[:160] + f" grid={tuple(row[2:5])}"
            per[k] = (per.get(k, (0, 0.0))[0] + 1, per.get(k, (0, 0.0))[1] + dt)
        else:
            i += 4 if op == C.CREATE else 2
    return total, fam, per


def lm_decode_step(variant, shape="gpt2-124m"):
    """The compiled decode step of a GPT-2 124M-shaped model (bench/lm_generate.py's variant),
    captured by one generate() call, and a zero-argument call that replays it."""
    from lm_generate import SHAPES, torchweb_variant
    from torchweb.models import generate
    from torchweb.models import generation
    kind, cfg = SHAPES[shape]
    model = torchweb_variant(kind, cfg, variant, "webgpu")
    prompt = torchweb.tensor([[(7 * i + 3) % model.config.vocab_size for i in range(32)]], device="webgpu")
    generate(model, prompt, 8, greedy=True)
    step = generation._compiled[model]
    token = torchweb.tensor([[11]], device="webgpu")
    position = torchweb.tensor([40], device="webgpu")
    def call():
        with torchweb.no_grad():    # as generate() runs it: the same capture
            return step(model, token, position)
    return step, call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--browser-gpt", action="store_true")
    ap.add_argument("--mlp", action="store_true")
    ap.add_argument("--lm", metavar="VARIANT", help="the GPT-2 124M decode step (float32, int8-weight, ...)")
    ap.add_argument("--lm-model", default="gpt2-124m", help="bench/lm_generate.py's SHAPES (tiny: a quick check)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--top", type=int, default=25, help="pipelines listed")
    ap.add_argument("--out")
    a = ap.parse_args()
    torchweb.manual_seed(0)
    if a.lm:
        step, call = lm_decode_step(a.lm, a.lm_model)
    else:
        step = call = torchweb.compile(_mlp_step(torchweb, "webgpu", 64) if a.mlp else
                                       _gpt_step(torchweb, "webgpu", a.smoke, BROWSER_GPT if a.browser_gpt else None))
    warm_up(call, torchweb.webgpu.synchronize, calls=5)
    step_s = best_of(call, torchweb.webgpu.synchronize, 1, 5)[0]
    graph = next(e.graph for e in step.cache.values() if e.graph is not None)
    total, fam, per = profile_graph(graph, a.repeat)
    report = {"adapter": torchweb.webgpu.adapter_info(), "replayed_step_s": step_s,
              "sum_of_dispatches_s": total,
              "families": sorted(([k, n, s] for k, (n, s) in fam.items()), key=lambda r: -r[2]),
              "top_pipelines": sorted(([k, n, s] for k, (n, s) in per.items()), key=lambda r: -r[2])[:a.top]}
    print(f"replayed step {step_s * 1e3:.2f} ms; dispatches alone sum to {total * 1e3:.2f} ms")
    for k, n, s in report["families"]:
        print(f"  {k:28s} {n:5d} dispatches {s * 1e3:8.2f} ms")
    print("top pipelines:")
    for k, n, s in report["top_pipelines"]:
        print(f"  {s * 1e3:8.2f} ms {n:4d}x {k}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
