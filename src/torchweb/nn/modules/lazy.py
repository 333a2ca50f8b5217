"""Lazy modules (PyTorch's nn/modules/lazy.py and the Lazy* layers): the input size is left out
of the constructor, parameters start as UninitializedParameter, and the first forward infers
the size, materializes and initializes them, and turns the module into its plain class
(LazyLinear -> Linear). A state_dict of the plain module loads into a lazy one."""

import itertools

from ... import _creation
from ... import _dtype as D
from ...autograd import grad_mode
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A forward pre-hook calls initialize_parameters(*input) once, then removes itself and
    turns the module into cls_to_become."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # uninitialized tensors are saved as they are (they cannot be detached)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materializes the uninitialized tensors a state_dict has real values for."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with grad_mode.no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


# -- Linear ------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """nn.Linear with in_features inferred from the first input's last dim."""

    __module__ = "torchweb.nn"
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(0, 0, False)       # no bias yet: it is made uninitialized below
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# -- convolutions ------------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    _spatial = 0

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._spatial + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._spatial


def _lazy_conv(r, plain):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        # (through LazyModuleMixin.__init__ to the plain class's; no bias yet)
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                 **factory_kwargs)
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)
    return __init__


def _lazy_conv_transpose(r, plain):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                                 dilation, padding_mode, **factory_kwargs)
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)
    return __init__


def _make_lazy_conv(plain, r, make_init):
    name = "Lazy" + plain.__name__
    return type(name, (_LazyConvXdMixin, plain), {
        "__module__": "torchweb.nn", "cls_to_become": plain, "_spatial": r, "__init__": make_init(r, plain),
        "__doc__": f"nn.{plain.__name__} with in_channels inferred from the first input."})


LazyConv1d = _make_lazy_conv(Conv1d, 1, _lazy_conv)
LazyConv2d = _make_lazy_conv(Conv2d, 2, _lazy_conv)
LazyConv3d = _make_lazy_conv(Conv3d, 3, _lazy_conv)
LazyConvTranspose1d = _make_lazy_conv(ConvTranspose1d, 1, _lazy_conv_transpose)
LazyConvTranspose2d = _make_lazy_conv(ConvTranspose2d, 2, _lazy_conv_transpose)
LazyConvTranspose3d = _make_lazy_conv(ConvTranspose3d, 3, _lazy_conv_transpose)


# -- batch and instance norm -------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None,
                 *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        # affine and running stats off: their tensors are made uninitialized below
        super().__init__(0, eps, momentum, False, False, **factory_kwargs, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(**factory_kwargs)
            if bias:
                self.bias = UninitializedParameter(**factory_kwargs)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(**factory_kwargs)
            self.running_var = UninitializedBuffer(**factory_kwargs)
            self.num_batches_tracked = _creation.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _make_lazy_norm(plain, base):
    return type("Lazy" + plain.__name__, (_LazyNormBase, base), {
        "__module__": "torchweb.nn", "cls_to_become": plain, "_check_input_dim": plain._check_input_dim,
        **({"_get_no_batch_dim": plain._get_no_batch_dim} if base is _InstanceNorm else {}),
        "__doc__": f"nn.{plain.__name__} with num_features inferred from the first input's dim 1."})


LazyBatchNorm1d = _make_lazy_norm(BatchNorm1d, _BatchNorm)
LazyBatchNorm2d = _make_lazy_norm(BatchNorm2d, _BatchNorm)
LazyBatchNorm3d = _make_lazy_norm(BatchNorm3d, _BatchNorm)
LazyInstanceNorm1d = _make_lazy_norm(InstanceNorm1d, _InstanceNorm)
LazyInstanceNorm2d = _make_lazy_norm(InstanceNorm2d, _InstanceNorm)
LazyInstanceNorm3d = _make_lazy_norm(InstanceNorm3d, _InstanceNorm)
