"""numpy, an optional dependency (Pyodide on these machines has none): loaded at first use, with
an error that says how to get it."""

_np = [None]


def np():
    m = _np[0]
    if m is None:
        try:
            import numpy as m
        except ImportError:
            raise RuntimeError(
                "torchweb's cpu device needs numpy, which is not installed. Install it "
                "(pip install numpy; in Pyodide: await pyodide.loadPackage('numpy')) or keep "
                "tensors on the webgpu device") from None
        _np[0] = m
    return m
