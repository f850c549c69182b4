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
import unicodedata

import torch.nn.functional as F
from torch import nn


class TinyLM(nn.Module):
    """Embedding, one causal attention layer with RoPE, and an output head: logits per token.

    q/k/v projections with biases (as Qwen2 has them); ``rotary_dim`` < head_dim rotates only
    the first dimensions of each head (partial rotary).
    """

    def __init__(self, layout, rotary_dim=16, vocab=50, dim=32, heads=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.w_q, self.w_k, self.w_v = (nn.Linear(dim, dim, bias=True) for _ in range(3))
        self.w_o = nn.Linear(dim, dim, bias=False)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.rope = posenc.RotaryEmbedding(self.head_dim, layout=layout, rotary_dim=rotary_dim)

    def split(self, t):  # (batch, seq, dim) -> (batch, heads, seq, head_dim)
        return t.unflatten(-1, (self.heads, self.head_dim)).transpose(1, 2)

    def forward(self, ids):
        h = self.embed(ids)
        q, k, v = self.split(self.w_q(h)), self.split(self.w_k(h)), self.split(self.w_v(h))
        q, k = self.rope(q, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.lm_head(h + self.w_o(out.transpose(1, 2).flatten(-2)))


def to_half(original: TinyLM, rows: str, biases: bool, rotary_dim: int) -> TinyLM:
    """The weights of an interleaved model in a rotate-half model (Hugging Face's layout).

    rows: "none", "head" (permute all head_dim rows of each head) or "rotary" (only the first
    rotary_dim rows; the rest are not rotated and stay where they are).
    """
    model = TinyLM(layout="half", rotary_dim=rotary_dim)
    state, d = original.state_dict(), model.head_dim
    if rows != "none":
        width = d if rows == "head" else rotary_dim
        perm = posenc.interleaved_to_half_permutation(width)
        perm = torch.cat((perm, torch.arange(width, d)))  # dimensions past width stay put
        names = ["w_q.weight", "w_k.weight"] + (["w_q.bias", "w_k.bias"] if biases else [])
        for name in names:  # output rows of q and k, head by head; V and O untouched
            w = state[name]
            state[name] = w.view(model.heads, d, -1)[:, perm].reshape(w.shape)
    model.load_state_dict(state)
    return model


ids = torch.randint(0, 50, (1, 12), generator=torch.Generator().manual_seed(1))
cases = [  # (rotary_dim, rows permuted, biases permuted)
    (16, "none", False),
    (16, "head", False),
    (16, "head", True),
    (8, "head", True),
    (8, "rotary", True),
]
results = []
with torch.no_grad():
    for rotary_dim, rows, biases in cases:
        torch.manual_seed(0)
        original = TinyLM(layout="interleaved", rotary_dim=rotary_dim)  # Meta's / GPT-J's pairs
        reference = original(ids)
        logits = to_half(original, rows, biases, rotary_dim)(ids)
        difference = (logits - reference).abs().max().item()
        results.append((difference, torch.allclose(logits, reference, atol=1e-5)))
assert [same for _, same in results] == [False, False, True, False, True]


def pad(text: str, width: int, right: bool = False) -> str:
    """Align text in `width` columns of a terminal (a Chinese character takes two)."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    fill = " " * max(width - shown, 0)
    return fill + text if right else text + fill


def show_conversion(lang: str = "en") -> None:
    labels = {
        "en": {
            "columns": ("rotated", "permuted", "max |Δ logit|", "same"),
            "rotated": "{} of 16 dims",
            ("none", False): "nothing",
            ("head", False): "q/k weight rows",
            ("head", True): "q/k weight rows and biases",
            ("rotary", True): "rotated rows and their biases",
        },
        "zh": {
            "columns": ("旋转的维度", "置换了什么", "logit 最大差", "相同"),
            "rotated": "16 维中的 {} 维",
            ("none", False): "什么都没换",
            ("head", False): "q/k 权重的行",
            ("head", True): "q/k 权重的行和偏置",
            ("rotary", True): "只换旋转部分的行和偏置",
        },
    }[lang]
    columns = labels["columns"]
    print(
        f"{pad(columns[0], 16)}{pad(columns[1], 32)}{pad(columns[2], 13, right=True)}  {columns[3]}"
    )
    for (rotary_dim, rows, biases), (difference, same) in zip(cases, results, strict=True):
        rotated = pad(labels["rotated"].format(rotary_dim), 16)
        print(f"{rotated}{pad(labels[rows, biases], 32)}{difference:13.3f}  {same}")


# --8<-- [end:checkpoint]

show_conversion()
