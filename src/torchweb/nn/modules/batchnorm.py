"""BatchNorm1d/2d/3d (PyTorch's nn/modules/batchnorm.py): weight 1 and bias 0 at init,
running_mean/running_var/num_batches_tracked buffers, momentum=None for a cumulative moving
average, track_running_stats=False (batch statistics in eval too), affine=False, over
F.batch_norm."""

from ... import _creation
from ... import _dtype as D
from .. import functional as F
from ...autograd import grad_mode
from ._optional import affine_parameters, reset_affine
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _NormBase(Module):
    """Common base of _BatchNorm and _InstanceNorm."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        affine_parameters(self, num_features, affine, bias, factory_kwargs)
        if self.track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **factory_kwargs))
            self.register_buffer("running_var", _creation.ones(num_features, **factory_kwargs))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=D.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with grad_mode.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}").format(**self.__dict__,
                                                                    use_bias=self.bias is not None)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # checkpoints from before num_batches_tracked existed
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else _creation.tensor(0, dtype=D.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    # (_NormBase's constructor: the same arguments and defaults)
    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                with grad_mode.no_grad():
                    self.num_batches_tracked.add_(1)
                if self.momentum is None:  # cumulative moving average (reads the count back)
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:
                    exponential_average_factor = self.momentum
        # batch statistics in training, and in eval when there are no running statistics
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias,
                            bn_training, exponential_average_factor, self.eps)


def _dims_check(name, allowed, text):
    def _check_input_dim(self, input):
        if input.dim() not in allowed:
            raise ValueError(f"expected {text} input (got {input.dim()}D input)")
    return _check_input_dim


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input, per channel C."""

    __module__ = "torchweb.nn"
    _check_input_dim = _dims_check("BatchNorm1d", (2, 3), "2D or 3D")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input, per channel C."""

    __module__ = "torchweb.nn"
    _check_input_dim = _dims_check("BatchNorm2d", (4,), "4D")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input, per channel C."""

    __module__ = "torchweb.nn"
    _check_input_dim = _dims_check("BatchNorm3d", (5,), "5D")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm whose statistics PyTorch synchronizes across the processes of a process group.
    A web page is one process (torch.distributed is not available), which is PyTorch's
    world-size-1 case: the batch's own statistics, as BatchNorm computes them."""

    __module__ = "torchweb.nn"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm holding the same state."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
