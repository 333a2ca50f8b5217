"""The best-of-N timing loop the bench scripts share.

A timing runs `inner` calls and then one sync, so the sync's cost is spread as in a real
program; the best of `repeat` timings is kept, the one least disturbed by the rest of the
machine.
"""

import time


def warm_up(fn, sync, calls=1):
    """Run `fn` before timing it: pipelines compiled, buffers pooled."""
    for _ in range(calls):
        fn()
    sync()


def best_of(fn, sync, repeat, inner):
    """(best time per call of `repeat` timings of `inner` calls and one sync, best host time per
    call before the sync). The second is what recording the calls costs where the device runs
    only at the sync."""
    best = record = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        t1 = time.perf_counter()
        sync()
        best = min(best, time.perf_counter() - t0)
        record = min(record, t1 - t0)
    return best / inner, record / inner


def calls_for_budget(fn, sync, budget, most=50):
    """How many calls of `fn` (at least 1, at most `most`) fill about `budget` seconds, from
    one timed call and sync."""
    one = best_of(fn, sync, 1, 1)[0]
    return max(1, min(most, int(budget / max(one, 1e-6))))
