"""How the native driver turns a flush into GPU commands: one Encoding per flush (or replay).

Two implementations of the same four calls (dispatch, copy, write, submit):
- CEncoding: wgpu-native's C functions directly. wgpu-py wraps every call in Python (error
  capture, descriptor structs: 2-15 us a call on an H100's host); a flush's fixed calls took
  ~60 us that way. Validation errors of a pass or a copy surface when the encoder finishes, and
  finish and submit still go through wgpu-py's error-capturing wrappers, so they still raise.
- PyEncoding: wgpu-py's public methods, where its internals are not as CEncoding expects.

A long program is submitted every SUBMIT_EVERY dispatches, so that the GPU starts on the first
kernels while the CPU encodes the rest (a captured GPT step: ~900 dispatches).
"""

SUBMIT_EVERY = 64


class CCalls:
    """The C entry points, resolved once; raises AttributeError/ImportError where absent."""

    def __init__(self, device):
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        from wgpu.backends.wgpu_native._api import libf
        self.ffi, self.null = ffi, ffi.NULL
        self.device, self.queue = device._internal, device.queue._internal
        self.create_encoder = lib.wgpuDeviceCreateCommandEncoder
        self.begin_pass = lib.wgpuCommandEncoderBeginComputePass
        self.set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        self.set_group = lib.wgpuComputePassEncoderSetBindGroup
        self.dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self.end_pass = lib.wgpuComputePassEncoderEnd
        self.release_pass = lib.wgpuComputePassEncoderRelease
        self.copy = lib.wgpuCommandEncoderCopyBufferToBuffer
        self.release_encoder = lib.wgpuCommandEncoderRelease
        self.release_commands = lib.wgpuCommandBufferRelease
        self.write = lib.wgpuQueueWriteBuffer
        self.finish = libf.wgpuCommandEncoderFinish    # (error-capturing: raises)
        self.submit = libf.wgpuQueueSubmit
        self.offsets = ffi.new("uint32_t[16]")
        self.commands = ffi.new("WGPUCommandBuffer[1]")


class CEncoding:
    def __init__(self, c):
        self.c = c
        self.encoder = self.cpass = None
        self.queued = 0
        self.pipeline = self.group = self.offset = None   # what the pass has set (handles)

    @staticmethod
    def handle(obj):
        """What dispatch_one takes for a pipeline or bind group: its C handle."""
        return obj._internal

    def _begin(self):
        c = self.c
        if self.encoder is None:
            self.encoder = c.create_encoder(c.device, c.null)
        cpass = self.cpass = c.begin_pass(self.encoder, c.null)
        return cpass

    def dispatch(self, pipeline, group, offsets, x, y, z):
        """A dispatch of any layout: its dynamic offsets as given."""
        c = self.c
        cpass = self.cpass or self._begin()
        c.set_pipeline(cpass, pipeline._internal)
        buf = c.offsets
        n = 0
        for v in offsets:
            buf[n] = v
            n += 1
        c.set_group(cpass, 0, group._internal, n, buf)
        self.pipeline = self.group = None   # (the next dispatch_one sets its own)
        c.dispatch(cpass, x, y, z)
        self.queued += 1
        if self.queued >= SUBMIT_EVERY:
            self.submit()

    def dispatch_one(self, offset, pipeline, group, x, y, z):
        """A dispatch of the runtime's layout (one dynamic offset: its params uniform's);
        pipeline and group as handle() gives them. A pass keeps its pipeline and bind group
        between dispatches: a loop of one op (equal uniforms share a slot, runtime.SHARE_PARAMS)
        sets them once."""
        c = self.c
        cpass = self.cpass or self._begin()
        if pipeline is not self.pipeline:
            c.set_pipeline(cpass, pipeline)
            self.pipeline = pipeline
        if group is not self.group or offset != self.offset:
            c.offsets[0] = offset
            c.set_group(cpass, 0, group, 1, c.offsets)
            self.group, self.offset = group, offset
        c.dispatch(cpass, x, y, z)
        self.queued += 1
        if self.queued >= SUBMIT_EVERY:
            self.submit()

    def _end_pass(self):
        if self.cpass is not None:
            self.c.end_pass(self.cpass)
            self.c.release_pass(self.cpass)
            self.cpass = None
            self.pipeline = self.group = self.offset = None

    def copy(self, src, src_off, dst, dst_off, nbytes):
        c = self.c
        self._end_pass()
        if self.encoder is None:
            self.encoder = c.create_encoder(c.device, c.null)
        c.copy(self.encoder, src._internal, src_off, dst._internal, dst_off, nbytes)

    def write(self, buffer, offset, data):
        # writeBuffer runs on the queue timeline: what came before it is submitted first
        self.submit()
        c = self.c
        c.write(c.queue, buffer._internal, offset, c.ffi.from_buffer(data), len(data))

    def submit(self):
        self._end_pass()
        encoder, self.encoder, self.queued = self.encoder, None, 0
        if encoder is None:
            return
        c = self.c
        try:
            commands = c.finish(encoder, c.null)
        finally:
            c.release_encoder(encoder)
        try:
            c.commands[0] = commands
            c.submit(c.queue, 1, c.commands)
        finally:
            c.release_commands(commands)


class PyEncoding:
    def __init__(self, device):
        self.device, self.queue = device, device.queue
        self.encoder = self.cpass = None
        self.queued = 0

    @staticmethod
    def handle(obj):
        return obj

    def dispatch_one(self, offset, pipeline, group, x, y, z):
        self.dispatch(pipeline, group, (offset,), x, y, z)

    def dispatch(self, pipeline, group, offsets, x, y, z):
        if self.cpass is None:
            self.encoder = self.encoder or self.device.create_command_encoder()
            self.cpass = self.encoder.begin_compute_pass()
        self.cpass.set_pipeline(pipeline)
        self.cpass.set_bind_group(0, group, offsets)
        self.cpass.dispatch_workgroups(x, y, z)
        self.queued += 1
        if self.queued >= SUBMIT_EVERY:
            self.submit()

    def copy(self, src, src_off, dst, dst_off, nbytes):
        if self.cpass is not None:
            self.cpass.end()
            self.cpass = None
        self.encoder = self.encoder or self.device.create_command_encoder()
        self.encoder.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)

    def write(self, buffer, offset, data):
        self.submit()
        self.queue.write_buffer(buffer, offset, data)

    def submit(self):
        if self.cpass is not None:
            self.cpass.end()
            self.cpass = None
        if self.encoder is not None:
            self.queue.submit([self.encoder.finish()])
            self.encoder = None
        self.queued = 0


def encoding_factory(device):
    """A callable making a fresh Encoding for each flush: the C one where possible."""
    try:
        c = CCalls(device)
    except (ImportError, AttributeError):
        return lambda: PyEncoding(device)
    return lambda: CEncoding(c)
