"""Chapter "Position in hybrid and linear-attention models": where a recurrent layer's order
comes from.

Four layers with random weights read the same input: 64 copies of one token vector. Nothing
in the input says where a token is; whatever tells positions apart in an output is made by
the layer. A causal convolution (Mamba's short conv1d), a diagonal linear recurrence (the
scan of an SSM or a linear-attention layer), and one attention head without position
encoding, causal and bidirectional.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/hybrid_models/recurrence.py
"""

# --8<-- [start:layers]
import unicodedata

import torch
import torch.nn.functional as F

import posenc

DIM, KERNEL, SEQ = 16, 4, 64
gen = torch.Generator().manual_seed(0)
conv_weight = torch.randn(DIM, 1, KERNEL, generator=gen) / KERNEL**0.5  # depthwise, as Mamba's
decay = torch.sigmoid(torch.randn(DIM, generator=gen) + 2.0)  # a in (0, 1), one per channel
w_in = torch.randn(DIM, generator=gen)
w_q, w_k, w_v = (torch.randn(DIM, DIM, generator=gen) / DIM**0.5 for _ in range(3))


def causal_conv(x: torch.Tensor) -> torch.Tensor:
    """(seq, DIM) -> (seq, DIM): y_t = sum_i w_i x_{t-i}, zeros before the first token."""
    padded = F.pad(x.T[None], (KERNEL - 1, 0))  # KERNEL - 1 zeros on the left
    return F.conv1d(padded, conv_weight, groups=DIM)[0].T


def scan(x: torch.Tensor) -> torch.Tensor:
    """(seq, DIM) -> (seq, DIM): h_t = a * h_{t-1} + b * x_t, from h_{-1} = 0."""
    h, out = torch.zeros(DIM), []
    for x_t in x:
        h = decay * h + w_in * x_t
        out.append(h)
    return torch.stack(out)


def nope_attention(x: torch.Tensor, causal: bool) -> torch.Tensor:
    """One head, no position encoding: (seq, DIM) -> (seq, DIM)."""
    q, k, v = ((x @ w)[None, None] for w in (w_q, w_k, w_v))  # (1, 1, seq, DIM)
    return posenc.attention(q, k, v, causal=causal)[0, 0]


LAYERS = {
    "causal conv, kernel 4": causal_conv,
    "linear recurrence (scan)": scan,
    "NoPE attention, causal": lambda x: nope_attention(x, causal=True),
    "NoPE attention, bidirectional": lambda x: nope_attention(x, causal=False),
}
# --8<-- [end:layers]

# --8<-- [start:same_token]
token = torch.randn(DIM, generator=torch.Generator().manual_seed(1))
same = token.expand(SEQ, DIM)  # the same token at positions 0 .. 63


def positions_told_apart(out: torch.Tensor) -> int:
    """How many different output vectors the positions get (equal: within 1e-5)."""
    kept: list[torch.Tensor] = []
    for row in out:
        if all((row - seen).abs().max() > 1e-5 for seen in kept):
            kept.append(row)
    return len(kept)


told_apart = {name: positions_told_apart(layer(same)) for name, layer in LAYERS.items()}
NAMES_ZH = {
    "causal conv, kernel 4": "因果卷积，核长 4",
    "linear recurrence (scan)": "线性递推（scan）",
    "NoPE attention, causal": "NoPE 注意力，因果",
    "NoPE attention, bidirectional": "NoPE 注意力，双向",
}


def show_same_token(lang: str = "en") -> None:
    titles = {"en": ("layer", "positions told apart"), "zh": ("层", "区分出的位置数")}
    print(_cell(titles[lang][0], 32), titles[lang][1])
    for name, count in told_apart.items():
        print(_cell(name if lang == "en" else NAMES_ZH[name], 32), f"{count:3d} / {SEQ}")


def _cell(text: str, width: int) -> str:
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * (width - shown)


assert told_apart["causal conv, kernel 4"] == KERNEL  # positions 0, 1, 2, then all the rest
assert told_apart["linear recurrence (scan)"] == SEQ  # every position its own output
assert told_apart["NoPE attention, causal"] == 1  # an average of equal values
assert told_apart["NoPE attention, bidirectional"] == 1
# --8<-- [end:same_token]


# --8<-- [start:saturation]
# The scan's answer to a constant input 1 is h_t = (1 - a^(t+1)) / (1 - a): it rises towards
# 1 / (1 - a) and, in exact arithmetic, never stops rising. In floating point it stops once
# a^(t+1) is below half a unit in the last place of h, which depends on the number format.
def last_told_apart(a: float, dtype: torch.dtype = torch.float32) -> int:
    """The last position whose output, computed in dtype, differs from the position before it."""
    a_, one = torch.tensor(a, dtype=dtype), torch.tensor(1.0, dtype=dtype)
    h, t = one, 0  # position 0: h_0 = 1
    while (new := a_ * h + one) != h:  # a fixed point never moves again
        h, t = new, t + 1
    return t


def show_saturation(lang: str = "en") -> None:
    a_label = {"en": "a in bfloat16", "zh": "bfloat16 中的 a"}[lang]
    print(f"{'a':<8}{'float32':>8}{'t (1 - a)':>11}   {_cell(a_label, 17)}{'bfloat16':>8}")
    for a in (0.9, 0.99, 0.999):
        t32, t16 = last_told_apart(a), last_told_apart(a, torch.bfloat16)
        a16 = torch.tensor(a, dtype=torch.bfloat16).item()  # a itself is rounded
        print(f"{a:<8}{t32:8d}{t32 * (1 - a):11.1f}   {a16:<17}{t16:8d}")


assert [last_told_apart(a) for a in (0.9, 0.99, 0.999)] == [137, 1229, 10276]
assert all(last_told_apart(a, torch.bfloat16) < last_told_apart(a) / 4 for a in (0.9, 0.99, 0.999))
# --8<-- [end:saturation]

# --8<-- [start:exercise]
first = torch.randn(DIM, generator=torch.Generator().manual_seed(2))
with_first = torch.cat([first[None], same[1:]])  # another token at position 0, then 63 copies
for name in ("NoPE attention, causal", "NoPE attention, bidirectional"):
    print(f"{positions_told_apart(LAYERS[name](with_first))} / {SEQ}")
assert positions_told_apart(LAYERS["NoPE attention, causal"](with_first)) == SEQ
assert positions_told_apart(LAYERS["NoPE attention, bidirectional"](with_first)) == 2
# --8<-- [end:exercise]

if __name__ == "__main__":
    show_same_token(lang="en")
    show_same_token(lang="zh")
