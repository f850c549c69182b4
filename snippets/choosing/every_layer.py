"""Chapter "Comparing and choosing": why an added code goes in once, a rotation in every layer.

Three attention layers with random weights read distinct random tokens, once with a
sinusoidal code added to the input and once with RoPE applied to q and k in every layer.
Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/choosing/every_layer.py
"""

# --8<-- [start:every_layer]
import torch
import torch.nn.functional as F

import posenc

torch.manual_seed(0)
dim, heads, seq, depth = 32, 4, 16, 3
head_dim = dim // heads
weights = [[torch.randn(dim, dim) / dim**0.5 for _ in range(4)] for _ in range(depth)]
rope = posenc.RotaryEmbedding(head_dim)


def run(tokens, encoding, offset=0):
    """Hidden states and attention logits after each layer, (batch, seq, dim) tokens in.

    encoding "added": a sinusoidal code for positions offset.. is added to the input once;
    "rope": q and k are rotated in every layer, for the same positions. Bidirectional
    attention (no causal mask, which carries order by itself) with a residual connection.
    """
    h = tokens
    if encoding == "added":
        h = h + posenc.sinusoidal(torch.arange(offset, offset + seq), dim)
    states, logits = [], []
    for w_q, w_k, w_v, w_o in weights:
        x = F.layer_norm(h, (dim,))
        q, k, v = ((x @ w).view(-1, seq, heads, head_dim).transpose(1, 2) for w in (w_q, w_k, w_v))
        if encoding == "rope":
            q, k = rope(q, k, offset=offset)
        scores = q @ k.transpose(-1, -2) / head_dim**0.5  # (batch, heads, seq, seq)
        mixed = (scores.softmax(-1) @ v).transpose(1, 2).reshape(h.shape)
        h = h + mixed @ w_o
        states.append(h)
        logits.append(scores)
    return states, logits


def shift_change(tokens, encoding, shift=100):
    """Per layer: the largest change of a logit when every position moves by `shift`."""
    _, before = run(tokens, encoding)
    _, after = run(tokens, encoding, offset=shift)
    return [(a - b).abs().max().item() for a, b in zip(after, before, strict=True)]


def probe_accuracy(train, test, encoding):
    """Per layer: how often a linear probe, fitted on `train`, names a token's position in
    `test` (least squares onto one-hot positions, then the largest output)."""
    targets = torch.eye(seq).repeat(len(train), 1)
    truth = torch.arange(seq).repeat(len(test))
    accuracy = []
    for fit, check in zip(run(train, encoding)[0], run(test, encoding)[0], strict=True):
        design = torch.cat([fit.reshape(-1, dim), torch.ones(targets.shape[0], 1)], dim=1)
        readout = torch.linalg.lstsq(design, targets).solution
        design = torch.cat([check.reshape(-1, dim), torch.ones(truth.shape[0], 1)], dim=1)
        accuracy.append(((design @ readout).argmax(-1) == truth).float().mean().item())
    return accuracy


train, test = torch.randn(64, seq, dim), torch.randn(64, seq, dim)  # distinct random tokens
change = {name: shift_change(test, name) for name in ("added", "rope")}
found = {name: probe_accuracy(train, test, name) for name in ("added", "rope")}

# Reorder the tokens: a RoPE layer's output is not the reordered output (order got in).
order = torch.randperm(seq)
first_layer = run(test, "rope")[0][0]
order_kept = not torch.allclose(run(test[:, order], "rope")[0][0], first_layer[:, order], atol=1e-4)

assert all(c < 1e-4 for c in change["rope"])  # RoPE: every layer's scores are relative
assert all(c > 1 for c in change["added"])  # the added code reaches every layer's scores
assert all(f < 2 / seq for f in found["rope"])  # no probe finds a position after RoPE...
assert all(f > 4 / seq for f in found["added"])  # ...but it finds the added code at depth
assert order_kept  # yet a RoPE layer's output does depend on the order of the tokens

LABELS = {
    "en": {
        "layer": "layer",
        "shift": "largest change of a logit when every position moves by 100",
        "probe": f"a linear probe names the position (chance {1 / seq:.0%})",
        "added": "sinusoidal code added once",
        "rope": "RoPE in every layer",
        "order": "reordered tokens change a RoPE layer's output beyond the reordering: ",
        True: "yes",
        False: "no",
    },
    "zh": {
        "layer": "层",
        "shift": "所有位置整体后移 100，注意力分数的最大变化",
        "probe": f"线性探针猜中位置的比例（随机猜为 {1 / seq:.0%}）",
        "added": "输入端加一次正弦编码",
        "rope": "每层都做 RoPE",
        "order": "打乱 token 顺序后，RoPE 层的输出除了换序还有别的变化：",
        True: "是",
        False: "否",
    },
}


def show_every_layer(lang="en"):
    text = LABELS[lang]
    print("".join(f"{n:>8}" for n in range(1, depth + 1)) + "  " + text["layer"])
    for title, table, cell in (
        (text["shift"], change, "{:8.2f}"),
        (text["probe"], found, "{:8.0%}"),
    ):
        print(title)
        for name in ("added", "rope"):
            print("".join(cell.format(x) for x in table[name]) + "  " + text[name])
    print(text["order"] + text[order_kept])


# --8<-- [end:every_layer]

if __name__ == "__main__":
    show_every_layer("en")
    show_every_layer("zh")
