#!/usr/bin/env bash
# Issue 21 item 5: are torchweb's matmul kernels slower on Dawn (Tint, with its robustness clamps:
# the browser path) than through wgpu-native (naga)? On the GPU machine, in one lease, on the
# same WGSL, bindings, parameters and grids:
#   1. bench/matmul_variants_export.py writes bench/matmul_variants.py's (variant, shape) cases
#      as torchweb's runtime issues them on this adapter;
#   2. bench/matmul_variants_replay.py runs them through wgpu-py (native);
#   3. bench/gpu/dawn_matmul.mjs through Dawn in node (npm `webgpu`, no Pyodide), then again with
#      Tint's robustness off (enable-dawn-features=disable_robustness);
#   4. bench/matmul_variants_compare.py prints them side by side (time over native's).
# Each result is checked against numpy before it is timed. The device tool: carry
# [".gl", ".whl", ".dawn"] and the command `bash bench/gpu/matmul.sh` (about 2-3 minutes); files in
# $OUT (mm-export.json, mm-native.json, mm-dawn.json, mm-dawn-norobust.json, mm-compare.json).
# Locally (Dawn finds no lavapipe adapter; SwiftShader works):
#   VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json MATMUL_DAWN=/tmp/dawn bash bench/gpu/matmul.sh --quick
# Arguments go to the export (--quick, --shapes, --variants, --names, --dtype; without --variants
# or --names: the TABLE's picks, the warp kernels and the 16 KiB fallback, on every shape:
# --variants table,w1,w6,t64x64_k16_db); MATMUL_TIMING (default
# "--reps 3 --budget 0.01") to both runners; MATMUL_ROBUST=0 skips the run without robustness.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); cd "$root"
out=${OUT:-bench/results}; mkdir -p "$out"
dawn=${MATMUL_DAWN:-/tmp/dawn}
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$icd" ] && [ -d .gl ]; then   # the GPU machine (bench/gpu/prepare.sh's files)
  for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
fi
if [ ! -x "$dawn/node" ]; then
  mkdir -p "$dawn" && xz -dc .dawn/node.xz > "$dawn/node" && chmod +x "$dawn/node" && tar -xJf .dawn/webgpu.tar.xz -C "$dawn"
fi
export XDG_RUNTIME_DIR=/tmp PYTHONUNBUFFERED=1
py=${MATMUL_PYTHON:-python3}
timing=${MATMUL_TIMING:---reps 3 --budget 0.01}
# Dawn's NVIDIA policy hides shader-f16 (as Chrome's does): turned on, so that the f16 cases run
# the same WGSL as natively
features=${MATMUL_DAWN_FEATURES:-vulkan_enable_f16_on_nvidia}
case " $* " in *" --variants "*|*" --names "*) ;; *) set -- "$@" --variants table,w1,w6,t64x64_k16_db ;; esac
echo "== export $*"
timeout 40 $py bench/matmul_variants_export.py --out "$out/mm-export.json" "$@" || exit 1
echo "== native (wgpu-py)"
timeout 50 $py bench/matmul_variants_replay.py "$out/mm-export.json" --out "$out/mm-native.json" $timing
echo "== Dawn"
timeout 50 "$dawn/node" bench/gpu/dawn_matmul.mjs "$out/mm-export.json" --dawn "$dawn" --out "$out/mm-dawn.json" \
    --flags "enable-dawn-features=$features" $timing
if [ "${MATMUL_ROBUST:-1}" != 0 ]; then
  echo "== Dawn, robustness off"
  timeout 30 "$dawn/node" bench/gpu/dawn_matmul.mjs "$out/mm-export.json" --dawn "$dawn" --out "$out/mm-dawn-norobust.json" \
      --flags "enable-dawn-features=$features,disable_robustness" $timing
fi
echo "== compare"
$py bench/matmul_variants_compare.py "$out/mm-native.json" "$out/mm-dawn.json" "$out/mm-dawn-norobust.json" --out "$out/mm-compare.json"
