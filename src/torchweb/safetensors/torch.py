"""safetensors.torch's names (the alias answers `import safetensors.torch` with this module)."""

from . import SafetensorError, load, load_file, load_model, safe_open, save, save_file, save_model  # noqa: F401
