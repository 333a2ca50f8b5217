"""torch.optim: optimizers (one fused update kernel per parameter and step where the update is
elementwise; Muon's Newton-Schulz iteration between two), lr_scheduler and swa_utils."""

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .._deferred import deferred as _deferred

# The less common optimizers, lr_scheduler and swa_utils load on first use (torchweb/_deferred.py)
__getattr__, __dir__ = _deferred(__name__, globals(), {
    "RMSprop": ".rmsprop:RMSprop", "Adagrad": ".adagrad:Adagrad", "Adadelta": ".adadelta:Adadelta",
    "Adamax": ".adamax:Adamax", "NAdam": ".nadam:NAdam", "RAdam": ".nadam:RAdam", "Rprop": ".rprop:Rprop",
    "ASGD": ".asgd:ASGD", "SparseAdam": ".sparse_adam:SparseAdam", "Adafactor": ".adafactor:Adafactor",
    "LBFGS": ".lbfgs:LBFGS", "Muon": ".muon:Muon",
    "swap_in_optimizer_params_and_state": "._stateless:swap_in_optimizer_params_and_state",
    "lr_scheduler": ".lr_scheduler", "swa_utils": ".swa_utils",
})

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "Rprop", "ASGD", "SparseAdam", "Adafactor", "LBFGS", "Muon",
           "swap_in_optimizer_params_and_state", "lr_scheduler", "swa_utils"]
