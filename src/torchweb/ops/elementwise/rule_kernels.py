"""K.run(name, *operands): how the backward rules (grads.py, and other ops' backwards) run a
table op: the raw kernel (raw.run_args), or, while a backward with create_graph=True runs, the op
under autograd (autograd.call), so that the gradient has a graph of its own. The engine
switches it (double_backward.recording), so the usual backward pays nothing for it.

A leaf: the rules sit below the table, which the runners read, so the package installs the two
runners here (install) once all are loaded."""

from ...autograd import double_backward


class _Kernels:
    __slots__ = ("run",)


K = _Kernels()


def install(raw_run, recorded_run):
    K.run = raw_run
    double_backward.on_recording(lambda recording: setattr(K, "run", recorded_run if recording else raw_run))
