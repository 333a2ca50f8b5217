"""The shapes bench/matmul_variants.py times its matmul kernel variants on, and derived variant
names; shared with bench/matmul_variants_export.py, which needs no torch."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from torchweb.backends.webgpu.kernels import matmul_tiles as T  # noqa: E402

# (label, batch, M, K, N, A transposed view?, B transposed view?, dtype)
# Attention (B=16 x 6 heads, T=256, head 64): S = Q K^T, O = P V; backward dP = dO V^T,
# dV = P^T dO, dQ = dS K, dK = dS^T Q. Linear 4096x384 -> 1536 (x W^T) and its backward.
FULL = [
    ("mm4096", 1, 4096, 4096, 4096, False, False, "f32"),
    ("mm2048", 1, 2048, 2048, 2048, False, False, "f32"),
    ("mm1024", 1, 1024, 1024, 1024, False, False, "f32"),
    ("mm512", 1, 512, 512, 512, False, False, "f32"),
    ("bmm96_256x64x256", 96, 256, 64, 256, False, False, "f32"),
    ("bmm96_256x64x256_Bt", 96, 256, 64, 256, False, True, "f32"),      # Q K^T, dO V^T
    ("bmm96_256x256x64", 96, 256, 256, 64, False, False, "f32"),        # P V, dS K
    ("bmm96_256x256x64_At", 96, 256, 256, 64, True, False, "f32"),      # P^T dO, dS^T Q
    ("bmm96_64x256x256", 96, 64, 256, 256, False, False, "f32"),
    ("linear4096_384to1536", 1, 4096, 384, 1536, False, True, "f32"),   # x W^T
    ("linear4096_1536to384", 1, 4096, 1536, 384, False, True, "f32"),
    ("linear_dx_4096_1536to384", 1, 4096, 1536, 384, False, False, "f32"),  # g W
    ("linear_dW_1536x4096x384", 1, 1536, 4096, 384, True, False, "f32"),  # g^T x (long K)
    # nanoGPT's step (B16 T256 C384): attention's and the MLP's projections, forward and backward
    ("gpt_proj_4096x384x384", 1, 4096, 384, 384, False, True, "f32"),        # x W^T, c_proj
    ("gpt_qkv_4096x384x1152", 1, 4096, 384, 1152, False, True, "f32"),       # c_attn
    ("gpt_dx_qkv_4096x1152x384", 1, 4096, 1152, 384, False, False, "f32"),   # g W
    ("gpt_dW_qkv_1152x4096x384", 1, 1152, 4096, 384, True, False, "f32"),    # g^T x
    ("gpt_dW_proj_384x4096x384", 1, 384, 4096, 384, True, False, "f32"),
    ("gpt_dW_mlpproj_384x4096x1536", 1, 384, 4096, 1536, True, False, "f32"),  # MLP c_proj
    ("gpt_lmhead_4096x384x65", 1, 4096, 384, 65, False, True, "f32"),
    ("mm4096_f16", 1, 4096, 4096, 4096, False, False, "f16"),
    ("mm1024_f16", 1, 1024, 1024, 1024, False, False, "f16"),
    ("bmm96_256x64x256_Bt_f16", 96, 256, 64, 256, False, True, "f16"),
]
QUICK = [
    ("mm256", 1, 256, 256, 256, False, False, "f32"),
    ("mm130x200x70", 1, 130, 200, 70, False, False, "f32"),
    ("bmm4_64x32x64_Bt", 4, 64, 32, 64, False, True, "f32"),
    ("bmm4_64x64x32_At", 4, 64, 64, 32, True, False, "f32"),
    ("linear256_96to64", 1, 256, 96, 64, False, True, "f32"),
    ("linear_dW_64x1024x96", 1, 64, 1024, 96, True, False, "f32"),
    ("mm128_f16", 1, 128, 128, 128, False, False, "f16"),
]


def derived(name):
    """name, registering "BASE@sNfM" (BASE with split=N, fill=M) in matmul_tiles.VARIANTS, and
    "wRMxRN_kKT_lLY_WMxWN_pPAD" (a warp-tiled candidate not in the table: rm x rn outputs a
    lane, K step KT, lanes LY x 32/LY, warps WM x WN, pad; BASE@... works on it too)."""
    base = name.split("@")[0]
    if base not in T.VARIANTS and base.startswith("w") and "_l" in base:
        rmn, kt, ly, wmn, pad = base[1:].split("_")
        rm, rn = map(int, rmn.split("x"))
        wm, wn = map(int, wmn.split("x"))
        T.VARIANTS[base] = T._warp(base, rm, rn, int(kt[1:]), int(ly[1:]), (wm, wn), pad=int(pad[1:]))
    if "@" not in name:
        return name
    base, opts = name.split("@")
    split, _, fill = opts.lstrip("s").partition("f")
    v = T.VARIANTS[base]
    T.VARIANTS[name] = v._replace(name=name, split=int(split) if split else v.split,
                                  fill=int(fill) if fill else v.fill)
    return name
