"""Browser cases of convolution, pooling, padding and interpolation (ops/conv.py,
ops/pooling.py, ops/padding.py, ops/interpolate.py): ids "conv/...", so
`run_browser_tests.py --filter conv/` runs them."""


def add_specs(R):
    case, method, rand = R.case, R.method, R.rand
    torch = R.torch
    F = "nn.functional."
    tol = R.GRAD_TOL
    # convolution: im2col + matmul forward, col2im + matmul backward
    case("conv/conv2d", F + "conv2d", rand(2, 3, 6, 5), rand(4, 3, 3, 2), rand(4), grad=True, tol=tol)
    case("conv/conv2d_stride_pad_dil", F + "conv2d", rand(1, 2, 7, 7), rand(3, 2, 3, 3), None,
         kwargs={"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2]}, grad=True, tol=tol)
    case("conv/conv2d_same_groups", F + "conv2d", rand(2, 4, 5, 6), rand(4, 2, 3, 2), rand(4),
         kwargs={"padding": "same", "groups": 2}, grad=True, tol=tol)
    case("conv/conv2d_depthwise", F + "conv2d", rand(1, 3, 5, 5), rand(3, 1, 3, 3), kwargs={"groups": 3, "padding": 1},
         grad=True, tol=tol)
    case("conv/conv2d_1x1", F + "conv2d", rand(2, 4, 3, 3), rand(5, 4, 1, 1), rand(5), grad=True, tol=tol)
    case("conv/conv2d_unbatched", "conv2d", rand(2, 5, 5), rand(3, 2, 2, 2), grad=True, tol=tol)
    case("conv/conv2d_transposed_input", F + "conv2d", R.Viewed(rand(6, 5, 3, 2), ("permute", 3, 2, 1, 0)),
         rand(2, 3, 3, 3), grad=True, tol=tol)
    case("conv/conv1d", F + "conv1d", rand(2, 3, 9), rand(4, 3, 3), rand(4), kwargs={"stride": 2, "padding": 1},
         grad=True, tol=tol)
    case("conv/conv3d", F + "conv3d", rand(1, 2, 4, 5, 4), rand(3, 2, 2, 3, 2), rand(3), kwargs={"padding": [1, 0, 1]},
         grad=True, tol=tol)
    case("conv/conv_transpose2d", F + "conv_transpose2d", rand(2, 4, 3, 4), rand(4, 2, 3, 3), rand(2),
         kwargs={"stride": 2, "padding": 1, "output_padding": 1}, grad=True, tol=tol)
    case("conv/conv_transpose1d_groups", F + "conv_transpose1d", rand(1, 4, 5), rand(4, 1, 3), None, 3, 0, 2, 2,
         grad=True, tol=tol)
    case("conv/conv_transpose3d", F + "conv_transpose3d", rand(1, 2, 2, 3, 2), rand(2, 2, 2, 2, 2),
         kwargs={"stride": [1, 2, 1]}, grad=True, tol=tol)
    case("conv/conv2d_bad_channels", F + "conv2d", rand(1, 4, 5, 5), rand(2, 3, 3, 3), raises="RuntimeError")
    case("conv/conv2d_kernel_too_big", F + "conv2d", rand(1, 2, 3, 3), rand(2, 2, 4, 4), raises="RuntimeError")
    case("conv/conv2d_bad_groups", F + "conv2d", rand(1, 4, 5, 5), rand(3, 2, 3, 3), kwargs={"groups": 2},
         raises="RuntimeError")
    # unfold / fold / Tensor.unfold
    case("conv/unfold", F + "unfold", rand(2, 2, 5, 4), [2, 3], kwargs={"padding": 1, "stride": [2, 1]}, grad=True,
         tol=tol)
    case("conv/fold", F + "fold", rand(1, 8, 12), [4, 5], 2, grad=True, tol=tol)
    method("conv/tensor_unfold", "unfold", rand(3, 7), 1, 3, 2, grad=True, tol=tol, strides=True)
    method("conv/tensor_unfold_overlap", "unfold", rand(2, 6, 2), 1, 4, 1, grad=True, tol=tol)
    # pooling
    case("conv/max_pool2d", F + "max_pool2d", R.distinct(2, 2, 6, 7), 3, 2, 1, kwargs={"return_indices": True},
         grad=True, tol=tol)
    case("conv/max_pool2d_ceil_dil", F + "max_pool2d", R.distinct(1, 2, 7, 6), [2, 3], [2, 1], [1, 1], [2, 1], True,
         grad=True, tol=tol)
    case("conv/max_pool2d_nan_ties", F + "max_pool2d",
         torch.tensor([[[[1.0, 1.0, R.NAN], [1.0, 2.0, 2.0], [R.NAN, 0.0, -R.INF]]]]), 2, 1,
         kwargs={"return_indices": True})
    case("conv/max_pool1d", F + "max_pool1d", R.distinct(2, 3, 9), 3, 2, kwargs={"return_indices": True}, grad=True,
         tol=tol)
    case("conv/max_pool3d", F + "max_pool3d", R.distinct(1, 2, 4, 5, 4), 2, grad=True, tol=tol)
    case("conv/avg_pool2d", F + "avg_pool2d", rand(2, 2, 6, 7), 3, 2, 1, grad=True, tol=tol)
    case("conv/avg_pool2d_no_pad_ceil", F + "avg_pool2d", rand(1, 2, 7, 6), 3, 2, 1, True, False, grad=True, tol=tol)
    case("conv/avg_pool2d_divisor", F + "avg_pool2d", rand(1, 2, 5, 5), 2, kwargs={"divisor_override": 3}, grad=True,
         tol=tol)
    case("conv/avg_pool1d", F + "avg_pool1d", rand(2, 3, 9), 4, 3, 2, grad=True, tol=tol)
    case("conv/avg_pool3d", F + "avg_pool3d", rand(1, 2, 4, 5, 4), [2, 3, 2], grad=True, tol=tol)
    case("conv/adaptive_avg_pool2d", F + "adaptive_avg_pool2d", rand(2, 2, 7, 5), [3, 4], grad=True, tol=tol)
    case("conv/adaptive_avg_pool1d", F + "adaptive_avg_pool1d", rand(2, 3, 10), 4, grad=True, tol=tol)
    case("conv/adaptive_max_pool2d", F + "adaptive_max_pool2d", R.distinct(2, 2, 7, 5), [3, 2],
         kwargs={"return_indices": True}, grad=True, tol=tol)
    case("conv/adaptive_max_pool1d", F + "adaptive_max_pool1d", R.distinct(2, 9), 4, grad=True, tol=tol)
    case("conv/lp_pool2d", F + "lp_pool2d", R.positive(1, 2, 6, 6), 2, 3, 2, grad=True, tol=tol)
    case("conv/max_pool2d_bad_pad", F + "max_pool2d", rand(1, 1, 5, 5), 2, 2, 2, raises="RuntimeError")
    case("conv/avg_pool2d_too_small", F + "avg_pool2d", rand(1, 1, 3, 3), 4, raises="RuntimeError")
    # padding
    for mode in ("constant", "reflect", "replicate", "circular"):
        case(f"conv/pad_{mode}", F + "pad", rand(2, 3, 4, 5), [1, 2, 2, 1], kwargs={"mode": mode}, grad=True, tol=tol)
        case(f"conv/pad_{mode}_negative", F + "pad", rand(2, 4, 5), [2, -1], kwargs={"mode": mode}, grad=True, tol=tol)
    case("conv/pad_constant_value_3d", F + "pad", rand(2, 3, 2, 2), [1, 0, 0, 1, 1, 1], kwargs={"value": 1.5},
         grad=True, tol=tol)
    case("conv/pad_reflect_3d", F + "pad", rand(1, 2, 3, 3, 4), [1, 1, 2, 0, 1, 2], kwargs={"mode": "reflect"},
         grad=True, tol=tol)
    case("conv/pad_reflect_too_big", F + "pad", rand(1, 2, 3), [3, 0], kwargs={"mode": "reflect"},
         raises="RuntimeError")
    case("conv/pad_bad_mode", F + "pad", rand(1, 2, 3), [1, 1], kwargs={"mode": "wrap"}, raises="NotImplementedError")
    case("conv/pixel_shuffle", F + "pixel_shuffle", rand(2, 8, 2, 3), 2, grad=True, tol=tol)
    case("conv/pixel_unshuffle", F + "pixel_unshuffle", rand(1, 2, 4, 6), 2, grad=True, tol=tol)
    case("conv/channel_shuffle", F + "channel_shuffle", rand(2, 6, 2, 2), 3, grad=True, tol=tol)
    # max_unpool: indices from a max_pool recorded on the host
    x = R.distinct(1, 2, 4, 6)
    pooled, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    case("conv/max_unpool2d", F + "max_unpool2d", pooled, idx, 2, grad=True, tol=tol)
    case("conv/max_unpool2d_output_size", F + "max_unpool2d", pooled, idx, 2, kwargs={"output_size": [5, 7]},
         grad=True, tol=tol)
    x1 = R.distinct(2, 7)
    p1, i1 = torch.nn.functional.max_pool1d(x1, 3, 2, 1, return_indices=True)
    case("conv/max_unpool1d", F + "max_unpool1d", p1, i1, 3, 2, 1, grad=True, tol=tol)
    case("conv/max_unpool2d_bad_shape", F + "max_unpool2d", pooled, idx[:, :, :1], 2, raises="RuntimeError")
    # interpolate
    for name, shape, kw in [("nearest", (2, 2, 3, 4), {"size": [5, 7]}),
                            ("nearest_scale", (1, 2, 5), {"scale_factor": 1.7}),
                            ("nearest_exact", (1, 2, 5, 4), {"size": [3, 7], "mode": "nearest-exact"}),
                            ("linear", (2, 2, 5), {"size": 8, "mode": "linear"}),
                            ("linear_align", (2, 2, 5), {"size": 8, "mode": "linear", "align_corners": True}),
                            ("bilinear", (1, 2, 4, 5), {"size": [7, 3], "mode": "bilinear"}),
                            ("bilinear_scale_align", (1, 2, 4, 5), {"scale_factor": [2.0, 1.5], "mode": "bilinear",
                                                                   "align_corners": True}),
                            ("bicubic", (1, 2, 4, 5), {"size": [6, 9], "mode": "bicubic"}),
                            ("bicubic_down_align", (1, 1, 8, 7), {"size": [3, 4], "mode": "bicubic",
                                                                  "align_corners": True}),
                            ("trilinear", (1, 1, 3, 4, 3), {"size": [5, 3, 4], "mode": "trilinear"}),
                            ("area", (1, 2, 6, 5), {"size": [3, 2], "mode": "area"})]:
        case(f"conv/interpolate_{name}", F + "interpolate", rand(*shape), kwargs=kw, grad=True, tol=tol)
    case("conv/interpolate_bad_mode_rank", F + "interpolate", rand(1, 1, 4), kwargs={"size": 3, "mode": "bilinear"},
         raises="NotImplementedError")
    case("conv/interpolate_size_and_scale", F + "interpolate", rand(1, 1, 4), kwargs={"size": 3, "scale_factor": 2},
         raises="ValueError")
    # grid_sample / affine_grid
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            case(f"conv/grid_sample_{mode}_{pad}", F + "grid_sample", rand(1, 2, 4, 5), rand(1, 3, 2, 2, lo=-1.2, hi=1.2),
                 kwargs={"mode": mode, "padding_mode": pad, "align_corners": pad == "border"}, grad=True,
                 tol=(1e-3, 1e-4))
    case("conv/grid_sample_3d", F + "grid_sample", rand(1, 2, 3, 3, 4), rand(1, 2, 2, 3, 3, lo=-1.2, hi=1.2),
         kwargs={"align_corners": False}, grad=True, tol=(1e-3, 1e-4))
    case("conv/grid_sample_bad_grid", F + "grid_sample", rand(1, 1, 3, 3), rand(1, 2, 2, 3), raises="RuntimeError")
    case("conv/affine_grid", F + "affine_grid", rand(2, 2, 3), [2, 1, 3, 4], kwargs={"align_corners": False},
         grad=True, tol=tol)
    case("conv/affine_grid_3d", F + "affine_grid", rand(1, 3, 4), [1, 1, 2, 3, 2], kwargs={"align_corners": True},
         grad=True, tol=tol)
    for mode in ("bilinear", "bicubic"):
        case(f"conv/interpolate_{mode}_antialias", F + "interpolate", rand(1, 2, 9, 8),
             kwargs={"size": [4, 3], "mode": mode, "antialias": True}, grad=True, tol=tol)
