"""torch.backends.cudnn flags that training scripts set (benchmark, deterministic, allow_tf32):
accepted and without effect, since there is no cuDNN here."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
