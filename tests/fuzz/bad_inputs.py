"""The bad-input catalog: mistakes a user makes with the API, each a function fn(m, x) run with
m = torch and m = torchweb (x: a float tensor of the case's shape on the device under test, made
from the same values). tests/test_bad_inputs.py checks that both raise the same exception type,
that torchweb's message names what is wrong, and that the device still works after.

A case is Case(name, fn, shape, key, cpu_only):
    key       words that both messages must contain (a str, or a tuple of them); None: checked
              by the rule in test_bad_inputs.py (PyTorch's numbers and a word of its message)
    cpu_only  the case needs no device (module bookkeeping, loader misuse): run once
Results that are tensors are read back (.tolist()), so errors that only the GPU sees (an index
out of range in a kernel) are raised at that readback, as torchweb documents.
"""

import io
import math


class Case:
    __slots__ = ("name", "fn", "shape", "key", "cpu_only")

    def __init__(self, name, fn, shape=(2, 3), key=None, cpu_only=False):
        self.name, self.fn, self.shape, self.key, self.cpu_only = name, fn, shape, key, cpu_only


CASES = []


def case(name, fn, shape=(2, 3), key=None, cpu_only=False):
    CASES.append(Case(name, fn, shape, key, cpu_only))


# -- shapes: broadcasting ---------------------------------------------------------------------------
BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: m.sub(a, b), "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: m.div(a, b), "pow": lambda m, a, b: m.pow(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b), "minimum": lambda m, a, b: m.minimum(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b), "eq": lambda m, a, b: a == b, "lt": lambda m, a, b: a < b,
    "ge": lambda m, a, b: m.ge(a, b), "fmod": lambda m, a, b: m.fmod(a, b),
    "remainder": lambda m, a, b: m.remainder(a, b), "hypot": lambda m, a, b: m.hypot(a, b),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b), "copysign": lambda m, a, b: m.copysign(a, b),
    "where": lambda m, a, b: m.where(a > 0, a, b), "floor_divide": lambda m, a, b: m.floor_divide(a, b),
    "xlogy": lambda m, a, b: m.xlogy(a, b),
}
PAIRS = [((2, 3), (4,)), ((5, 1, 4), (2, 3, 1)), ((3,), (2,))]
for _op, _f in BINARY.items():
    for _a, _b in PAIRS:
        case(f"broadcast_{_op}_{_a}_{_b}".replace(" ", ""),
             lambda m, x, f=_f, b=_b: f(m, x, m.ones(b)), _a, "must match the size")
for _op in ("add_", "mul_", "sub_", "div_", "copy_"):
    case(f"broadcast_inplace_{_op}", lambda m, x, op=_op: getattr(x, op)(m.ones(4, 3)),
         key=None if _op == "copy_" else "must match the size")
case("inplace_result_larger", lambda m, x: x.add_(m.ones(2, 2, 3)), key="doesn't match the broadcast shape")

# -- shapes: dims out of range ----------------------------------------------------------------------
DIM_OPS = {
    "sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "prod": lambda x, d: x.prod(d),
    "amax": lambda x, d: x.amax(d), "amin": lambda x, d: x.amin(d), "argmax": lambda x, d: x.argmax(d),
    "argmin": lambda x, d: x.argmin(d), "max": lambda x, d: x.max(d), "min": lambda x, d: x.min(d),
    "std": lambda x, d: x.std(d), "var": lambda x, d: x.var(d), "logsumexp": lambda x, d: x.logsumexp(d),
    "cumsum": lambda x, d: x.cumsum(d), "cumprod": lambda x, d: x.cumprod(d),
    "softmax": lambda x, d: x.softmax(d), "log_softmax": lambda x, d: x.log_softmax(d),
    "flip": lambda x, d: x.flip(d), "squeeze": lambda x, d: x.squeeze(d),
    "unsqueeze": lambda x, d: x.unsqueeze(d + 1 if d > 0 else d - 1), "transpose": lambda x, d: x.transpose(0, d),
    "select": lambda x, d: x.select(d, 0), "narrow": lambda x, d: x.narrow(d, 0, 1),
    "roll": lambda x, d: x.roll(1, d), "sort": lambda x, d: x.sort(d), "topk": lambda x, d: x.topk(1, d),
    "norm": lambda x, d: x.norm(dim=d), "all": lambda x, d: x.all(d), "any": lambda x, d: x.any(d),
    "median": lambda x, d: x.median(d), "count_nonzero": lambda x, d: x.count_nonzero(d),
    "nansum": lambda x, d: x.nansum(d), "diff": lambda x, d: x.diff(dim=d), "cummax": lambda x, d: x.cummax(d),
    "unbind": lambda x, d: x.unbind(d), "chunk": lambda x, d: x.chunk(2, d), "split": lambda x, d: x.split(1, d),
    "movedim": lambda x, d: x.movedim(0, d), "argsort": lambda x, d: x.argsort(d),
    "flatten": lambda x, d: x.flatten(0, d),
}
for _op, _f in DIM_OPS.items():
    for _d in (3, -4):
        case(f"dim_{_op}_{_d}", lambda m, x, f=_f, d=_d: f(x, d), key="out of range")
