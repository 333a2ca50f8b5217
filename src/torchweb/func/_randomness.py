"""vmap's randomness= rule, as scopes around the code that may draw.

Every random draw passes through Generator.next_call, which calls `_random.on_draw` while a
scope is open; the innermost scope rules. 'error' raises PyTorch's error at the first draw;
'different' lets each entry draw on (every entry gets its own numbers, as PyTorch's batched
draw does); 'same', around a loop over the entries, puts each generator the code draws from
back to the state it had before the first entry's draw, so every entry sees the same numbers
and the generator ends as after one unbatched call. func/_random_ops.py says which scope a
random op runs in."""

from .. import _random

_ALLOWED = ("error", "different", "same")
_scopes = []          # the running vmaps' scopes, outermost first


def check(randomness):
    if randomness not in _ALLOWED:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _on_draw(generator):
    if _scopes:
        _scopes[-1].saw(generator)


class RandomnessScope:
    def __init__(self, randomness):
        check(randomness)
        self.randomness = randomness
        self.states = {}       # generator -> its state before the first entry drew from it

    def __enter__(self):
        _scopes.append(self)
        _random.on_draw = _on_draw
        return self

    def __exit__(self, *exc):
        _scopes.remove(self)
        if not _scopes:
            _random.on_draw = None
        return False

    def saw(self, generator):
        if self.randomness == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                               "use the 'same' or 'different' randomness flags on vmap or perform the "
                               "randomness operation out of vmap")
        if self.randomness == "same" and generator not in self.states:
            self.states[generator] = generator.get_state()

    def next_entry(self):
        """Called before each batch entry but the first."""
        for generator, state in self.states.items():
            generator.set_state(state)
