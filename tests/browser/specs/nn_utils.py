"""Browser cases of torchweb.nn.init and torchweb.nn.utils (ids "nn_utils/..."): the
deterministic initializers (eye_, dirac_, constant_, zeros_ on a recorded tensor, compared
exactly), get_total_norm, parameters_to_vector, and nn.utils.rnn's padding and packing
(pad_sequence with gradients, pack_padded_sequence returning a PackedSequence of four tensors,
unpad_sequence). Random initializers (seeded values differ from PyTorch's by design),
clip_grad_norm_ (a case cannot set .grad) and gains (a case's output is a tensor) are left to
tests/test_nn_init.py and tests/test_nn_utils.py."""


def add_specs(R):
    case, rand = R.case, R.rand
    case("nn_utils/eye_", "nn.init.eye_", rand(3, 5))
    case("nn_utils/dirac_groups", "nn.init.dirac_", rand(4, 2, 3, 3), 2)
    case("nn_utils/dirac_3d", "nn.init.dirac_", rand(3, 3, 2, 2, 2))
    case("nn_utils/constant_", "nn.init.constant_", rand(2, 3), 0.25)
    case("nn_utils/zeros_", "nn.init.zeros_", rand(4))
    case("nn_utils/eye_bad_dims", "nn.init.eye_", rand(2, 2, 2), raises="ValueError")
    case("nn_utils/fan_1d", "nn.init.xavier_uniform_", rand(5), raises="ValueError")
    case("nn_utils/total_norm_2", "nn.utils.get_total_norm", [rand(3, 4), rand(5)], tol=R.REDUCE_TOL)
    case("nn_utils/total_norm_inf", "nn.utils.get_total_norm", [rand(3, 4), rand(5)], float("inf"))
    case("nn_utils/total_norm_1", "nn.utils.get_total_norm", [rand(3, 4), rand(2, 2)], 1.0, tol=R.REDUCE_TOL)
    case("nn_utils/parameters_to_vector", "nn.utils.parameters_to_vector", [rand(2, 3), rand(4)], grad=True)
    case("nn_utils/pad_sequence", "nn.utils.rnn.pad_sequence", [rand(3, 2), rand(1, 2), rand(4, 2)],
         grad=True)
    case("nn_utils/pad_sequence_left_batch_first", "nn.utils.rnn.pad_sequence", [rand(2), rand(4), rand(3)],
         kwargs={"batch_first": True, "padding_value": -1.5, "padding_side": "left"}, grad=True)
    case("nn_utils/pad_sequence_empty", "nn.utils.rnn.pad_sequence", [], raises="RuntimeError")
    case("nn_utils/pack_padded_unsorted", "nn.utils.rnn.pack_padded_sequence", rand(4, 3, 2), [2, 4, 1],
         kwargs={"enforce_sorted": False})
    case("nn_utils/pack_padded_batch_first", "nn.utils.rnn.pack_padded_sequence", rand(3, 4, 2), [4, 3, 1],
         kwargs={"batch_first": True, "enforce_sorted": False}, grad=True)
    case("nn_utils/pack_padded_not_sorted", "nn.utils.rnn.pack_padded_sequence", rand(4, 3), [2, 4, 1],
         raises="RuntimeError")
    case("nn_utils/unpad_sequence", "nn.utils.rnn.unpad_sequence", rand(3, 4, 2),
         R.torch.tensor([4, 1, 3]), kwargs={"batch_first": True}, grad=True)