case("dim_cat_3", lambda m, x: m.cat([x, x], 3), key="out of range")
case("dim_stack_4", lambda m, x: m.stack([x, x], 4), key="out of range")
case("dim_gather_3", lambda m, x: x.gather(3, m.zeros(2, 3, dtype=m.int64)), key="out of range")
case("dim_index_select_2", lambda m, x: x.index_select(2, m.zeros(1, dtype=m.int64)), key="out of range")
case("dim_permute_5", lambda m, x: x.permute(0, 5), key="out of range")
case("dim_softmax_fn", lambda m, x: m.nn.functional.softmax(x, dim=2), key="out of range")
case("dim_cross_entropy_0d", lambda m, x: m.nn.functional.log_softmax(x.sum(), 1), key="out of range")

# -- indices ----------------------------------------------------------------------------------------
INDEXING = {
    "int_past_end": lambda m, x: x[2], "int_before_start": lambda m, x: x[-3], "second_dim": lambda m, x: x[0, 3],
    "second_dim_neg": lambda m, x: x[:, -4], "too_many": lambda m, x: x[0, 0, 0],
    "ellipsis_too_many": lambda m, x: x[..., 0, 0, 0], "select_past": lambda m, x: x.select(1, 3),
    "narrow_past": lambda m, x: x.narrow(1, 2, 2), "narrow_start": lambda m, x: x.narrow(0, 3, 1),
    "setitem_past": lambda m, x: x.__setitem__(5, 1.0), "setitem_second": lambda m, x: x.__setitem__((0, 9), 1.0),
    "float_index": lambda m, x: x[m.tensor([0.5])], "string_index": lambda m, x: x["a"], "mask_shape": lambda m, x: x[m.tensor([True, False, True])],
    "long_tensor_past": lambda m, x: x[m.tensor([0, 5])],
    "long_tensor_neg_past": lambda m, x: x[m.tensor([-3])],
    "index_select_past": lambda m, x: x.index_select(0, m.tensor([2])),
    "index_select_float": lambda m, x: x.index_select(0, m.tensor([0.0])),
    "index_select_2d": lambda m, x: x.index_select(0, m.tensor([[0]])),
    "gather_past": lambda m, x: x.gather(1, m.tensor([[0, 3], [1, 1]])),
    "gather_float_index": lambda m, x: x.gather(1, m.tensor([[0.0]])),
    "gather_rank": lambda m, x: x.gather(1, m.tensor([0])),
    "scatter_past": lambda m, x: x.clone().scatter_(1, m.tensor([[4]]), 1.0),
    "scatter_add_float_index": lambda m, x: x.clone().scatter_add_(1, m.tensor([[0.0]]), x),
    "take_past": lambda m, x: x.take(m.tensor([6])),
    "index_add_past": lambda m, x: x.clone().index_add_(0, m.tensor([3]), m.ones(1, 3)),
    "index_fill_past": lambda m, x: x.clone().index_fill_(1, m.tensor([7]), 0.0),
    "index_put_past": lambda m, x: x.clone().index_put_((m.tensor([9]),), m.tensor(1.0)),
    "masked_fill_shape": lambda m, x: x.masked_fill(m.ones(3, 2, dtype=m.bool), 0.0),
    "masked_fill_float_mask": lambda m, x: x.masked_fill(x, 0.0),
    "masked_select_shape": lambda m, x: x.masked_select(m.ones(4, dtype=m.bool)),
    "embedding_past": lambda m, x: m.nn.functional.embedding(m.tensor([0, 4]), m.ones(3, 2)),
    "embedding_float_ids": lambda m, x: m.nn.functional.embedding(m.tensor([0.0]), m.ones(3, 2)),
    "one_hot_past": lambda m, x: m.nn.functional.one_hot(m.tensor([0, 5]), 3),
    "one_hot_float": lambda m, x: m.nn.functional.one_hot(m.tensor([0.0]), 3),
    "bincount_negative": lambda m, x: m.bincount(m.tensor([1, -1])),
    "bincount_float": lambda m, x: m.bincount(m.tensor([1.0])),
    "unique_dim_past": lambda m, x: m.unique(x, dim=2),
    "tensor_split_float": lambda m, x: x.tensor_split(m.tensor([1.0])),
    "nll_target_past": lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 3])),
    "cross_entropy_target_past": lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 7])),
    "cross_entropy_target_neg": lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([-5, 0])),
}
for _n, _f in INDEXING.items():
    case("index_" + _n, _f)

