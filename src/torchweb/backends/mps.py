"""torch.backends.mps (PyTorch's flags module of that name; unrelated to torchweb's own
compute backends in this package): there is no Metal device here."""


def is_available():
    return False


def is_built():
    return False
