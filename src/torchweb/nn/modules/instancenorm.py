"""InstanceNorm1d/2d/3d (PyTorch's nn/modules/instancenorm.py): affine=False and
track_running_stats=False by default, unbatched inputs, over F.instance_norm."""

import warnings

from .. import functional as F
from .batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            running_stats_keys = [prefix + name for name in ("running_mean", "running_var")
                                  if prefix + name in state_dict]
            if running_stats_keys:
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. "
                    "If state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} "
                    "does not track running stats by default since 0.4.0. Please remove these keys from "
                    "state_dict. If the running stats are actually needed, instead set "
                    "track_running_stats=True in {klass} to enable them. See the documentation of {klass} "
                    "for details.".format(names=" and ".join(f'"{k}"' for k in running_stats_keys),
                                          klass=self.__class__.__name__))
                for key in running_stats_keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence "
                          "this warning by not passing in num_features, which is not used because "
                          "affine=False", stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


def _make(r):
    no_batch = r + 1

    def _get_no_batch_dim(self):
        return no_batch

    def _check_input_dim(self, input):
        if input.dim() not in (no_batch, no_batch + 1):
            raise ValueError(f"expected {no_batch}D or {no_batch + 1}D input (got {input.dim()}D input)")

    return type(f"InstanceNorm{r}d", (_InstanceNorm,), {
        "__module__": "torchweb.nn", "_get_no_batch_dim": _get_no_batch_dim,
        "_check_input_dim": _check_input_dim,
        "__doc__": f"Instance normalization: each (sample, channel) of a {no_batch + 1}D input (or "
                   f"{no_batch}D unbatched) normalized over its {r} spatial dims."})


InstanceNorm1d = _make(1)
InstanceNorm2d = _make(2)
InstanceNorm3d = _make(3)