# -- dtypes -----------------------------------------------------------------------------------------
DTYPES = {
    "and_float": lambda m, x: x & x, "or_float": lambda m, x: x | x, "xor_float": lambda m, x: x ^ x,
    "invert_float": lambda m, x: ~x, "lshift_float": lambda m, x: x << 1, "rshift_float": lambda m, x: x >> 1,
    "bitwise_not_float": lambda m, x: m.bitwise_not(x), "gcd_float": lambda m, x: m.gcd(x, x),
    "mean_int": lambda m, x: x.long().mean(), "var_int": lambda m, x: x.long().var(),
    "std_int": lambda m, x: x.int().std(), "softmax_int": lambda m, x: x.long().softmax(0),
    "log_softmax_int": lambda m, x: x.long().log_softmax(0), "gelu_int": lambda m, x: m.nn.functional.gelu(x.long()),
    "silu_int": lambda m, x: m.nn.functional.silu(x.long()),
    "layer_norm_int": lambda m, x: m.nn.functional.layer_norm(x.long(), (3,)),
    "requires_grad_int": lambda m, x: x.long().requires_grad_(),
    "requires_grad_bool": lambda m, x: (x > 0).requires_grad_(),
    "iadd_float_to_int": lambda m, x: x.long().add_(1.5), "imul_float_to_bool": lambda m, x: (x > 0).mul_(2.5),
    "iadd_float_tensor_to_int": lambda m, x: x.int().add_(x), "idiv_int": lambda m, x: x.long().div_(2),
    "sub_bool": lambda m, x: (x > 0) - (x > 1), "neg_bool": lambda m, x: -(x > 0),
    "rsub_bool": lambda m, x: m.rsub(x > 0, x > 1),
    "where_cond_float": lambda m, x: m.where(x, x, x), "where_cond_long": lambda m, x: m.where(x.long(), x, x),
    "mm_mixed": lambda m, x: m.mm(x, x.t().long()), "matmul_mixed": lambda m, x: x @ x.t().int(),
    "bmm_mixed": lambda m, x: m.bmm(x[None], x.t()[None].long()), "dot_mixed": lambda m, x: m.dot(x[0], x[0].long()),
    "linear_mixed": lambda m, x: m.nn.functional.linear(x, m.ones(4, 3, dtype=m.int64)),
    "conv_mixed": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(1, 2, 1, dtype=m.int64)),  # key below
    "argmax_bool": lambda m, x: (x > 0).argmax(), "cumsum_bad_dtype": lambda m, x: x.cumsum(0, dtype="x"),
    "int_neg_pow": lambda m, x: x.long() ** -1, "int_neg_pow_tensor": lambda m, x: m.pow(x.long(), -2),
    "alpha_float_int": lambda m, x: m.add(x.long(), x.long(), alpha=0.5),
    "full_uint8_overflow": lambda m, x: m.full((2,), 300, dtype=m.uint8),
    "fill_int32_overflow": lambda m, x: x.int().fill_(2 ** 40),
    "tensor_int64_overflow": lambda m, x: m.tensor([2 ** 64]),
    "div_floor_bool": lambda m, x: m.div(x > 0, x > 0, rounding_mode="floor").tolist(),
    "cross_entropy_target_float_shape": lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([1.0, 0.0])),
    "nll_float_target": lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0.0, 1.0])),
    "bce_target_int": lambda m, x: m.nn.functional.binary_cross_entropy(x.sigmoid(), x.long()),
    "bce_logits_shape": lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x, m.ones(3, 2)),
    "erfinv_bool_inplace": lambda m, x: (x > 0).erfinv_(), "sqrt_int_inplace": lambda m, x: x.long().sqrt_(),
    "ceil_bool": lambda m, x: (x > 0).ceil(), "floor_divide_bool": lambda m, x: (x > 0) // (x > 0),
    "lerp_int": lambda m, x: m.lerp(x.long(), x.long(), 0.5),
    "randint_int32_high": lambda m, x: m.randint(0, 2 ** 40, (2,), dtype=m.int32),
    "not_a_dtype": lambda m, x: m.ones(2, dtype=5),
    "to_not_a_dtype": lambda m, x: x.to("int33"),
    "zeros_dtype_string": lambda m, x: m.zeros(2, dtype="float32"),
}
for _n, _f in DTYPES.items():
    case("dtype_" + _n, _f)

