"""Browser cases of F.multi_head_attention_forward (ids "nn_seq/..."), the function behind
nn.MultiheadAttention: packed and separate projections, the explicit path returning weights
(averaged or per head), bool and float masks,
bias_k/bias_v and zero attention, unbatched inputs, gradients of every tensor. The modules
(TransformerEncoderLayer, LSTM, GRU with a PackedSequence) run in tests/browser/scripts/nn_seq.py,
where the layers' need_weights=False attention takes the scaled_dot_product_attention path (a
case cannot record the None weights that path returns)."""


def add_specs(R):
    case, rand = R.case, R.rand
    torch = R.torch
    tol = R.GRAD_TOL
    op = "nn.functional.multi_head_attention_forward"
    E, H = 8, 2

    def packed(q, k, v, **kw):
        return (q, k, v, E, H, rand(3 * E, E, lo=-0.5, hi=0.5), rand(3 * E, lo=-0.1, hi=0.1),
                kw.pop("bias_k", None), kw.pop("bias_v", None), kw.pop("zero_attn", False), 0.0,
                rand(E, E, lo=-0.5, hi=0.5), rand(E, lo=-0.1, hi=0.1))

    case("nn_seq/mha_weights", op, *packed(rand(4, 2, E), rand(6, 2, E), rand(6, 2, E)), grad=True, tol=tol)
    case("nn_seq/mha_weights_per_head", op, *packed(rand(4, 2, E), rand(6, 2, E), rand(6, 2, E)),
         kwargs={"average_attn_weights": False}, grad=True, tol=tol)
    kpm = torch.tensor([[False, False, True, False, True, False], [False] * 6])
    am = torch.tensor([[False, True, False, False, False, False]] * 4)
    case("nn_seq/mha_bool_masks", op, *packed(rand(4, 2, E), rand(6, 2, E), rand(6, 2, E)),
         kwargs={"key_padding_mask": kpm, "attn_mask": am}, grad=True, tol=tol)
    case("nn_seq/mha_float_mask_3d", op, *packed(rand(4, 2, E), rand(6, 2, E), rand(6, 2, E)),
         kwargs={"attn_mask": rand(2 * H, 4, 6)}, grad=True, tol=tol)
    case("nn_seq/mha_bias_kv_zero_attn", op,
         *packed(rand(3, 2, E), rand(5, 2, E), rand(5, 2, E), bias_k=rand(1, 1, E), bias_v=rand(1, 1, E),
                 zero_attn=True), kwargs={"key_padding_mask": kpm[:, :5]}, grad=True, tol=tol)
    case("nn_seq/mha_unbatched", op, *packed(rand(4, E), rand(6, E), rand(6, E)), grad=True, tol=tol)
    sep = (rand(4, 2, E), rand(6, 2, 5), rand(6, 2, 3), E, H, None, rand(3 * E, lo=-0.1, hi=0.1), None, None,
           False, 0.0, rand(E, E, lo=-0.5, hi=0.5), rand(E, lo=-0.1, hi=0.1))
    case("nn_seq/mha_separate_proj", op, *sep,
         kwargs={"use_separate_proj_weight": True, "q_proj_weight": rand(E, E, lo=-0.5, hi=0.5),
                 "k_proj_weight": rand(E, 5, lo=-0.5, hi=0.5), "v_proj_weight": rand(E, 3, lo=-0.5, hi=0.5)},
         grad=True, tol=tol)
    case("nn_seq/mha_bad_embed", op, *packed(rand(4, 2, E + 1), rand(6, 2, E + 1), rand(6, 2, E + 1)),
         raises="AssertionError")
    case("nn_seq/mha_bad_mask_shape", op, *packed(rand(4, 2, E), rand(6, 2, E), rand(6, 2, E)),
         kwargs={"attn_mask": rand(5, 6)}, raises="RuntimeError")
