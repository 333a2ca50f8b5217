"""torch.optim: optimizers (one fused update kernel per parameter and step) and lr_scheduler."""

from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam, RAdam
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "lr_scheduler"]
