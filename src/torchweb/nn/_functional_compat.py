"""The non-op names of torch.nn.functional that code written against it imports: the
__torch_function__ protocol helpers (torchweb tensors have no __torch_function__ overrides, so
has_torch_function* answer False and handle_torch_function calls the function), boolean_dispatch
and assert_int_or_pair (the helpers F builds its return_indices forms with), the
BroadcastingList annotations, the grid_sample mode tables and the docstring note tables."""

__all__ = ["BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "DType", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES", "assert_int_or_pair", "boolean_dispatch", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "reproducibility_notes",
           "sparse_support_notes", "tf32_notes"]


def has_torch_function(relevant_args):
    """False: no torchweb tensor overrides __torch_function__."""
    return False


def has_torch_function_unary(arg):
    """False: no torchweb tensor overrides __torch_function__."""
    return False


def has_torch_function_variadic(*args):
    """False: no torchweb tensor overrides __torch_function__."""
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """public_api(*args, **kwargs): there is no override to hand the call to."""
    return public_api(*args, **kwargs)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false by the boolean argument arg_name (at position
    arg_index, default `default`), as F.max_pool2d picks its return_indices form."""
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = doc = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = doc = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    """AssertionError(message.format(arg_name)) unless arg is an int or has two elements."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


class _BroadcastingList:
    """TorchScript's BroadcastingListN[T] annotations: subscripting gives None eagerly."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()
DType = int

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

# the note tables F's docstrings are formatted with (torch/_torch_docs.py)
tf32_notes = {"tf32_note": "This operator supports TensorFloat32 on CUDA; torchweb computes in float32."}
reproducibility_notes = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when given tensors on a "
                                    "CUDA device. See the notes on randomness for more information.",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients when given tensors "
                                     "on a CUDA device. See the notes on randomness for more information.",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device and using CuDNN, "
                                  "this operator may select a nondeterministic algorithm to increase "
                                  "performance.",
}
sparse_support_notes = {"sparse_beta_warning": "\n.. warning::\n    Sparse support is a beta feature and some "
                                               "layout(s)/dtype/device combinations may not be supported, or "
                                               "may not have autograd support."}
