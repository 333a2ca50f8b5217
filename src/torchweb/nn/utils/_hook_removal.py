"""Undoing a reparametrization installed as a forward pre-hook (prune, weight_norm,
spectral_norm): the three remove functions differ only in which hook is theirs."""


def remove_forward_pre_hook(module, is_it):
    """Undoes (hook.remove(module)) and unregisters the first forward pre-hook of module for
    which is_it(hook); whether there was one."""
    for k, hook in module._forward_pre_hooks.items():
        if is_it(hook):
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return True
    return False
