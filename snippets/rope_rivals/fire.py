"""Chapter "RoPE's rivals": FIRE's normalised distance, from posenc.fire_inputs and posenc.FIRE.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/fire.py
"""

# --8<-- [start:fire]
import torch

import posenc

c, L = 0.1, 512.0  # the defaults of posenc.FIRE: psi(x) = log(1 + c x), threshold L
queries = (127, 512, 1024, 4096)  # query positions i (127: the last one trained at 128)
distances = (1, 10, 100, 1000)  # r = i - j


def inputs_of(i):
    """u_ij for query i against keys 0..i (index = j): the number FIRE's MLP is given."""
    return posenc.fire_inputs(1, i + 1, c=c, threshold=L)[0]  # the query is the last key


u = {i: inputs_of(i) for i in queries}
for i in queries:
    assert (u[i] >= 0).all() and (u[i] < 1).all()  # every distance lands in [0, 1)
# Below the threshold every query divides by the same psi(L): distance r gives the same u.
assert torch.equal(u[127][127 - 100], u[512][512 - 100])
# Past it, the normaliser is psi(i): the same distance looks shorter and shorter.
assert u[1024][1024 - 100] < u[512][512 - 100] and u[4096][4096 - 100] < u[1024][1024 - 100]

torch.manual_seed(0)
fire = posenc.FIRE(num_heads=4)  # MLP 1 -> 32 -> 4 (ReLU), c and L learned; L starts at 512
with torch.no_grad():
    bias = fire(1024)  # (heads, 1024, 1024): one number per head for every query and key


def depends_on_distance_only(first, last):
    """Does every query in first..last give the same bias to the key r tokens back, for every
    r it can see (r <= first)? That is what a bias in i - j alone would do."""
    rows = torch.stack([bias[:, i, i - first : i + 1] for i in range(first, last + 1)])
    return bool(torch.allclose(rows, rows[0].expand_as(rows), atol=1e-6))


threshold = int(fire.threshold)
below = depends_on_distance_only(threshold // 2, threshold - 1)  # queries 256..511
beyond = depends_on_distance_only(threshold, 1023)  # queries 512..1023
assert below and not beyond


def pad(text, width):
    """``text`` right-aligned in ``width`` terminal columns (a Chinese character takes two)."""
    return " " * max(width - sum(2 if ord(ch) > 0x2E80 else 1 for ch in text), 0) + text


def show_fire(lang="en"):
    text = {
        "en": ("query i", "farthest key",
               "FIRE(4 heads), 1024 tokens, L = {}: bias a function of i - j alone for queries "
               "{}..{}: {}; for queries {}..1023: {}"),
        "zh": ("query 位置 i", "最远的 key",
               "4 个头的 FIRE，1024 个 token，L = {}：query 在 {}..{} 时偏置只取决于 i - j：{}；"
               "query 在 {}..1023 时：{}"),
    }[lang]  # fmt: skip
    head = pad(text[0], 12) + "".join(f"{f'r = {d}':>10}" for d in distances)
    print(head + pad(text[1], 14))
    for i in queries:
        cells = "".join(
            f"{float(u[i][i - d]):10.3f}" if d <= i else f"{'-':>10}" for d in distances
        )
        print(f"{i:>12}{cells}{float(u[i][0]):14.3f}")
    print(text[2].format(threshold, threshold // 2, threshold - 1, below, threshold, beyond))


# --8<-- [end:fire]

if __name__ == "__main__":
    show_fire()