# -- shapes: views, joins, linear algebra ---------------------------------------------------------
SHAPES = {
    "view_bad": lambda m, x: x.view(7), "view_noncontig": lambda m, x: x.t().view(6),
    "view_two_minus1": lambda m, x: x.view(-1, -1), "reshape_bad": lambda m, x: x.reshape(4, 2),
    "reshape_minus1_bad": lambda m, x: x.reshape(-1, 4), "reshape_neg": lambda m, x: x.reshape(-2, 3),
    "expand_bad": lambda m, x: x.expand(4, 3), "expand_fewer": lambda m, x: x.expand(3),
    "expand_neg": lambda m, x: x.expand(-2, 3), "expand_as_bad": lambda m, x: x.expand_as(m.ones(3, 3)),
    "repeat_fewer": lambda m, x: x.repeat(2), "repeat_neg": lambda m, x: x.repeat(-1, 1),
    "permute_count": lambda m, x: x.permute(0), "permute_dup": lambda m, x: x.permute(1, 1),
    "unflatten_bad": lambda m, x: x.unflatten(1, (2, 2)), "flatten_order": lambda m, x: x.flatten(1, 0),
    "squeeze_tuple_bad": lambda m, x: x.squeeze((0, 5)), "t_3d": lambda m, x: x[None].t(),
    "cat_mismatch": lambda m, x: m.cat([x, x.t()]), "cat_empty": lambda m, x: m.cat([]),
    "cat_rank": lambda m, x: m.cat([x, x[0]]), "cat_not_tensor": lambda m, x: m.cat([x, 1]),
    "stack_mismatch": lambda m, x: m.stack([x, x[:1]]), "stack_empty": lambda m, x: m.stack([]),
    "hstack_rank": lambda m, x: m.hstack([x, x[None]]), "split_sizes": lambda m, x: x.split([1, 2]),
    "split_sizes_neg": lambda m, x: x.split([3, -1]), "chunk_zero": lambda m, x: x.chunk(0),
    "tensor_split_zero": lambda m, x: x.tensor_split(0), "unfold_big": lambda m, x: x.unfold(1, 5, 1),
    "unfold_step0": lambda m, x: x.unfold(1, 2, 0),
    "mm_inner": lambda m, x: m.mm(x, x), "mm_1d": lambda m, x: m.mm(x[0], x), "bmm_2d": lambda m, x: m.bmm(x, x),
    "bmm_batch": lambda m, x: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)),
    "matmul_0d": lambda m, x: m.matmul(x.sum(), x), "matmul_1d": lambda m, x: m.matmul(x[0], x[1, :2]),
    "matmul_batch": lambda m, x: m.matmul(m.ones(2, 2, 3), m.ones(3, 3, 4)),
    "dot_size": lambda m, x: m.dot(x[0], x[0, :2]), "dot_2d": lambda m, x: m.dot(x, x),
    "mv_size": lambda m, x: m.mv(x, x[:, 0]), "outer_2d": lambda m, x: m.outer(x, x[0]),
    "addmm_shape": lambda m, x: m.addmm(m.ones(2, 2), x, m.ones(3, 4)),
    "baddbmm_shape": lambda m, x: m.baddbmm(m.ones(1, 2, 2), x[None], m.ones(1, 2, 2)),
    "einsum_operands": lambda m, x: m.einsum("ij,jk->ik", x), "einsum_size": lambda m, x: m.einsum("ij,ij->i", x, x.t()),
    "einsum_bad_letter": lambda m, x: m.einsum("i1->i", x), "tensordot_size": lambda m, x: m.tensordot(x, x, dims=([0], [1])),
    "cross_size": lambda m, x: m.linalg.cross(x[:, :2], x[:, :2]), "kron_none": lambda m, x: m.kron(x, None),
    "diag_3d": lambda m, x: m.diag(x[None]), "trace_1d": lambda m, x: m.trace(x[0]),
    "triu_1d": lambda m, x: m.triu(x[0]), "inverse_nonsquare": lambda m, x: m.linalg.inv(x),
    "det_nonsquare": lambda m, x: m.linalg.det(x), "cholesky_nonsquare": lambda m, x: m.linalg.cholesky(x),
    "solve_shape": lambda m, x: m.linalg.solve(m.eye(3), m.ones(2, 2)),
    "where_shapes": lambda m, x: m.where(m.ones(4, 1, dtype=m.bool), x, x),
    "lerp_shape": lambda m, x: m.lerp(x, m.ones(4, 3), 0.5), "clamp_shape": lambda m, x: x.clamp(m.ones(4), None),
    "masked_scatter_source": lambda m, x: x.masked_scatter(x > -100, m.ones(2)),
    "copy_shape": lambda m, x: x.clone().copy_(m.ones(3, 2)),
    "set_slice_shape": lambda m, x: x.clone().__setitem__(slice(0, 2), m.ones(4)),
    "resize_as_view": lambda m, x: x.view_as(m.ones(4)),
    "cdist_size": lambda m, x: m.cdist(x, m.ones(2, 4)), "cosine_size": lambda m, x: m.nn.functional.cosine_similarity(x, m.ones(2, 4)),
}
for _n, _f in SHAPES.items():
    case("shape_" + _n, _f)

