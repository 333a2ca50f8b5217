"""Kernel plans cached by call signature, shared by the row kernels (reduction, softmax,
moments): a call seen before (same shapes, strides, offsets, dtypes, options) reuses its plan
(pipeline id, grid, params bytes) and skips ~25 us of planning."""

LIMIT = 4096   # plans held at most: programs with ever new shapes stay bounded


class PlanCache:
    """Plans by signature (False: nothing to compute). Forgotten when what every plan depends on
    changes: the kernel module's FAST settings (tests and bench/bandwidth.py change them), the
    runtime, its grid limit (tests lower it to run the folding paths)."""

    def __init__(self, fast):
        self.fast = fast
        self.plans = {}
        self.made = None   # (FAST as the plans were made, id(runtime), grid limit)

    def get(self, rt, sig):
        if self.made != (self.fast, id(rt), rt.max_workgroups):   # (one tuple compare, in C)
            self.plans.clear()
            self.made = (dict(self.fast), id(rt), rt.max_workgroups)
        return self.plans.get(sig)

    def put(self, sig, plan):
        if len(self.plans) > LIMIT:
            self.plans.clear()
        self.plans[sig] = plan


def dispatch_plan(rt, plan, out_storage, in_storage):
    """Run a plan that binds the output's buffer, then the input's unless they share it."""
    if in_storage is out_storage:
        rt.dispatch(plan[0], plan[1], [(out_storage.buffer_for_write(), out_storage.size)], plan[2])
    else:
        rt.dispatch(plan[0], plan[1], [(out_storage.buffer_for_write(), out_storage.size),
                                       (in_storage.buffer_for_read(), in_storage.size)], plan[2])
