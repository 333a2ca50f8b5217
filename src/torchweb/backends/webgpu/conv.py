"""The webgpu device's convolution, pooling, padding and interpolation primitives
(kernels/im2col.py, kernels/pool.py, kernels/pad.py, kernels/interpolate.py), in the interface backends/cpu_conv.py shares:

    im2col(geom, out, inp, l0=0): out [N, C*K, Lc], the columns of output positions
        l0 .. l0 + Lc - 1 (geom: a backends/plans.py ConvGeometry)
    col2im(geom, out, cols, l0=0, accumulate=False)
    pool(spec, out, indices, inp, nb) / pool_backward(spec, grad_in, grad_out, indices): spec a
        backends/plans.py PoolSpec
    pad(spec, out, inp, nb) / pad_backward(spec, grad_in, grad_out, nb): spec a PadSpec
    interpolate(spec, out, inp, nb) / interpolate_backward(spec, grad_in, grad_out): an InterpolationSpec
    unpool(out, inp, indices, what) / unpool_backward(grad_in, grad_out, indices, what)
    grid_sample(spec, out, inp, grid): spec a GridSampleSpec
    grid_sample_backward(spec, grad_in, grad_grid, grad_out, inp, grid): grad_in a zeroed
        float32 tensor added into (or None), grad_grid written (or None)
"""

from .kernels import grid_sample as _grid, im2col as _im2col, interpolate as _interp, pad as _pad, pool as _pool
from .runtime import get_runtime


def im2col(geom, out, inp, l0=0):
    _im2col.im2col(get_runtime(), out, inp, geom, l0)


def col2im(geom, out, cols, l0=0, accumulate=False):
    acc = "f32" if out.dtype.is_floating_point else "i32"
    _im2col.col2im(get_runtime(), out, cols, geom, acc, l0, accumulate)


def pool(spec, out, indices, inp, nb):
    _pool.forward(get_runtime(), spec, out, indices, inp, nb)


def pool_backward(spec, grad_in, grad_out, indices):
    _pool.backward(get_runtime(), spec, grad_in, grad_out, indices)


def pad(spec, out, inp, nb):
    _pad.forward(get_runtime(), spec.mode, out, inp, nb, spec.pads, spec.value)


def pad_backward(spec, grad_in, grad_out, nb):
    _pad.backward(get_runtime(), spec.mode, grad_in, grad_out, nb, spec.pads)


def interpolate(spec, out, inp, nb):
    _interp.forward(get_runtime(), spec.mode, out, inp, nb, spec.scales, spec.align)


def interpolate_backward(spec, grad_in, grad_out):
    _interp.backward(get_runtime(), spec.mode, grad_in, grad_out, spec.scales, spec.align)


def unpool(out, inp, indices, what):
    _pool.unpool(get_runtime(), out, inp, indices, what)


def unpool_backward(grad_in, grad_out, indices, what):
    _pool.unpool_backward(get_runtime(), grad_in, grad_out, indices, what)


def grid_sample(spec, out, inp, grid):
    _grid.forward(get_runtime(), out, inp, grid, spec.mode, spec.padding_mode, spec.align)


def grid_sample_backward(spec, grad_in, grad_grid, grad_out, inp, grid):
    _grid.backward(get_runtime(), grad_in, grad_grid, grad_out, inp, grid, spec.mode, spec.padding_mode,
                   spec.align)
