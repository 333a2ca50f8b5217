# The `torchvision` package as the corpus programs import it: models from the vendored
# torchvision model files, datasets/transforms/utils from torchvision_shims.py.
import types

from torchvision_shims import datasets, transforms, utils  # noqa: F401
import torchvision_models_resnet as _resnet

models = types.SimpleNamespace(resnet18=_resnet.resnet18, resnet34=_resnet.resnet34,
                               resnet50=_resnet.resnet50, ResNet=_resnet.ResNet)
ops = None
