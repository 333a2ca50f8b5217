"""Browser cases of the functionals behind the nn loss modules that issue 8 added (ids
"nn_act_loss/..."): F.triplet_margin_with_distance_loss (default distance, swap, reductions) and
F.linear_cross_entropy (class indices, K-dimensional logits with a bias, probabilities, label
smoothing, ignore_index); the modules themselves run in tests/browser/scripts/nn_act_loss.py."""


def add_specs(R):
    case, rand = R.case, R.rand
    torch = R.torch
    tol = R.GRAD_TOL
    tm = "nn.functional.triplet_margin_with_distance_loss"
    case("nn_act_loss/triplet_dist", tm, rand(4, 5), rand(4, 5), rand(4, 5), grad=True, tol=tol)
    case("nn_act_loss/triplet_dist_swap_none", tm, rand(4, 5), rand(4, 5), rand(4, 5),
         kwargs={"swap": True, "margin": 0.5, "reduction": "none"}, grad=True, tol=tol)
    case("nn_act_loss/triplet_dist_sum", tm, rand(3, 6), rand(3, 6), rand(3, 6), kwargs={"reduction": "sum"},
         grad=True, tol=tol)
    case("nn_act_loss/triplet_dist_bad_margin", tm, rand(3, 6), rand(3, 6), rand(3, 6), kwargs={"margin": 0.0},
         raises="ValueError")
    case("nn_act_loss/triplet_dist_bad_dims", tm, rand(3, 6), rand(3, 6), rand(6), raises="RuntimeError")
    lce = "nn.functional.linear_cross_entropy"
    case("nn_act_loss/linear_ce", lce, rand(5, 4), rand(3, 4), torch.tensor([0, 2, 1, 1, 2]), grad=True, tol=tol)
    case("nn_act_loss/linear_ce_kdim_bias", lce, rand(3, 4), rand(3, 2, 4), torch.tensor([[0, 2], [1, 1], [2, 0]]),
         kwargs={"linear_bias": rand(3, 2), "reduction": "sum", "label_smoothing": 0.1}, grad=True, tol=tol)
    case("nn_act_loss/linear_ce_probs", lce, rand(2, 4), rand(3, 4), torch.softmax(rand(2, 3), 1),
         kwargs={"weight": torch.tensor([1.0, 2.0, 0.5])}, grad=True, tol=tol)
    case("nn_act_loss/linear_ce_ignore_none", lce, rand(4, 4), rand(3, 4), torch.tensor([0, 2, 1, 2]),
         kwargs={"ignore_index": 2, "reduction": "none"}, grad=True, tol=tol)
    case("nn_act_loss/linear_ce_bad_features", lce, rand(4, 5), rand(3, 4), torch.tensor([0, 2, 1, 2]),
         raises="RuntimeError")
