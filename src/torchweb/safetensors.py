"""torchweb.safetensors: safetensors.torch's API (save, save_file, load, load_file) in pure
Python; the implementation is serialization/safetensors.py."""

from .serialization.safetensors import (SafetensorError, load, load_file, load_metadata,  # noqa: F401
                                        metadata, save, save_file)
