"""Language models as people have them: Hugging Face's GPT-2 and Llama layouts written as plain
PyTorch modules (their state_dict keys are the checkpoints'), a loader for their safetensors
checkpoints, a byte-level BPE tokenizer, and generation with a static KV cache (docs/lm.md).

    from torchweb.models import from_pretrained, Tokenizer, generate
    model = from_pretrained("https://huggingface.co/gpt2/resolve/main/")
"""

from .checkpoint import from_pretrained, from_pretrained_async, model_for_config  # noqa: F401
from .config import GPT2Config, LlamaConfig, Qwen2Config, config_from_dict  # noqa: F401
from .gpt2 import GPT2LMHeadModel  # noqa: F401
from .llama import LlamaForCausalLM  # noqa: F401
from .tokenizer import Tokenizer  # noqa: F401
from .generation import decode_step, generate, sample_next  # noqa: F401
