"""nn's layer classes, one file per family (PyTorch's layout)."""

from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403

# Layers most models never use load on first use (torchweb/_deferred.py): import time in Pyodide.
# Each list is its module's __all__ (tests/test_deferred_imports.py checks that they agree).
from ..._deferred import deferred as _deferred, deferred_star as _star  # noqa: E402
_DEFERRED = {
    **_star(".rnn", ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]),
    **_star(".transformer", ["Transformer", "TransformerEncoder", "TransformerDecoder",
                             "TransformerEncoderLayer", "TransformerDecoderLayer"]),
    **_star(".multihead_attention", ["MultiheadAttention"]),
    **_star(".adaptive", ["AdaptiveLogSoftmaxWithLoss"]),
    **_star(".fold", ["Fold", "Unfold"]),
    **_star(".pixelshuffle", ["PixelShuffle", "PixelUnshuffle"]),
    **_star(".channelshuffle", ["ChannelShuffle"]),
    **_star(".lazy", ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
                      "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
                      "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
                      "LazyInstanceNorm2d", "LazyInstanceNorm3d"]),
    "LinearCrossEntropyOptions": ".linear_cross_entropy_options:LinearCrossEntropyOptions",
}
_DEFERRED.update({m: "." + m for m in ("rnn", "transformer", "multihead_attention", "adaptive", "fold",
                                        "pixelshuffle", "channelshuffle", "lazy", "linear_cross_entropy_options")})
__getattr__, __dir__ = _deferred(__name__, globals(), _DEFERRED)
