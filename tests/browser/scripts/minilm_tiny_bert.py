# A tiny BERT (2 layers, hidden 32, 4 heads, a 40-token vocabulary) running the MiniLM demo's code:
# site/demos/minilm/tokenizer.py and model.py, imported as the modules `tokenizer` and `model`. The
# `# modules:` line below names them: record_cases.py imports the files and ships their text with
# the case, and the page imports that text (tests/test_minilm.py checks it is the files' text).
# Weights from formulas: embeddings, hidden states, pooled outputs, semantic search and the
# gradients of every parameter after a backward through the padded, masked attention.
# modules: site/demos/minilm/tokenizer.py site/demos/minilm/model.py
import math

import torch

from model import BertConfig, BertModel, encode, mean_pooling, semantic_search
from tokenizer import BertTokenizer

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "cat", "dog", "sat", "on", "mat", "ran",
         "in", "park", "is", "eating", "food", "man", "horse", "riding", "play", "##s", "##ing", "##ed", "un",
         "##believ", "##able", ".", ",", "!", "?", "cafe", "北", "京", "x", "##y", "##z", "big", "red"]
tok = BertTokenizer.from_text("\n".join(VOCAB) + "\n", {"do_lower_case": True, "model_max_length": 12})
config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, max_position_embeddings=16, type_vocab_size=2)
model = BertModel(config)
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        scale = 1.0 if "LayerNorm.weight" in name else 0.3
        base = 1.0 if "LayerNorm.weight" in name else 0.0
        vals = [base + scale * math.sin(0.37 * i + 1.3 * k) for i in range(p.numel())]
        p.copy_(torch.tensor(vals).reshape(p.shape))
model.to(device).eval()

sentences = ["The cat sat on the mat.", "A dog ran in the park!", "A man is eating food",
             "A man riding a horse", "Unbelievable, Café 北京 xyz?", "big red dogs playing"]
result = {"ids": tok(sentences)["input_ids"], "mask": tok(sentences)["attention_mask"],
          "truncated": tok.encode("the cat " * 20)}

emb = encode(model, tok, sentences, batch_size=4)
result["embeddings"] = emb.tolist()
result["search"] = [[i for i, _ in hits] for hits in semantic_search(emb[:2], emb[2:], top_k=4)]

batch = tok(sentences[:3])
ids = torch.tensor(batch["input_ids"]).to(device)
mask = torch.tensor(batch["attention_mask"]).to(device)
hidden, pooled = model(ids, attention_mask=mask)
result["hidden"] = hidden.tolist()
result["pooled"] = pooled.tolist()
loss = (mean_pooling(hidden, mask) * torch.arange(32.0).to(device) / 32).sum() + pooled.square().mean()
loss.backward()
result["loss"] = loss.item()
result["grads"] = {name: p.grad.tolist() for name, p in model.named_parameters()}
