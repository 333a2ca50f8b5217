"""How torch.func's differentiating transforms nest, on top of ordinary reverse-mode autograd.

Each grad / vjp / jvp / jacrev call is a *level* with a unique id. Its differentiable inputs
become fresh leaves tagged with that id (`_func_level`), or differentiable views where something
outside tracks them already. After the function ran, one walk of the output's graph decides
whether anything outside the level can still differentiate the result: a leaf of an enclosing
level that is still running, or (when the outermost transform started with grad mode on) a
user's tensor that requires grad. Only then are the gradients computed with create_graph=True
and left attached, which is what makes grad(grad(f)), jacfwd(jacrev(f)) and a MAML inner step
differentiable, while a lone grad(f)(x) returns plain tensors as PyTorch's does.
"""

from ..autograd import grad_mode
from ..autograd.function import AccumulateGrad

_active = []                       # ids of the levels running now, outermost first
_state = {"next": 1, "user_grad": True}


class Level:
    """A context manager: `with Level() as level:` runs one transform's forward."""

    def __enter__(self):
        if not _active:
            _state["user_grad"] = grad_mode.is_grad_enabled()
        self.id = _state["next"]
        _state["next"] += 1
        self.outer_grad = grad_mode.is_grad_enabled()
        _active.append(self.id)
        self._grad = grad_mode.enable_grad()
        self._grad.__enter__()
        return self

    def __exit__(self, *exc):
        self._grad.__exit__(*exc)
        _active.remove(self.id)
        return False

    def differentiable(self, x):
        """x as this level's input: a view of x where an outer level or the user's autograd
        tracks x (gradients then reach them too), else a fresh leaf tagged with this level."""
        if x.requires_grad and self.outer_grad:
            return x.view_as(x)
        w = x.detach().requires_grad_(True)
        w._func_level = self.id
        return w

    def tracked_outside(self, tensors):
        """Whether anything outside this level can differentiate these tensors."""
        stack, seen = [], set()
        for t in tensors:
            if t.grad_fn is not None:
                stack.append(t.grad_fn)
            elif t.requires_grad and self._outside(t):
                return True
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is AccumulateGrad:
                if self._outside(node.variable):
                    return True
                continue
            stack.extend(n for n, _ in node.next_functions if n is not None)
        return False

    def _outside(self, leaf):
        tag = leaf.__dict__.get("_func_level")
        if tag is None:
            return _state["user_grad"]
        return tag != self.id and tag in _active
