"""TorchVersion: PyTorch's version string that compares as a version ("2.13.0" > "2.2"), with
strings, tuples ((2, 0)) and packaging's Version objects, as torch.torch_version.TorchVersion.
PEP 440 ordering, written here: packaging is not a dependency (nor in Pyodide by default)."""

import re

__all__ = ["TorchVersion"]

_PATTERN = re.compile(
    r"^\s*v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|rc|c|pre|preview)[-_.]?(?P<pre_n>\d*))?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n2>\d*))?"
    r"(?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.IGNORECASE)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "rc": 2, "c": 2, "pre": 2, "preview": 2}


class _InvalidVersion(ValueError):
    pass


def _key(text):
    """A tuple that orders versions as PEP 440 (and packaging.version.Version) does."""
    m = _PATTERN.match(str(text))
    if m is None:
        raise _InvalidVersion(text)
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    post = m["post_n1"] or (m["post_n2"] or "0" if m["post"] else None)
    if m["pre"]:
        pre = (1, _PRE[m["pre"].lower()], int(m["pre_n"] or 0))
    else:
        pre = (0,) if post is None and m["dev"] else (2,)   # a bare .dev sorts before pre-releases
    local = ()
    if m["local"]:
        local = tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower())
                      for p in re.split(r"[-_.]", m["local"]))
    return (tuple(release), pre, (0,) if post is None else (1, int(post)),
            (0, int(m["dev_n"] or 0)) if m["dev"] else (1,), (1, local) if local else (0,))


class TorchVersion(str):
    """A str that compares as a version: TorchVersion("2.13.0") >= "2.0", > (2, 1),
    == packaging.version.Version("2.13")."""

    __slots__ = ()

    @staticmethod
    def _other(other):
        if isinstance(other, str):
            return _key(other)
        if hasattr(other, "release") and hasattr(other, "local"):   # packaging's Version
            return _key(str(other))
        if isinstance(other, (tuple, list)):
            return _key(".".join(str(p) for p in other))
        raise _InvalidVersion(other)

    def _compare(self, other, op, fallback):
        try:
            return op(_key(self), self._other(other))
        except _InvalidVersion:
            return fallback(self, other)   # not a version ('parrot'): compare as strings

    def __eq__(self, other):
        return self._compare(other, lambda a, b: a == b, str.__eq__)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b, str.__lt__)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b, str.__le__)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b, str.__gt__)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b, str.__ge__)

    # != stays str's, as in PyTorch's TorchVersion (which defines == but not !=)
    __hash__ = str.__hash__
