#!/usr/bin/env bash
# What the GPU bench carries to the GPU machine, made here (run from the project's root):
#   .gl/ and .whl/   the Vulkan loader and wgpu-py for the native suite (../shared/device/prepare.sh)
#   .dawn/           node 24 and Dawn's node bindings (../shared/device/prepare_dawn.sh)
#   bench/gpu/carry/ Pyodide's core and the peers' browser builds (TF.js, its WebGPU backend,
#                    webgpu-torch, jax-js), xz-packed: bench/browser/node_modules is 300 MB
# Then: the `run` tool (device) with carry [".gl", ".whl", ".dawn", "bench/gpu/carry"] and the
# command `bash bench/gpu/run.sh` (it prints what it measured and leaves the files in $OUT).
set -euo pipefail
root=$(git rev-parse --show-toplevel); cd "$root"
bash ../shared/device/prepare.sh >/dev/null
bash ../shared/device/prepare_dawn.sh >/dev/null
[ -d bench/browser/node_modules/@jax-js ] || npm install --no-audit --no-fund --prefix bench/browser >/dev/null
[ -f node_modules/pyodide/pyodide.mjs ] || npm install --no-audit --no-fund pyodide@314.0.7 >/dev/null
ex=$(git rev-parse --git-path info/exclude)
grep -qxF /bench/gpu/carry/ "$ex" 2>/dev/null || echo /bench/gpu/carry/ >> "$ex"
mkdir -p bench/gpu/carry
tar -C node_modules -cJf bench/gpu/carry/pyodide.tar.xz pyodide/pyodide.mjs pyodide/pyodide.asm.mjs \
    pyodide/pyodide.asm.wasm pyodide/python_stdlib.zip pyodide/pyodide-lock.json pyodide/pyodide.js pyodide/package.json
tar -C bench/browser -cJf bench/gpu/carry/peers.tar.xz node_modules/@tensorflow/tfjs/dist/tf.min.js \
    node_modules/@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js node_modules/webgpu-torch/torch.js \
    node_modules/@jax-js/jax/dist node_modules/@jax-js/jax/package.json node_modules/@tensorflow/tfjs/package.json \
    node_modules/@tensorflow/tfjs-backend-webgpu/package.json node_modules/webgpu-torch/package.json
du -ch .gl .whl .dawn bench/gpu/carry | tail -1
