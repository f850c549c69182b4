"""Chapter "Mixing layers": where a stack of local RoPE and global NoPE layers gets order from.

Two sequences hold the same tokens: a filler block S three times and two blocks A and B, as
S A S B S and S B S A S. Only the order of A and B, far apart, differs. A small random stack of
attention layers reads both; the last token's output says whether the stack can tell them apart.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/mixing_layers/order.py
"""

# --8<-- [start:model]
import unicodedata

import torch
import torch.nn.functional as F

import posenc

DIM, WINDOW = 16, 4
rope = posenc.RotaryEmbedding(DIM)


def random_layer(gen: torch.Generator) -> dict:
    """Random weights of one layer: one attention head and a small MLP."""
    shapes = {"q": (DIM, DIM), "k": (DIM, DIM), "v": (DIM, DIM), "up": (DIM, 64), "down": (64, DIM)}
    return {name: torch.randn(*s, generator=gen) / s[0] ** 0.5 for name, s in shapes.items()}


def mask_bias(n: int, local: bool, causal: bool) -> torch.Tensor:
    """0 where query i may see key j, -inf elsewhere: (1, n, n), one head."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = torch.ones(n, n, dtype=torch.bool)
    if causal:
        allowed &= j <= i
    if local:  # a window of WINDOW tokens (on both sides when not causal)
        allowed &= (i - j).abs() < WINDOW
    return torch.zeros(n, n).masked_fill(~allowed, float("-inf"))[None]


def run(x: torch.Tensor, kinds: list[str], layers: list[dict], causal: bool) -> torch.Tensor:
    """kinds: "local" (RoPE, window), "rope" (RoPE, global) or "nope" (no RoPE, global)."""
    h = x  # (seq, DIM): one sequence, one head per layer
    for kind, w in zip(kinds, layers, strict=False):  # the first len(kinds) layers
        a = F.layer_norm(h, (DIM,))
        q, k, v = ((a @ w[name])[None, None] for name in "qkv")  # (1, 1, seq, DIM)
        if kind != "nope":
            q, k = rope(q, k)  # positions 0 .. seq-1
        bias = mask_bias(len(x), local=kind == "local", causal=causal)
        h = h + posenc.attention(q, k, v, causal=False, bias=bias)[0, 0]
        a = F.layer_norm(h, (DIM,))
        h = h + torch.tanh(a @ w["up"]) @ w["down"]
    return h


gen = torch.Generator().manual_seed(0)
S, A, B = (torch.randn(n, DIM, generator=gen) for n in (40, 6, 6))  # random token vectors
a_first = torch.cat([S, A, S, B, S])  # 132 tokens; A at 40-45, B at 86-91
b_first = torch.cat([S, B, S, A, S])
layers = [random_layer(gen) for _ in range(8)]
# --8<-- [end:model]

# --8<-- [start:order]
local, nope, rope_global = "local", "nope", "rope"
STACKS = {
    "local RoPE only": [local] * 6,
    "local RoPE, then one NoPE layer": [local] * 3 + [nope],
    "(local x3, NoPE) twice": ([local] * 3 + [nope]) * 2,
    "NoPE only": [nope] * 6,
    "global RoPE only": [rope_global] * 6,
}
NAMES_ZH = {
    "local RoPE only": "只有局部 RoPE 层",
    "local RoPE, then one NoPE layer": "局部 RoPE 层后接一层 NoPE",
    "(local x3, NoPE) twice": "（局部 ×3，NoPE）重复两次",
    "NoPE only": "只有 NoPE 层",
    "global RoPE only": "只有全局 RoPE 层",
}


def difference(kinds: list[str], causal: bool) -> float:
    """How much the last token's output changes when A and B trade places."""
    one = run(a_first, kinds, layers, causal)[-1]
    two = run(b_first, kinds, layers, causal)[-1]
    return (one - two).abs().max().item()


table = {name: (difference(k, True), difference(k, False)) for name, k in STACKS.items()}


def show_order(lang: str = "en") -> None:
    titles = {"en": ["stack", "causal mask", "no mask"], "zh": ["层的组合", "因果掩码", "无掩码"]}
    name_width = 34
    print(_cell(titles[lang][0], name_width), *(_cell(t, 11, right=True) for t in titles[lang][1:]))
    for name, (causal, bidirectional) in table.items():
        shown = name if lang == "en" else NAMES_ZH[name]
        print(_cell(shown, name_width), f"{causal:11.4f}", f"{bidirectional:11.4f}")


def _cell(text: str, width: int, right: bool = False) -> str:
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * (width - shown) + text if right else text + " " * (width - shown)


told_apart = {name: (c > 1e-2, b > 1e-2) for name, (c, b) in table.items()}
same = {name: (c < 1e-5, b < 1e-5) for name, (c, b) in table.items()}
assert same["local RoPE only"] == (True, True)  # the window never reaches A or B
assert same["local RoPE, then one NoPE layer"] == (True, True)  # a set of states, see exercise 2
assert told_apart["(local x3, NoPE) twice"] == (True, False) and same["(local x3, NoPE) twice"][1]
assert told_apart["NoPE only"] == (True, False) and same["NoPE only"][1]
assert told_apart["global RoPE only"] == (True, True)  # the inputs can be told apart
# --8<-- [end:order]

# --8<-- [start:mistake_nope]
words = torch.randn(4, DIM, generator=torch.Generator().manual_seed(5))
sentence = torch.stack([words[0], words[1], words[2], words[0], words[3]])  # token 0 twice
gap = {}
for causal in (True, False):
    out = run(sentence, [nope], layers[:1], causal)  # one NoPE layer
    gap[causal] = (out[3] - out[0]).abs().max().item()  # the same token at positions 0 and 3
print(f"{gap[True]:.4f} {gap[False]:.4f}")  # causal mask, no mask
assert gap[True] > 0.1 and gap[False] < 1e-5
# --8<-- [end:mistake_nope]

# --8<-- [start:exercise]
kinds = ["local"] * 3 + ["nope"]
one, two = run(a_first, kinds, layers, True), run(b_first, kinds, layers, True)
b_one, b_two = slice(86, 92), slice(40, 46)  # where B sits in each order
at_b = (one[b_one] - two[b_two]).abs().max().item()
at_last = (one[-1] - two[-1]).abs().max().item()
print(f"{at_b:.4f} {at_last:.4f}")  # at B's tokens, at the last token
assert at_b > 1e-2 and at_last < 1e-5
# --8<-- [end:exercise]

if __name__ == "__main__":
    show_order(lang="en")
    show_order(lang="zh")
