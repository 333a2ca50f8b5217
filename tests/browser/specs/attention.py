"""Browser cases of F.scaled_dot_product_attention: ids "attn/...". On webgpu they run the fused
FlashAttention kernels (forward and the dK/dV and dQ backward passes); a float mask in a grad
case needs its own gradient, so those run the composite, as do dropout's identity form and
head dims past 128. Dropout's random draw can't match PyTorch's: p = 0 only."""


def add_specs(R):
    case, rand = R.case, R.rand
    torch = R.torch
    op = "nn.functional.scaled_dot_product_attention"
    tol = R.GRAD_TOL
    B = R.BOOL
    case("attn/basic", op, rand(5, 8), rand(7, 8), rand(7, 6), grad=True, tol=tol)
    case("attn/one", op, rand(1, 4), rand(1, 4), rand(1, 4), grad=True, tol=tol)
    case("attn/batched_off_tiles", op, rand(2, 3, 37, 8), rand(2, 3, 21, 8), rand(2, 3, 21, 5), grad=True, tol=tol)
    case("attn/broadcast_batch", op, rand(3, 1, 9, 16), rand(1, 2, 9, 16), rand(3, 2, 9, 12), grad=True, tol=tol)
    case("attn/head_128", op, rand(1, 11, 128), rand(1, 13, 128), rand(1, 13, 100), grad=True, tol=tol)
    case("attn/head_64", op, rand(2, 17, 64), rand(2, 19, 64), rand(2, 19, 40), grad=True, tol=tol)
    case("attn/head_past_128", op, rand(2, 3, 70), rand(2, 5, 70), rand(2, 5, 130), grad=True, tol=tol)
    case("attn/scale", op, rand(4, 6), rand(9, 6), rand(9, 3), kwargs={"scale": 0.05}, grad=True, tol=tol)
    case("attn/causal", op, rand(2, 9, 16), rand(2, 9, 16), rand(2, 9, 8), kwargs={"is_causal": True},
         grad=True, tol=tol)
    case("attn/causal_L_lt_S", op, rand(2, 5, 16), rand(2, 13, 16), rand(2, 13, 8), kwargs={"is_causal": True},
         grad=True, tol=tol)
    case("attn/causal_L_gt_S", op, rand(2, 13, 16), rand(2, 5, 16), rand(2, 5, 8), kwargs={"is_causal": True},
         grad=True, tol=tol)
    m = rand(2, 1, 10, 12, dtype=B)
    case("attn/bool_mask", op, rand(2, 3, 10, 8), rand(2, 3, 12, 8), rand(2, 3, 12, 4), m, grad=True, tol=tol)
    fm = rand(6, 7, dtype=B)
    fm[2] = False
    case("attn/fully_masked_row", op, rand(2, 6, 8), rand(2, 7, 8), rand(2, 7, 5), fm, grad=True, tol=tol)
    case("attn/float_mask", op, rand(2, 9, 8), rand(2, 11, 8), rand(2, 11, 3), rand(9, 11), tol=tol)
    ninf = rand(9, 11)
    ninf[3] = float("-inf")
    case("attn/float_mask_neg_inf_row", op, rand(2, 9, 8), rand(2, 11, 8), rand(2, 11, 3), ninf, tol=tol)
    case("attn/float_mask_grad", op, rand(2, 9, 8), rand(2, 11, 8), rand(2, 11, 3), rand(2, 1, 11),
         grad=True, tol=tol)
    case("attn/gqa", op, rand(2, 4, 7, 8), rand(2, 2, 9, 8), rand(1, 1, 9, 6), kwargs={"enable_gqa": True},
         grad=True, tol=tol)
    case("attn/gqa_causal", op, rand(1, 4, 9, 8), rand(1, 2, 9, 8), rand(1, 2, 9, 8),
         kwargs={"enable_gqa": True, "is_causal": True}, grad=True, tol=tol)
    case("attn/transposed_q", op, R.Viewed(rand(2, 8, 11), ("transpose", -1, -2)), rand(2, 6, 8), rand(2, 6, 4),
         grad=True, tol=tol)
    case("attn/strided_kv", op, rand(2, 5, 8), R.Viewed(rand(2, 6, 16), ("__getitem__", {"tuple": [{"ellipsis": True}, {"slice": [0, 16, 2]}]})),
         rand(2, 6, 4), grad=True, tol=tol)
    case("attn/empty_S", op, rand(3, 4), rand(0, 4), rand(0, 2), grad=True, tol=tol)
    case("attn/empty_L", op, rand(0, 4), rand(3, 4), rand(3, 2), tol=tol)
    case("attn/E_zero", op, rand(3, 0), rand(5, 0), rand(5, 2), grad=True, tol=tol)
    case("attn/dropout_p0", op, rand(3, 5, 4), rand(3, 6, 4), rand(3, 6, 2), kwargs={"dropout_p": 0.0},
         grad=True, tol=tol)
    case("attn/bad_E", op, rand(2, 4), rand(3, 5), rand(3, 2), raises="RuntimeError")
    case("attn/bad_mask", op, rand(2, 4), rand(3, 4), rand(3, 2), torch.ones(3, 3, dtype=B), raises="RuntimeError")
    case("attn/bad_causal_and_mask", op, rand(2, 4), rand(3, 4), rand(3, 2), torch.ones(2, 3, dtype=B),
         kwargs={"is_causal": True}, raises="RuntimeError")
    case("attn/bad_gqa_heads", op, rand(1, 4, 2, 4), rand(1, 3, 3, 4), rand(1, 3, 3, 2),
         kwargs={"enable_gqa": True}, raises="RuntimeError")
    case("attn/bad_gqa_2d", op, rand(3, 4), rand(5, 4), rand(5, 2), kwargs={"enable_gqa": True}, raises="IndexError")
    case("attn/bad_mask_dtype", op, rand(2, 4), rand(3, 4), rand(3, 2), torch.ones(2, 3, dtype=R.I64),
         raises="RuntimeError")
    case("attn/bad_dropout", op, rand(2, 4), rand(3, 4), rand(3, 2), kwargs={"dropout_p": 1.5}, raises="RuntimeError")
