"""Chapter "RoPE": interleaved and rotate-half layouts, and converting a checkpoint.

Run it: python snippets/rope/layouts.py
"""

# --8<-- [start:same_map]
import torch

import posenc

torch.manual_seed(0)
head_dim = 8
x = torch.randn(1, 1, 5, head_dim)  # (batch, heads, seq, head_dim)
perm = posenc.interleaved_to_half_permutation(head_dim)
print("perm:", perm.tolist())  # pair i moves from channels (2i, 2i+1) to (i, i + d/2)

inter = posenc.RotaryEmbedding(head_dim, layout="interleaved")
half = posenc.RotaryEmbedding(head_dim, layout="half")
rotated_inter, _ = inter(x, x)
rotated_half, _ = half(x[..., perm], x[..., perm])
# permute the channels, rotate with "half" == rotate with "interleaved", then permute
print(torch.allclose(rotated_half, rotated_inter[..., perm], atol=1e-6))
# without the permutation the two layouts pair different channels
print(torch.allclose(half(x, x)[0], rotated_inter, atol=1e-6))
# --8<-- [end:same_map]

# --8<-- [start:checkpoint]
import torch.nn.functional as F
from torch import nn


class TinyLM(nn.Module):
    """Embedding, one causal attention layer with RoPE, and an output head: logits per token."""

    def __init__(self, vocab=50, dim=32, heads=2, layout="interleaved"):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.rope = posenc.RotaryEmbedding(self.head_dim, layout=layout)

    def split(self, t):  # (batch, seq, dim) -> (batch, heads, seq, head_dim)
        return t.unflatten(-1, (self.heads, self.head_dim)).transpose(1, 2)

    def forward(self, ids):
        h = self.embed(ids)
        q, k, v = self.split(self.w_q(h)), self.split(self.w_k(h)), self.split(self.w_v(h))
        q, k = self.rope(q, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.lm_head(h + self.w_o(out.transpose(1, 2).flatten(-2)))


torch.manual_seed(0)
original = TinyLM(layout="interleaved")  # "trained" with Meta's / GPT-J's pairing
ids = torch.randint(0, 50, (1, 12))


def converted(permute: bool) -> TinyLM:
    """The same weights in a model that uses the rotate-half layout (Hugging Face's)."""
    model = TinyLM(layout="half")
    state = original.state_dict()
    if permute:
        perm = posenc.interleaved_to_half_permutation(model.head_dim)
        for name in ("w_q.weight", "w_k.weight"):  # output rows, per head; V and O untouched
            w = state[name]
            state[name] = w.view(model.heads, model.head_dim, -1)[:, perm].reshape(w.shape)
    model.load_state_dict(state)
    return model


with torch.no_grad():
    reference = original(ids)
    for permute in (False, True):
        logits = converted(permute)(ids)
        print(
            f"q/k rows permuted: {permute!s:5}  max |logit difference| = "
            f"{(logits - reference).abs().max():.3f}, same logits: "
            f"{torch.allclose(logits, reference, atol=1e-5)}"
        )
# --8<-- [end:checkpoint]
