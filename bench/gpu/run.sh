#!/usr/bin/env bash
# The GPU bench, on the GPU machine (bench/gpu/prepare.sh made what it needs): in one lease,
#   1. the native suite (bench/run.py: torchweb through wgpu-native, PyTorch CUDA beside it);
#   2. the browser path: Pyodide + the wheel + runtime.mjs on Dawn in node, with TF.js, jax-js and
#      webgpu-torch on the same navigator.gpu (bench/gpu/dawn.mjs runs bench/browser/page.mjs);
#   3. one results file naming the GPU, driver, Dawn, node and Pyodide (bench/gpu/report.py).
# Files land in $OUT (the device tool's folder) or bench/results/. GPU_BENCH_ONLY=native|browser
# runs one part; GPU_BENCH_PROFILE=smoke (tiny sizes) checks the scaffold; GPU_BENCH_FILTER=S runs
# only the browser workloads whose name contains S (lm_: GPT-2 generation).
# The matmul kernels alone, on Dawn against wgpu-native on the same WGSL and grids (issue 21):
# `bash bench/gpu/matmul.sh` (carry [".gl", ".whl", ".dawn"]; under 3 minutes).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-bench/results}; mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
       VK_ICD_FILENAMES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
profile=${GPU_BENCH_PROFILE:-gpu}; only=${GPU_BENCH_ONLY:-all}
if [ "$only" != browser ]; then
  echo "== native suite"
  python3 bench/run.py $([ "$profile" = smoke ] && echo --smoke) --out "$out/gpu-native.json" 2>&1 | grep -v "^num \|^using\|^number" | tail -20
fi
if [ "$only" != native ]; then
  echo "== browser path (node on Dawn)"
  mkdir -p /tmp/dawn /tmp/pyodide
  xz -dc .dawn/node.xz > /tmp/dawn/node && chmod +x /tmp/dawn/node && tar -xJf .dawn/webgpu.tar.xz -C /tmp/dawn
  tar -xJf bench/gpu/carry/pyodide.tar.xz -C /tmp/pyodide && tar -xJf bench/gpu/carry/peers.tar.xz -C bench/browser
  python3 bench/gpu/browser_build.py --profile "$profile" --pyodide-dir /tmp/pyodide/pyodide
  /tmp/dawn/node --experimental-wasm-jspi bench/gpu/dawn.mjs --dawn /tmp/dawn --out "$out/gpu-browser.json" \
      $([ "$profile" = smoke ] && echo --reps 1 --warm 1) ${GPU_BENCH_FILTER:+--only "$GPU_BENCH_FILTER"}
fi
python3 bench/gpu/report.py "$out"
