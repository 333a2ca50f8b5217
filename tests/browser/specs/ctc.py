"""Browser cases of ctc_loss (ops/composite/ctc.py): ids "ctc/..."."""


def add_specs(R):
    case, rand, torch = R.case, R.rand, R.torch
    F = "nn.functional.ctc_loss"
    tol = R.GRAD_TOL

    def logp(*shape):
        return torch.log_softmax(rand(*shape), -1)

    padded = torch.tensor([[1, 2, 2], [3, 3, 0], [4, 0, 0]])
    case("ctc/padded_none", F, logp(7, 3, 5), padded, [7, 6, 5], [3, 2, 0], kwargs={"reduction": "none"},
         grad=True, tol=tol)
    case("ctc/padded_mean", F, logp(7, 3, 5), padded, [7, 6, 5], [3, 2, 1], grad=True, tol=tol)
    case("ctc/concatenated_sum", F, logp(6, 3, 5), torch.tensor([1, 1, 2, 3, 4]), torch.tensor([6, 5, 6]),
         torch.tensor([2, 2, 1]), kwargs={"reduction": "sum", "blank": 0}, grad=True, tol=tol)
    case("ctc/blank_last", F, logp(6, 2, 4), torch.tensor([[0, 1], [2, 2]]), [6, 6], [2, 2],
         kwargs={"blank": 3}, grad=True, tol=tol)
    case("ctc/unbatched", F, logp(5, 4), torch.tensor([1, 3]), [5], [2], kwargs={"reduction": "none"},
         grad=True, tol=tol)
    case("ctc/impossible_zero_infinity", F, logp(4, 2, 3), torch.tensor([[1, 1, 1], [2, 0, 0]]), [4, 4], [3, 1],
         kwargs={"reduction": "none", "zero_infinity": True}, grad=True, tol=tol)
    case("ctc/impossible_inf", F, logp(4, 2, 3), torch.tensor([[1, 1, 1], [2, 0, 0]]), [4, 4], [3, 1],
         kwargs={"reduction": "none"}, tol=tol)
    case("ctc/torch_enum", "ctc_loss", logp(5, 2, 3), torch.tensor([[1, 2], [2, 0]]), [5, 4], [2, 1], 0, 2, False,
         grad=True, tol=tol)
    case("ctc/bad_input_length", F, logp(4, 2, 3), torch.tensor([[1], [2]]), [5, 4], [1, 1], raises="RuntimeError")
    case("ctc/bad_target_size", F, logp(4, 2, 3), torch.tensor([[1], [2]]), [4, 4], [2, 1], raises="RuntimeError")
    case("ctc/bad_blank", F, logp(4, 2, 3), torch.tensor([[1], [2]]), [4, 4], [1, 1], kwargs={"blank": 3},
         raises="RuntimeError")
