"""convert_conv2d/3d_weight_memory_format: PyTorch converts convolution weights to
channels_last for NHWC kernels. torchweb's convolution lowers to its own im2col + matmul
whatever the weight's layout, so the weights are kept as they are; the functions walk the
module like PyTorch's and return it, so scripts that call them run unchanged."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Returns module; the Conv2d/ConvTranspose2d weights in it keep torchweb's layout."""
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Returns module; the Conv3d/ConvTranspose3d weights in it keep torchweb's layout."""
    for child in module.children():
        convert_conv3d_weight_memory_format(child, memory_format)
    return module