# -- arguments --------------------------------------------------------------------------------------
ARGS = {
    "zeros_neg": lambda m, x: m.zeros(2, -1), "ones_float_size": lambda m, x: m.ones(2.5),
    "empty_neg": lambda m, x: m.empty(-3), "full_no_value": lambda m, x: m.full((2,)),
    "arange_step0": lambda m, x: m.arange(0, 5, 0), "arange_wrong_sign": lambda m, x: m.arange(0, 5, -1),
    "arange_nan": lambda m, x: m.arange(0, math.nan), "linspace_neg": lambda m, x: m.linspace(0, 1, -2),
    "eye_neg": lambda m, x: m.eye(-1), "randint_empty_range": lambda m, x: m.randint(5, 5, (2,)),
    "randint_no_size": lambda m, x: m.randint(5), "randn_neg": lambda m, x: m.randn(-2),
    "randperm_neg": lambda m, x: m.randperm(-1), "normal_neg_std": lambda m, x: m.normal(0.0, -1.0, (2,)),
    "uniform_bad_range": lambda m, x: x.clone().uniform_(2, 1),
    "bernoulli_p": lambda m, x: m.bernoulli(m.full((2,), 1.5)).tolist(),
    "multinomial_neg": lambda m, x: m.multinomial(m.tensor([0.5, -1.0]), 1).tolist(),
    "multinomial_zero_sum": lambda m, x: m.multinomial(m.zeros(3), 1).tolist(),
    "multinomial_too_many": lambda m, x: m.multinomial(m.ones(3), 5),
    "clamp_none": lambda m, x: x.clamp(), "div_rounding": lambda m, x: m.div(x, x, rounding_mode="round"),
    "topk_k": lambda m, x: x.topk(5), "topk_neg": lambda m, x: x.topk(-1),
    "kthvalue_k": lambda m, x: x.kthvalue(7), "kthvalue_zero": lambda m, x: x.kthvalue(0),
    "dropout_p": lambda m, x: m.nn.functional.dropout(x, 1.5), "dropout_neg": lambda m, x: m.nn.functional.dropout(x, -0.1),
    "one_hot_classes": lambda m, x: m.nn.functional.one_hot(m.tensor([3]), 2),
    "repeat_interleave_neg": lambda m, x: x.repeat_interleave(-1),
    "histc_bins": lambda m, x: m.histc(x, bins=-1), "quantile_q": lambda m, x: m.quantile(x, 1.5),
    "quantile_int": lambda m, x: m.quantile(x.long(), 0.5), "item_many": lambda m, x: x.item(),
    "bool_many": lambda m, x: bool(x), "int_many": lambda m, x: int(x), "float_many": lambda m, x: float(x),
    "len_0d": lambda m, x: len(x.sum()), "iter_0d": lambda m, x: list(x.sum()),
    "max_empty": lambda m, x: x[:0].max(), "argmax_empty": lambda m, x: x[:0].argmax(),
    "min_empty_dim": lambda m, x: x[:, :0].min(1), "logsumexp_no_dim": lambda m, x: m.logsumexp(x),
    "pad_too_many": lambda m, x: m.nn.functional.pad(x, (1, 1, 1, 1, 1, 1)),
    "pad_odd": lambda m, x: m.nn.functional.pad(x, (1,)),
    "pad_reflect_big": lambda m, x: m.nn.functional.pad(x[None], (5, 5), mode="reflect"),
    "pad_mode": lambda m, x: m.nn.functional.pad(x, (1, 1), mode="mirror"),
    "interpolate_no_size": lambda m, x: m.nn.functional.interpolate(x[None]),
    "interpolate_both": lambda m, x: m.nn.functional.interpolate(x[None], size=4, scale_factor=2.0),
    "interpolate_mode": lambda m, x: m.nn.functional.interpolate(x[None], size=4, mode="cubic"),
    "max_pool_big": lambda m, x: m.nn.functional.max_pool1d(x[None], 5),
    "max_pool_stride0": lambda m, x: m.nn.functional.max_pool1d(x[None], 2, stride=0),
    "avg_pool_pad": lambda m, x: m.nn.functional.avg_pool1d(x[None], 2, padding=2),
    "conv_channels": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(1, 3, 1)),
    "conv_rank": lambda m, x: m.nn.functional.conv2d(x, m.ones(1, 2, 1, 1)),
    "conv_groups": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(2, 1, 1), groups=3),
    "conv_kernel_big": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(1, 2, 5)),
    "conv_stride0": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(1, 2, 1), stride=0),
    "conv_padding_str": lambda m, x: m.nn.functional.conv1d(x[None], m.ones(1, 2, 1), padding="full"),
    "linear_shape": lambda m, x: m.nn.functional.linear(x, m.ones(4, 2)),
    "linear_bias": lambda m, x: m.nn.functional.linear(x, m.ones(4, 3), m.ones(5)),
    "layer_norm_shape": lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    "group_norm_groups": lambda m, x: m.nn.functional.group_norm(x[None], 3),
    "batch_norm_stats": lambda m, x: m.nn.functional.batch_norm(x, m.zeros(4), m.ones(4)),
    "batch_norm_one": lambda m, x: m.nn.functional.batch_norm(x[:1], None, None, training=True),
    "instance_norm_one": lambda m, x: m.nn.functional.instance_norm(x[:, :1][None]),
    "cross_entropy_shape": lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 1, 2])),
    "cross_entropy_reduction": lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 1]), reduction="avg"),
    "mse_reduction": lambda m, x: m.nn.functional.mse_loss(x, x, reduction="total"),
    "nll_1d_target_2d": lambda m, x: m.nn.functional.nll_loss(x, m.tensor([[0, 1]])),
    "kl_div_reduction": lambda m, x: m.nn.functional.kl_div(x, x, reduction="none2"),
    "sdpa_shape": lambda m, x: m.nn.functional.scaled_dot_product_attention(x[None], m.ones(1, 2, 4), m.ones(1, 2, 4)),
    "softmax_no_dim_arg": lambda m, x: m.softmax(x),
    "embedding_weight_1d": lambda m, x: m.nn.functional.embedding(m.tensor([0]), m.ones(3)),
    "grid_sample_rank": lambda m, x: m.nn.functional.grid_sample(x[None], m.ones(1, 2, 2, 2)),
    "unknown_kwarg": lambda m, x: x.sum(dimension=0), "too_many_positional": lambda m, x: m.add(x, x, 1, 2, 3),
    "wrong_arg_type": lambda m, x: m.zeros("abc"), "tensor_ragged": lambda m, x: m.tensor([[1, 2], [3]]),
    "tensor_string": lambda m, x: m.tensor(["a"]), "tensor_object": lambda m, x: m.tensor([object()]),
    "device_unknown": lambda m, x: m.ones(2, device="tpu"), "device_bad_string": lambda m, x: m.device("cuda:x"),
    "to_unknown_device": lambda m, x: x.to("gpu9"), "numel_arg": lambda m, x: x.numel(1),
    "size_dim_past": lambda m, x: x.size(2), "stride_dim_past": lambda m, x: x.stride(-3),
    "manual_seed_neg_str": lambda m, x: m.manual_seed("abc"),
    "add_none": lambda m, x: m.add(x, None), "where_none": lambda m, x: m.where(x > 0, x, None),
    "mm_none": lambda m, x: m.mm(x, None), "maximum_none": lambda m, x: m.maximum(x, None),
    "lerp_none": lambda m, x: m.lerp(x, None, 0.5), "index_select_none": lambda m, x: x.index_select(0, None),
    "gather_none": lambda m, x: x.gather(0, None),
    "mul_none": lambda m, x: m.mul(x, None), "div_none": lambda m, x: m.div(x, None),
    "kron_none_first": lambda m, x: m.kron(None, x),
    "softmax_method_no_dim": lambda m, x: x.softmax(), "log_softmax_no_dim": lambda m, x: m.log_softmax(x),
    "bernoulli_p_negative": lambda m, x: m.bernoulli(m.full((2,), -0.5)).tolist(),
    "bernoulli_p_nan": lambda m, x: m.bernoulli(m.full((2,), float("nan"))).tolist(),
    "bernoulli_p_tensor_inplace": lambda m, x: x.bernoulli_(m.full((3,), 2.0)).tolist(),
    "bernoulli_p_number": lambda m, x: m.bernoulli(x, p=1.5),
    "ones_dtype_string": lambda m, x: m.ones(2, dtype="int64"), "to_dtype_string": lambda m, x: x.to(dtype="float32"),
    "sum_dtype_string": lambda m, x: x.sum(dtype="float32"), "finfo_string": lambda m, x: m.finfo("float32"),
}
for _n, _f in ARGS.items():
    case("arg_" + _n, _f)


