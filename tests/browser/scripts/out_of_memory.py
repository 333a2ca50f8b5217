# Out of memory (issue 22, item 3): a size past the adapter's largest buffer, and a buffer the
# device fails to create, raise torch.OutOfMemoryError (a RuntimeError) with the sizes, and the
# device computes on after; empty_cache() gives the pool's free buffers back. Recorded with
# PyTorch on the CPU, where the first allocation fails with its own RuntimeError.
import gc

import torch

result = {}
on_gpu = hasattr(torch, "webgpu")   # torchweb in the page (the default device is the GPU)

try:
    torch.empty(1 << 42)   # 16 TiB of float32
    result["huge_refused"] = False
except RuntimeError as e:
    ok = isinstance(e, torch.OutOfMemoryError) and "Tried to allocate 16384.00 GiB" in str(e) if on_gpu else True
    result["huge_refused"] = ok
x = torch.arange(12, dtype=torch.float32)
result["after_huge"] = (x * 2).sum().item()

if on_gpu:
    # the page's driver reports the next flush's creations out of memory (a test hook: a real
    # one needs the browser's memory filled), found by the flush's error scope at the readback
    from torchweb.backends.webgpu.driver_browser import _MODULE
    _MODULE[0].setFailNextCreations(1)
    big = torch.ones(1 << 20) * 3
    try:
        big.sum().item()
        result["device_oom"] = "not raised"
    except torch.OutOfMemoryError as e:
        result["device_oom"] = isinstance(e, RuntimeError) and "Tried to allocate" in str(e)
    # big's buffer was given up with the flush's: reading it (or what is computed from it)
    # raises, naming the out of memory, instead of a blank buffer's zeros
    unwritten = []
    for victim in (lambda: big.tolist(), lambda: (big + 1).sum().item()):
        try:
            victim()
            unwritten.append("read")
        except torch.OutOfMemoryError:
            unwritten.append("out of memory again")
        except RuntimeError as e:
            unwritten.append("never computed: an earlier out of memory" in str(e) and "Tried to allocate" in str(e))
    result["unwritten_raises"] = unwritten == [True, True] or unwritten
    del big
    # a big buffer (16 MiB and more) is made at the op that needs it, in its own error scope
    # waited on (JSPI): out of memory raises there, after the pool was freed and it was retried
    _MODULE[0].setFailNextCreations(2, 16 << 20)
    big = torch.ones(1 << 22) * 3
    try:
        torch.webgpu.synchronize()   # big's values are written: its buffer is needed now
        result["big_oom_at_op"] = "not raised"
    except torch.OutOfMemoryError as e:
        result["big_oom_at_op"] = ("Tried to allocate 16.00 MiB" in str(e) and "tried again" in str(e)
                                   and "readback" not in str(e))
    del big
else:
    result["device_oom"] = result["big_oom_at_op"] = result["unwritten_raises"] = True
# computing goes on, the given-up buffers made again when their ids come back
for k in range(3):
    y = torch.ones(1 << 20) * (k + 1)
    result[f"after_oom_{k}"] = y.sum().item()

tmp = [torch.ones(1 << 18) + i for i in range(4)]
result["tmp_sum"] = sum(t.sum().item() for t in tmp)
del tmp
gc.collect()
if on_gpu:
    reserved = torch.webgpu.memory_reserved()
    torch.webgpu.empty_cache()
    result["empty_cache_frees"] = (torch.webgpu.memory_reserved() == torch.webgpu.memory_allocated()
                                   and torch.webgpu.memory_reserved() < reserved)
else:
    result["empty_cache_frees"] = True
result["final"] = (x + 1).sum().item()
