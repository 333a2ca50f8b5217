"""Seeded, deterministic random numbers per device: a seed and a call counter feed the
counter-based Philox generator (the same on the cpu and webgpu devices)."""

import random as _pyrandom
from ._device import as_device, CPU, WEBGPU
from .backends import backend_for
from .backends.plans import RandomDraw
from .ops.operands import empty
from .ops import elementwise as E
from ._tensor import Tensor
from ._dtype import uint8

_DEFAULT_SEED = 67280421310721

# Called with the generator before each draw while torch.func.vmap runs (its randomness= rule,
# torchweb/func/_randomness.py); None otherwise.
on_draw = None


class Generator:
    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._seed = _DEFAULT_SEED
        self._calls = 0

    def manual_seed(self, seed):
        self._seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self._calls = 0
        return self

    def seed(self):
        self.manual_seed(_pyrandom.getrandbits(63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return (self._seed, self._calls)

    def set_state(self, state):
        self._seed, self._calls = state

    def next_call(self):
        if on_draw is not None:
            on_draw(self)
        c = self._calls
        self._calls += 1
        return self._seed, c


_generators = {}


def default_generator(device):
    g = _generators.get(device.type)
    if g is None:
        g = _generators[device.type] = Generator(device)
    return g


def manual_seed(seed):
    """Seeds every device's generator, as torch.manual_seed does."""
    for d in (CPU, WEBGPU):
        default_generator(d).manual_seed(seed)
    return default_generator(CPU)


def seed():
    s = _pyrandom.getrandbits(63)
    manual_seed(s)
    return s


def initial_seed():
    return default_generator(CPU).initial_seed()


def fill(t, kind, a, b, generator=None):
    """Fill t in place with random values of `kind` (see kernels/random.py)."""
    g = generator or default_generator(t.device)
    seed_, call = g.next_call()
    target = t if t.is_contiguous() else empty(t.shape, t.dtype, t.device)
    # (redraw: a captured call's replay draws its next counter from g, as an eager call does)
    backend_for(t.device.type).random(RandomDraw(kind, a, b, seed_, call, g.next_call), target)
    if target is not t:
        E.copy_into(t, target)
    t._bump_version()
    return t


def sample(kind, out, params, generator=None):
    """Fill contiguous float32 out with draws of `kind` (gamma, poisson, binomial) at the
    elements of params (float32 tensors of out's numel), by the backend's rejection samplers
    (backends/base.py random_sample). One call of the generator, whatever the number of tries:
    element i's r-th try reads the Philox block at counter (i, call, r, 0)."""
    g = generator or default_generator(out.device)
    seed_, call = g.next_call()
    backend_for(out.device.type).random_sample(RandomDraw(kind, None, None, seed_, call, g.next_call), out, params)
    out._bump_version()
    return out


def permutation(n, generator=None, device=None):
    """randperm's order: a Fisher-Yates shuffle driven by the generator's seed and call."""
    g = generator or default_generator(as_device(device))
    seed_, call = g.next_call()
    rng = _pyrandom.Random(seed_ * 1000003 + call)
    order = list(range(n))
    rng.shuffle(order)
    return order


def get_rng_state():
    """torch.get_rng_state: the default generators' state as a uint8 tensor (the seed and the
    call counter of the cpu and the webgpu generator, 32 bytes; PyTorch's CPU generator has a
    larger state, and its CUDA one is torch.cuda.get_rng_state)."""
    data = b""
    for d in (CPU, WEBGPU):
        s, c = default_generator(d).get_state()
        data += s.to_bytes(8, "little") + c.to_bytes(8, "little")
    values = list(data)   # (a tensor made from its storage: _creation is above this module)
    return Tensor._make(backend_for("cpu").storage_from_values(values, uint8), (len(values),),
                        None, 0, uint8, CPU)


def set_rng_state(new_state):
    """Restores the state get_rng_state returned."""
    data = bytes(new_state.tolist())
    if len(data) != 32:
        raise RuntimeError(f"RNG state is wrong size: expected 32 bytes (a torchweb state from "
                           f"torch.get_rng_state()), got {len(data)}")
    for i, d in enumerate((CPU, WEBGPU)):
        part = data[16 * i:16 * i + 16]
        default_generator(d).set_state((int.from_bytes(part[:8], "little"), int.from_bytes(part[8:], "little")))
