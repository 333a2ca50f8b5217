"""Kernel plans cached by call signature, shared by the row kernels (reduction, softmax,
moments): a call seen before (same shapes, strides, offsets, dtypes, options) reuses its plan
(pipeline id, grid, params bytes) and skips ~25 us of planning."""

from ..runtime import dispatch_head

LIMIT = 4096   # plans held at most: programs with ever new shapes stay bounded


class PlanCache:
    """Plans by signature (False: nothing to compute). Forgotten when what every plan depends on
    changes: the kernel module's FAST settings (tests and bench/bandwidth.py change them), the
    runtime, its grid limit (tests lower it to run the folding paths). rows: the plans are
    dispatch_plan's (pipeline id, grid, params), kept with their DISPATCH rows' heads."""

    def __init__(self, fast, rows=False):
        self.fast = fast
        self.plans = {}
        self.made = None   # (FAST as the plans were made, id(runtime), grid limit)
        self.rows = rows

    def get(self, rt, sig):
        if self.made != (self.fast, id(rt), rt.max_workgroups):   # (one tuple compare, in C)
            self.plans.clear()
            self.made = (dict(self.fast), id(rt), rt.max_workgroups)
        return self.plans.get(sig)

    def put(self, sig, plan):
        """Keep plan; returns it as kept."""
        if len(self.plans) > LIMIT:
            self.plans.clear()
        if self.rows and plan:
            pid, grid, params = plan
            # (its heads binding output and input, or one buffer that is both)
            plan = (pid, grid, params, dispatch_head(pid, grid, 2), dispatch_head(pid, grid, 1))
        self.plans[sig] = plan
        return plan


def dispatch_plan(rt, plan, out_storage, in_storage):
    """Run a plan kept by a PlanCache(rows=True): it binds the output's buffer, then the
    input's unless they share it."""
    if in_storage is out_storage:
        rt.record(plan[4], plan[2], (out_storage.buffer_for_write(), 0, out_storage.size))
    else:
        rt.record(plan[3], plan[2], (out_storage.buffer_for_write(), 0, out_storage.size,
                                     in_storage.buffer_for_read(), 0, in_storage.size))
