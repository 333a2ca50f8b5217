"""torch.save / torch.load (PyTorch's zip checkpoint format) and safetensors.

    torchweb.save(obj, f)                        writes what torch.load(f, weights_only=True) reads
    torchweb.load(f, map_location=None, ...)     reads what torch.save writes, through a
                                                 restricted unpickler (unpickler.py)

docs/checkpoints.md describes the formats, the allow-list and what is refused.
"""

import io
import os
import pickle
import warnings

from .map_location import resolver


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """torch.save: obj (tensors, Parameters, state_dicts, nested dicts/lists/tuples, numbers,
    strings) into PyTorch's zip format at f (a path or a writable file object). Tensors keep
    their storage sharing, offsets and strides; every storage is recorded at location "cpu"
    (the one place any PyTorch can load it). pickle_module and pickle_protocol are accepted for
    PyTorch's signature; the pickle is always protocol 2, as torch.save writes it."""
    if pickle_module is not None:
        raise TypeError("torchweb.save writes its own pickle (it never imports the objects it names); "
                        "pickle_module is not supported")
    if not _use_new_zipfile_serialization:
        raise RuntimeError("torchweb.save writes only the zip format (PyTorch 1.6 and later); the "
                           "legacy format (_use_new_zipfile_serialization=False) is not supported")
    from .zipfile_format import write_archive  # deferred: load time (zipfile and the archive code on first use)
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.path.abspath(os.fspath(f)))
        if not os.path.isdir(parent):   # PyTorch's check and message
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        buf = io.BytesIO()
        write_archive(buf, name, obj)
        with open(f, "wb") as out:
            out.write(buf.getbuffer())
        return
    if not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute "
                             f"(got {type(f).__name__})")
    buf = io.BytesIO()
    write_archive(buf, "archive", obj)
    f.write(buf.getbuffer())


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """torch.load: the object a torch.save checkpoint holds (f: a path, a file object or bytes).

    The pickle is read by a restricted unpickler (PyTorch's weights_only rule): tensors,
    Parameters, storages, dicts/OrderedDicts, lists, tuples, sets, numbers, strings, torch.Size,
    dtypes and devices; any other global raises pickle.UnpicklingError naming it, and nothing
    from the file is ever executed. weights_only=False loads with the same allow-list (with a
    warning): torchweb never runs code from a checkpoint.

    map_location: None, "cpu", "webgpu", a torchweb.device, a dict or a callable (see
    serialization/map_location.py); PyTorch's "cuda:0" lands on webgpu where an adapter exists.
    mmap is accepted and ignored (storages are read into memory). float64 tensors become
    float32, int8/int16 become int32, with a warning naming the dtype."""
    if pickle_module is not None and pickle_module is not pickle:   # (the standard one: nothing to choose)
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified: "
                           "torchweb.load reads checkpoints with its own restricted unpickler")
    if weights_only is False:
        warnings.warn("torchweb.load(weights_only=False): torchweb never executes code from a "
                      "checkpoint, so it loads with the weights_only allow-list anyway (tensors, "
                      "containers, numbers, strings); a checkpoint pickling other objects fails "
                      "with pickle.UnpicklingError naming them", UserWarning, stacklevel=2)
    pickle_load_args.pop("encoding", None)   # PyTorch's pickle options: nothing to choose here
    pickle_load_args.pop("errors", None)
    if pickle_load_args:
        raise TypeError(f"load() got an unexpected keyword argument '{next(iter(pickle_load_args))}'")
    from .zipfile_format import check_format, open_source, read_archive  # deferred: load time (as in save)
    fileobj, head = open_source(f)
    try:
        check_format(head)
        return read_archive(fileobj, resolver(map_location))
    finally:
        if fileobj is not f and hasattr(fileobj, "close") and not isinstance(f, io.IOBase):
            fileobj.close()


from .._deferred import deferred as _deferred  # noqa: E402
__getattr__, __dir__ = _deferred(__name__, globals(), {"safetensors": ".safetensors"})

__all__ = ["save", "load", "safetensors"]
