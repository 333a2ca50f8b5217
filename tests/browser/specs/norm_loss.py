"""Browser cases of normalization, embedding and losses (ops/composite): ids "nl/...".
Dropout draws random numbers, which PyTorch's can't match: its identity forms only."""


def add_specs(R):
    case, rand, positive = R.case, R.rand, R.positive
    torch = R.torch
    F = "nn.functional."
    tol = R.GRAD_TOL
    # normalization
    case("nl/layer_norm", F + "layer_norm", rand(3, 5), [5], rand(5), rand(5), grad=True, tol=tol)
    case("nl/layer_norm_2d", F + "layer_norm", rand(2, 3, 4), [3, 4], grad=True, tol=tol)
    case("nl/layer_norm_transposed", F + "layer_norm", R.Viewed(rand(4, 6), ("t",)), [4], grad=True, tol=tol)
    case("nl/rms_norm", F + "rms_norm", rand(3, 5), [5], rand(5), grad=True, tol=tol)
    case("nl/group_norm", F + "group_norm", rand(2, 4, 3), 2, rand(4), rand(4), grad=True, tol=tol)
    case("nl/batch_norm_train", F + "batch_norm", rand(4, 3, 2), None, None, rand(3), rand(3),
         kwargs={"training": True}, grad=True, tol=tol)
    case("nl/batch_norm_eval", F + "batch_norm", rand(4, 3), rand(3), positive(3), rand(3), rand(3), tol=tol)
    case("nl/instance_norm", F + "instance_norm", rand(2, 3, 5), grad=True, tol=tol)
    case("nl/local_response_norm", F + "local_response_norm", rand(2, 5, 3), 3, grad=True, tol=tol)
    case("nl/normalize", F + "normalize", rand(3, 4), grad=True, tol=tol)
    case("nl/layer_norm_bad_shape", F + "layer_norm", rand(2, 4), [3], raises="RuntimeError")
    case("nl/group_norm_bad_groups", F + "group_norm", rand(2, 6, 4), 4, raises="RuntimeError")
    # one_hot, embedding
    case("nl/one_hot", F + "one_hot", torch.tensor([[0, 3], [2, 1]]), 5)
    case("nl/one_hot_infer", F + "one_hot", torch.tensor([0, 3, 2]))
    case("nl/embedding", F + "embedding", torch.tensor([[1, 2, 2], [0, 4, 1]]), rand(5, 3), grad=True, tol=tol)
    case("nl/embedding_padding", F + "embedding", torch.tensor([1, 2, 1, 3]), rand(4, 2), kwargs={"padding_idx": 1},
         grad=True, tol=tol)
    case("nl/embedding_int32", F + "embedding", torch.tensor([3, 0], dtype=R.I32), rand(4, 2))
    case("nl/embedding_bag_mean", F + "embedding_bag", torch.tensor([1, 2, 4, 4, 3, 0]), rand(5, 3),
         torch.tensor([0, 2, 2]), grad=True, tol=tol)
    case("nl/embedding_bag_max", F + "embedding_bag", torch.tensor([[0, 1], [2, 3]]), R.distinct(4, 3),
         kwargs={"mode": "max"}, grad=True, tol=tol)
    case("nl/embedding_bad_weight", F + "embedding", torch.tensor([1]), rand(4), raises="RuntimeError")
    # dropout: deterministic forms
    case("nl/dropout_eval", F + "dropout", rand(3, 4), 0.5, False)
    case("nl/dropout_p0", F + "dropout", rand(3, 4), 0.0)
    case("nl/dropout_bad_p", F + "dropout", rand(3), 1.5, raises="ValueError")
    # losses
    tgt = torch.tensor([1, 0, 4, 2])
    case("nl/cross_entropy", F + "cross_entropy", rand(4, 5), tgt, grad=True, tol=tol)
    case("nl/cross_entropy_weight_smooth", F + "cross_entropy", rand(4, 5), tgt, positive(5),
         kwargs={"label_smoothing": 0.2, "ignore_index": 0}, tol=tol)
    case("nl/cross_entropy_smooth_ignore", F + "cross_entropy", rand(4, 5), tgt,
         kwargs={"label_smoothing": 0.2, "ignore_index": 0}, grad=True, tol=tol)
    case("nl/cross_entropy_nd", F + "cross_entropy", rand(2, 3, 4), torch.tensor([[0, 1, 2, 1], [2, 2, 0, 1]]),
         kwargs={"reduction": "none"}, grad=True, tol=tol)
    case("nl/cross_entropy_probs", F + "cross_entropy", rand(3, 4), torch.softmax(rand(3, 4), 1), grad=True, tol=tol)
    case("nl/cross_entropy_bad_target", F + "cross_entropy", rand(3, 5), torch.tensor([1, 2, 5]), raises="IndexError")
    case("nl/nll_loss", F + "nll_loss", rand(4, 5), tgt, kwargs={"reduction": "sum"}, grad=True, tol=tol)
    case("nl/mse_loss", F + "mse_loss", rand(3, 4), rand(3, 4), grad=True, tol=tol)
    case("nl/l1_loss", F + "l1_loss", rand(3, 4), rand(3, 4), kwargs={"reduction": "sum"}, grad=True, tol=tol)
    case("nl/smooth_l1_loss", F + "smooth_l1_loss", rand(3, 4), rand(3, 4), kwargs={"beta": 0.5}, grad=True, tol=tol)
    case("nl/huber_loss", F + "huber_loss", rand(3, 4), rand(3, 4), kwargs={"delta": 0.7}, grad=True, tol=tol)
    case("nl/bce", F + "binary_cross_entropy", positive(3, 4, lo=0.05, hi=0.95), positive(3, 4, lo=0.0, hi=1.0),
         grad=True, tol=tol)
    case("nl/bce_logits", F + "binary_cross_entropy_with_logits", rand(3, 4, lo=-8, hi=8),
         positive(3, 4, lo=0.0, hi=1.0), grad=True, tol=tol)
    case("nl/kl_div_batchmean", F + "kl_div", torch.log_softmax(rand(3, 4), 1), torch.softmax(rand(3, 4), 1),
         kwargs={"reduction": "batchmean"}, grad=True, tol=tol)
    case("nl/cosine_similarity", F + "cosine_similarity", rand(3, 5), rand(3, 5), grad=True, tol=tol)
    case("nl/pairwise_distance", F + "pairwise_distance", rand(3, 5), rand(3, 5), grad=True, tol=tol)
    case("nl/triplet_margin_loss", F + "triplet_margin_loss", rand(4, 3), rand(4, 3), rand(4, 3), grad=True, tol=tol)
    case("nl/margin_ranking_loss", F + "margin_ranking_loss", rand(5), rand(5),
         torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0]), kwargs={"margin": 0.3}, grad=True, tol=tol)
    case("nl/gaussian_nll_loss", F + "gaussian_nll_loss", rand(3, 4), rand(3, 4), positive(3, 4), grad=True, tol=tol)
    case("nl/poisson_nll_loss", F + "poisson_nll_loss", rand(3, 4), positive(3, 4), grad=True, tol=tol)
    case("nl/multi_margin_loss", F + "multi_margin_loss", rand(4, 5), tgt, grad=True, tol=tol)
    case("nl/multilabel_soft_margin_loss", F + "multilabel_soft_margin_loss", rand(3, 4),
         torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]]), grad=True, tol=tol)
    case("nl/mse_bad_reduction", F + "mse_loss", rand(3), rand(3), kwargs={"reduction": "avg"}, raises="ValueError")
