"""torch.optim: optimizers (one fused update kernel per parameter and step where the update is
elementwise; Muon's Newton-Schulz iteration between two), lr_scheduler and swa_utils."""

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam, RAdam
from .rprop import Rprop
from .asgd import ASGD
from .sparse_adam import SparseAdam
from .adafactor import Adafactor
from .lbfgs import LBFGS
from .muon import Muon
from ._stateless import swap_in_optimizer_params_and_state
from . import lr_scheduler, swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "Rprop", "ASGD", "SparseAdam", "Adafactor", "LBFGS", "Muon",
           "swap_in_optimizer_params_and_state", "lr_scheduler", "swa_utils"]