# -- autograd misuse ---------------------------------------------------------------------------------
def _leaf(m, x):
    return x.detach().clone().requires_grad_()


def _backward_twice(m, x):
    w = _leaf(m, x)
    y = (w.exp() * w).sum()
    y.backward()
    y.backward()


def _modified_saved(m, x):
    w = _leaf(m, x)
    h = w * 2
    y = h.sigmoid()
    y.mul_(2)
    y.sum().backward()


def _grad_unused(m, x):
    w, v = _leaf(m, x), _leaf(m, x)
    return m.autograd.grad((w * 2).sum(), [w, v])


def _grad_wrong_shape(m, x):
    w = _leaf(m, x)
    (w * 2).backward(m.ones(3, 2))


def _set_grad_shape(m, x):
    w = _leaf(m, x)
    w.grad = m.ones(3)


def _set_grad_dtype(m, x):
    w = _leaf(m, x)
    w.grad = m.ones(2, 3, dtype=m.int64)


def _leaf_view_inplace(m, x):
    w = _leaf(m, x)
    w[0].mul_(2)


def _detach_view_inplace(m, x):
    w = _leaf(m, x)
    v = (w * 1).unbind(0)[0]
    v.mul_(2)


AUTOGRAD = {
    "backward_twice": _backward_twice, "backward_nonscalar": lambda m, x: (_leaf(m, x) * 2).backward(),
    "backward_no_grad_fn": lambda m, x: x.sum().backward(),
    "grad_no_grad_fn": lambda m, x: m.autograd.grad(x.sum(), [x]),
    "grad_nonscalar": lambda m, x: m.autograd.grad(_leaf(m, x) * 2, [x]),
    "grad_unused": _grad_unused, "grad_wrong_shape": _grad_wrong_shape,
    "leaf_inplace": lambda m, x: _leaf(m, x).add_(1), "leaf_inplace_op": lambda m, x: _leaf(m, x).relu_(),
    "leaf_view_inplace": _leaf_view_inplace, "unbind_view_inplace": _detach_view_inplace,
    "modified_saved": _modified_saved,
    "split_view_inplace": lambda m, x: (_leaf(m, x) * 1).split(1)[1].add_(1),
    "chunk_view_inplace": lambda m, x: (_leaf(m, x) * 1).chunk(2)[0].zero_(),
    "split_sizes_view_inplace": lambda m, x: (_leaf(m, x) * 1).split([1, 1])[0].mul_(2),
    "unbind_view_of_view_inplace": lambda m, x: (_leaf(m, x) * 1).unbind(0)[0][:2].mul_(2),
    "unbind_view_setitem": lambda m, x: (_leaf(m, x) * 1).unbind(1)[2].__setitem__(0, 1.0),
    "unbind_leaf_inplace": lambda m, x: _leaf(m, x).unbind(0)[1].copy_(m.ones(3)),
    "set_grad_shape": _set_grad_shape, "set_grad_dtype": _set_grad_dtype,
    "requires_grad_nonleaf_off": lambda m, x: (_leaf(m, x) * 2).requires_grad_(False),
    "numpy_requires_grad": lambda m, x: _leaf(m, x).numpy(),
    "leaf_setitem": lambda m, x: _leaf(m, x).__setitem__(0, 1.0),
    "leaf_copy_": lambda m, x: _leaf(m, x).copy_(x),
    "out_requires_grad": lambda m, x: m.add(_leaf(m, x), 1, out=m.empty(2, 3)),
    "grad_input_not_leaf_used": lambda m, x: m.autograd.grad((_leaf(m, x) * 2).sum(), [m.ones(2, requires_grad=True)]),
    "backward_inputs_empty": lambda m, x: (_leaf(m, x) * 2).sum().backward(inputs=[]),
    "hook_not_callable_grad": lambda m, x: x.register_hook(lambda g: g),
    "grad_outputs_length": lambda m, x: m.autograd.grad([(_leaf(m, x) * 2).sum()], [x], grad_outputs=[m.ones(()), m.ones(())]),
}
for _n, _f in AUTOGRAD.items():
    case("autograd_" + _n, _f)


