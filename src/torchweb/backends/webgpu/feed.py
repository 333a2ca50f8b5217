"""When to hand recorded work to the GPU before anything asks for it: flush as the GPU is about
to run dry, with enough work queued to be worth a flush.

A flush costs the host tens of microseconds (wgpu-native's encoder finish and submit on an
H100's host: ~45 us, more a dispatch), as long as a mid-size kernel runs: flushing every call
makes the host the bottleneck, flushing only at the sync leaves the GPU idle while Python
records. The estimate: the GPU runs `rate` bytes of work a second (work: runtime.dispatch's
bytes bound, or a matmul's flops / 16), measured as a lower bound at each wait that follows
enough work (its true rate is at least the work done over the time it took), starting slow so
that an unmeasured GPU is flushed as before. The runtime flushes when the queued work would
take the GPU at least one flush's time and the GPU's submitted work ends within one flush.
"""

FEED_GPU = True               # off: flush only by the runtime's size and time rules
RATE_START = 20e9             # bytes of work a second before a wait has measured the GPU
CALIBRATE_BYTES = 64 << 20    # a wait after at least this much work measures the rate
FLUSH_COST_START = 100e-6     # seconds of host time a flush is taken to cost before measured


class Feed:
    __slots__ = ("rate", "flush_cost", "busy_until", "busy_since", "busy_work", "min_bytes")

    def __init__(self, min_bytes):
        self.rate = RATE_START
        self.flush_cost = FLUSH_COST_START
        self.busy_until = 0.0   # when the submitted work should be done, at `rate`
        self.busy_since = 0.0   # when the first flush since the GPU was last idle returned
        self.busy_work = 0      # work submitted since then
        self.min_bytes = min_bytes

    def due(self):
        """(bytes, time): flush once the queued work reaches `bytes` and the clock `time`."""
        if not FEED_GPU:
            return 1 << 62, 0.0
        cost = self.flush_cost
        return max(self.min_bytes, int(cost * self.rate)), self.busy_until - cost

    def flushed(self, work, t0, t1):
        """A flush of `work` bytes took the host from t0 to t1; the next due()."""
        self.flush_cost += (t1 - t0 - self.flush_cost) * 0.25
        if not self.busy_work:
            self.busy_since = t1
        self.busy_work += work
        self.busy_until = max(t1, self.busy_until) + work / self.rate
        return self.due()

    def idle(self, t):
        """The GPU had finished all submitted work when a wait or readback returned at t."""
        if self.busy_work >= CALIBRATE_BYTES and t > self.busy_since:
            rate = self.busy_work / (t - self.busy_since)
            if rate > self.rate:
                self.rate = rate
        self.busy_work = 0
        self.busy_until = 0.0
        return self.due()