# -- module misuse ----------------------------------------------------------------------------------
def _lin(m):
    m.manual_seed(0)
    return m.nn.Linear(3, 2)


def _sd_missing(m, x):
    lin = _lin(m)
    lin.load_state_dict({"weight": lin.weight.detach()})


def _sd_unexpected(m, x):
    lin = _lin(m)
    sd = dict(lin.state_dict(), extra=m.ones(1))
    lin.load_state_dict(sd)


def _sd_shape(m, x):
    lin = _lin(m)
    lin.load_state_dict({"weight": m.ones(3, 3), "bias": m.ones(2)})


def _sd_not_dict(m, x):
    _lin(m).load_state_dict([1, 2])


def _assign_tensor_to_param(m, x):
    lin = _lin(m)
    lin.weight = m.ones(2, 3)


def _assign_module_wrong(m, x):
    seq = m.nn.Sequential(_lin(m))
    seq._modules["0"] = 5
    seq(x)


MODULES = {
    "linear_in": lambda m, x: _lin(m)(m.ones(2, 4)), "linear_0d": lambda m, x: _lin(m)(m.ones(())),
    "conv2d_channels": lambda m, x: m.nn.Conv2d(3, 2, 1)(m.ones(1, 4, 5, 5)),
    "conv2d_rank": lambda m, x: m.nn.Conv2d(3, 2, 1)(m.ones(5)),
    "conv_bad_groups": lambda m, x: m.nn.Conv2d(3, 2, 1, groups=2), "conv_bad_padding": lambda m, x: m.nn.Conv2d(3, 3, 3, padding="full"),
    "conv_same_stride": lambda m, x: m.nn.Conv2d(3, 3, 3, padding="same", stride=2),
    "linear_neg": lambda m, x: m.nn.Linear(-1, 2), "embedding_past": lambda m, x: m.nn.Embedding(3, 2)(m.tensor([3])),
    "embedding_float": lambda m, x: m.nn.Embedding(3, 2)(x), "embedding_padding_idx": lambda m, x: m.nn.Embedding(3, 2, padding_idx=5),
    "batchnorm_features": lambda m, x: m.nn.BatchNorm1d(4)(x), "batchnorm_one": lambda m, x: m.nn.BatchNorm1d(3)(x[:1]),
    "batchnorm_rank": lambda m, x: m.nn.BatchNorm2d(3)(x), "layernorm_shape": lambda m, x: m.nn.LayerNorm(4)(x),
    "groupnorm_div": lambda m, x: m.nn.GroupNorm(2, 3), "lstm_input": lambda m, x: m.nn.LSTM(4, 2)(x[None]),
    "gru_rank": lambda m, x: m.nn.GRU(3, 2)(m.ones(2, 2, 2, 3)), "rnn_hidden": lambda m, x: m.nn.RNN(3, 2)(x[None], m.ones(1, 2, 5)),
    "mha_embed_heads": lambda m, x: m.nn.MultiheadAttention(5, 2), "mha_dim": lambda m, x: m.nn.MultiheadAttention(4, 2)(x[None], x[None], x[None]),
    "transformer_heads": lambda m, x: m.nn.TransformerEncoderLayer(5, 2),
    "dropout_p": lambda m, x: m.nn.Dropout(2.0), "softmax_dim": lambda m, x: m.nn.Softmax(dim=3)(x),
    "flatten_dims": lambda m, x: m.nn.Flatten(2, 5)(x), "unflatten_size": lambda m, x: m.nn.Unflatten(1, (2, 2))(x),
    "sd_missing": _sd_missing, "sd_unexpected": _sd_unexpected, "sd_shape": _sd_shape, "sd_not_dict": _sd_not_dict,
    "register_param_dot": lambda m, x: _lin(m).register_parameter("a.b", None),
    "register_param_tensor": lambda m, x: _lin(m).register_parameter("p", m.ones(2)),
    "register_param_empty": lambda m, x: _lin(m).register_parameter("", None),
    "register_param_exists": lambda m, x: _lin(m).register_parameter("forward", None),
    "register_buffer_type": lambda m, x: _lin(m).register_buffer("b", 3),
    "register_buffer_dot": lambda m, x: _lin(m).register_buffer("a.b", m.ones(1)),
    "register_buffer_param_name": lambda m, x: _lin(m).register_buffer("weight", m.ones(1)),
    "add_module_type": lambda m, x: _lin(m).add_module("sub", 3), "add_module_dot": lambda m, x: _lin(m).add_module("a.b", m.nn.ReLU()),
    "add_module_name_type": lambda m, x: _lin(m).add_module(3, m.nn.ReLU()),
    "missing_attr": lambda m, x: _lin(m).wieght, "assign_tensor_to_param": _assign_tensor_to_param,
    "sequential_index": lambda m, x: m.nn.Sequential(m.nn.ReLU())[3],
    "modulelist_index": lambda m, x: m.nn.ModuleList([m.nn.ReLU()])[-2], "modulelist_append_type": lambda m, x: m.nn.ModuleList().append(3),
    "moduledict_key": lambda m, x: m.nn.ModuleDict({"a": m.nn.ReLU()})["b"],
    "parameterlist_index": lambda m, x: m.nn.ParameterList([m.nn.Parameter(m.ones(1))])[2],
    "module_call_no_forward": lambda m, x: m.nn.Module()(x), "get_submodule": lambda m, x: _lin(m).get_submodule("nope"),
    "get_parameter": lambda m, x: _lin(m).get_parameter("nope"), "apply_not_callable": lambda m, x: _lin(m).apply(3),
    "module_to_bad_dtype": lambda m, x: _lin(m).to(m.int64), "sequential_wrong_arg": lambda m, x: m.nn.Sequential(3),
    "assign_module_wrong": _assign_module_wrong, "parameter_int": lambda m, x: m.nn.Parameter(m.ones(2, dtype=m.int64)),
    "sgd_empty": lambda m, x: m.optim.SGD([], lr=0.1), "sgd_neg_lr": lambda m, x: m.optim.SGD(_lin(m).parameters(), lr=-1.0),
    "adam_betas": lambda m, x: m.optim.Adam(_lin(m).parameters(), betas=(1.5, 0.9)),
    "adam_eps": lambda m, x: m.optim.Adam(_lin(m).parameters(), eps=-1.0),
    "sgd_momentum": lambda m, x: m.optim.SGD(_lin(m).parameters(), lr=0.1, momentum=-0.5),
    "sgd_nesterov": lambda m, x: m.optim.SGD(_lin(m).parameters(), lr=0.1, nesterov=True),
    "optim_tensor_params": lambda m, x: m.optim.SGD(m.ones(2, requires_grad=True), lr=0.1),
    "optim_non_tensor": lambda m, x: m.optim.SGD([3], lr=0.1),
    "optim_dup_params": lambda m, x: m.optim.SGD([{"params": [p]} for p in [_lin(m).weight] * 2], lr=0.1),
    "optim_load_groups": lambda m, x: m.optim.SGD(_lin(m).parameters(), lr=0.1).load_state_dict({"state": {}, "param_groups": []}),
    "scheduler_not_optim": lambda m, x: m.optim.lr_scheduler.StepLR(3, 1),
    "clip_grad_type": lambda m, x: m.nn.utils.clip_grad_norm_(_lin(m).parameters(), 1.0, norm_type="two"),
    "dataloader_batch0": lambda m, x: m.utils.data.DataLoader([1, 2], batch_size=0),
    "dataloader_sampler_shuffle": lambda m, x: m.utils.data.DataLoader([1, 2], shuffle=True, sampler=[0, 1]),
    "tensordataset_sizes": lambda m, x: m.utils.data.TensorDataset(x, m.ones(3)),
    "random_split_sum": lambda m, x: m.utils.data.random_split(range(5), [2, 2]),
}
for _n, _f in MODULES.items():
    case("module_" + _n, _f, cpu_only=_n.startswith(("sgd", "adam", "optim", "scheduler", "dataloader",
                                                        "register", "add_module", "random_split", "missing",
                                                        "sequential_index", "modulelist", "moduledict",
                                                        "get_", "apply", "linear_neg", "conv_bad", "conv_same",
                                                        "groupnorm", "mha_embed", "transformer", "dropout_p",
                                                        "embedding_padding")))


# -- loader misuse ----------------------------------------------------------------------------------
def _save_bytes(m, obj):
    buf = io.BytesIO()
    m.save(obj, buf)
    return buf.getvalue()


LOADERS = {
    "load_missing_file": lambda m, x: m.load("/nonexistent/dir/model.pt"),
    "load_directory": lambda m, x: m.load("/"),
    "load_bad_map_location": lambda m, x: m.load(io.BytesIO(_save_bytes(m, {"a": m.ones(1)})), map_location=3.5),
    "load_unknown_kwarg": lambda m, x: m.load(io.BytesIO(_save_bytes(m, {"a": 1})), bogus=1),
    "load_unknown_device": lambda m, x: m.load(io.BytesIO(_save_bytes(m, {"a": m.ones(1)})), map_location="tpu"),
    "save_missing_dir": lambda m, x: m.save({"a": 1}, "/nonexistent/dir/model.pt"),
    "save_not_file": lambda m, x: m.save({"a": 1}, 3),
    "load_state_dict_strict_type": lambda m, x: _lin(m).load_state_dict({"weight": 1, "bias": m.ones(2)}),
}
for _n, _f in LOADERS.items():
    case("loader_" + _n, _f, cpu_only=True)

# key words where the rule in test_bad_inputs.py is too blunt (the messages differ but both name it)
KEYS = {"dtype_conv_mixed": ("float", "long"), "arg_max_pool_stride0": "stride", "arg_too_many_positional": "add(",
        "loader_load_unknown_device": "tpu", "arg_sdpa_shape": ("3", "4")}
for _c in CASES:
    _c.key = KEYS.get(_c.name, _c.key)
