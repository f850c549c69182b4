"""Chapter "RoPE beyond one dimension": 2-D axial RoPE for image patches.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/multi_axis_rope/axial.py
"""

# --8<-- [start:flatten]
import unicodedata

import torch

import posenc

torch.manual_seed(0)
head_dim = 16
q, k = torch.randn(head_dim), torch.randn(head_dim)  # one query and one key, random content


def score_1d(m: int, n: int, q=q, k=k) -> torch.Tensor:
    """q at sequence position m, k at n, both rotated by 1-D RoPE; one score per row of q, k."""
    cos, sin = posenc.rotary_cos_sin(torch.tensor([m, n]), posenc.default_inv_freq(head_dim))
    rotated_q = posenc.apply_rotary(q, cos[0], sin[0])
    rotated_k = posenc.apply_rotary(k, cos[1], sin[1])
    return (rotated_q * rotated_k).sum(-1)


def flat(row: int, col: int, width: int) -> int:
    return row * width + col  # row-major: the patch's index in the sequence


flattened = {}  # width -> scores of (2, 1) against its right, lower and "next row start" patch
for width in (4, 6, 8):
    query_at = flat(2, 1, width)
    right, below = flat(2, 2, width), flat(3, 1, width)
    row_end, next_row = flat(2, width - 1, width), flat(3, 0, width)
    flattened[width] = (
        float(score_1d(query_at, right)),
        float(score_1d(query_at, below)),
        float(score_1d(row_end, next_row)),  # the last patch of a row and the first of the next
    )
right_scores = [scores[0] for scores in flattened.values()]
below_scores = [scores[1] for scores in flattened.values()]
assert max(right_scores) - min(right_scores) < 1e-5  # one column right: offset 1 at any width
# one row down: offset `width`, so the score changes with the width of the image
assert min(abs(a - b) for a, b in zip(below_scores, below_scores[1:], strict=False)) > 0.1
assert all(abs(s[2] - s[0]) < 1e-5 for s in flattened.values())  # wrap-around = right neighbour


def show_neighbours(scores: dict, lang: str = "en") -> None:
    header = {
        "en": ["image width", "right neighbour", "patch below", "end of row -> start of next"],
        "zh": ["图像宽度", "右边一格", "下面一格", "行尾 -> 下一行行首"],
    }[lang]
    widths = [11, 15, 11, 10]
    print(" | ".join(_pad(title, width) for title, width in zip(header, widths, strict=True)))
    for width, (right, below, wrap) in scores.items():
        print(f"{width:11d} | {right:15.4f} | {below:11.4f} | {wrap:10.4f}")


def _pad(text: str, width: int) -> str:
    """Right-align text in a column: a Chinese character takes two columns of a terminal."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * (width - shown) + text


# --8<-- [end:flatten]

# --8<-- [start:axial]
from posenc import rope_axes

positions = rope_axes.patch_positions(2, 3)  # (2, 6): the row and the column of every patch
print(positions.tolist())
inv_freq = rope_axes.axial_inv_freq(head_dim)  # (8,): 4 pairs for rows, 4 for columns
print([round(f, 4) for f in inv_freq.tolist()])


def score_2d(query_at: tuple[int, int], key_at: tuple[int, int], q=q, k=k) -> torch.Tensor:
    """q at patch (row, col) = query_at, k at key_at, both rotated by 2-D axial RoPE."""
    coords = torch.tensor([query_at, key_at]).T  # (2, 2): rows, then columns
    cos, sin = rope_axes.axial_cos_sin(coords, inv_freq)  # (2, head_dim) each
    rotated_q = posenc.apply_rotary(q, cos[0], sin[0])
    return (rotated_q * posenc.apply_rotary(k, cos[1], sin[1])).sum(-1)


def neighbours_2d(width: int, q=q, k=k) -> tuple[torch.Tensor, ...]:
    """Scores of the same three pairs of patches as above, now by (row, column)."""
    return (
        score_2d((2, 1), (2, 2), q, k),  # right: offset (0, 1)
        score_2d((2, 1), (3, 1), q, k),  # below: offset (1, 0), whatever the width
        score_2d((2, width - 1), (3, 0), q, k),  # next row start: offset (1, 1 - width)
    )


axial = {width: tuple(map(float, neighbours_2d(width))) for width in (4, 6, 8)}
below_2d = [scores[1] for scores in axial.values()]
assert max(below_2d) - min(below_2d) < 1e-5  # one row down: the same score at every width
assert all(abs(s[2] - s[0]) > 0.1 for s in axial.values())  # wrap-around is no neighbour
assert abs(score_2d((2, 1), (3, 1)) - score_2d((40, 17), (41, 17))) < 1e-4  # shift both: same
# --8<-- [end:axial]

# --8<-- [start:many]
# One query and key could make any pattern look like a rule: count over 1000 random pairs.
pairs = torch.Generator().manual_seed(1)  # its own generator: later blocks' draws unchanged
many_q = torch.randn(1000, head_dim, generator=pairs)
many_k = torch.randn(1000, head_dim, generator=pairs)


def neighbours_1d(width: int, q=q, k=k) -> tuple[torch.Tensor, ...]:
    return (
        score_1d(flat(2, 1, width), flat(2, 2, width), q, k),
        score_1d(flat(2, 1, width), flat(3, 1, width), q, k),
        score_1d(flat(2, width - 1, width), flat(3, 0, width), q, k),
    )


def count_pairs(neighbours) -> dict[str, int]:
    """Of the 1000 pairs (q, k): how many score a neighbour differently at widths 4 and 8
    (by more than 0.01), and how many score the line break like a right neighbour."""
    narrow, wide = neighbours(4, many_q, many_k), neighbours(8, many_q, many_k)
    differs = [int(((a - b).abs() > 0.01).sum()) for a, b in zip(narrow, wide, strict=True)]
    like_right = int(((wide[2] - wide[0]).abs() <= 0.01).sum())
    return {"right": differs[0], "below": differs[1], "break like right": like_right}


flat_counts, axial_counts = count_pairs(neighbours_1d), count_pairs(neighbours_2d)
assert flat_counts["right"] == 0 and flat_counts["break like right"] == 1000
assert flat_counts["below"] > 900  # not a property of one lucky pair
assert axial_counts["right"] == axial_counts["below"] == 0
assert axial_counts["break like right"] < 50  # a few by chance


def show_counts(lang: str = "en") -> None:
    """The counts as a table: one row per encoding, widths 4 and 8 compared."""
    header = {
        "en": ["of 1000 random (q, k)", "right changes", "below changes", "break = right"],
        "zh": ["1000 对随机 (q, k)", "右边一格变了", "下面一格变了", "换行处同右邻"],
    }[lang]
    names = {"en": ["1-D, flattened index", "2-D axial"], "zh": ["一维，压平后的下标", "二维轴向"]}
    widths = [22, 13, 13, 13]
    print(" | ".join(_pad(title, width) for title, width in zip(header, widths, strict=True)))
    for name, counts in zip(names[lang], (flat_counts, axial_counts), strict=True):
        cells = [counts["right"], counts["below"], counts["break like right"]]
        print(_pad(name, widths[0]) + " | " + " | ".join(f"{c:13d}" for c in cells))


# --8<-- [end:many]

# --8<-- [start:schemes]
halves = rope_axes.axial_inv_freq(head_dim, 10000.0)  # Qwen2-VL to Qwen3-VL vision encoders
parity = rope_axes.axial_inv_freq(head_dim, 10000.0, split="parity")  # Pixtral
one_d = posenc.default_inv_freq(head_dim, 10000.0)  # 1-D RoPE over the whole head
assert torch.equal(halves[:4], halves[4:])  # rows and columns: the same ladder
assert torch.equal(parity[:4], one_d[0::2]) and torch.equal(parity[4:], one_d[1::2])


def show_schemes(lang: str = "en") -> None:
    """The frequencies of each scheme, rows' pairs first, then the columns'."""
    names = {"en": ["1-D", "halves", "parity"], "zh": ["一维", "两半 halves", "奇偶 parity"]}[lang]
    width = max(_width(name) for name in names) + 1
    for name, freqs in zip(names, (one_d, halves, parity), strict=True):
        print(name + " " * (width - _width(name)), [f"{f:.4f}" for f in freqs.tolist()])


def _width(text: str) -> int:
    """Columns a terminal gives text: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


# --8<-- [end:schemes]

# --8<-- [start:separable]
# Axial RoPE adds a row term and a column term: s(dr, dc) = f(dr) + g(dc). The score of a
# diagonal neighbour follows from the scores of the straight ones.
diagonal = score_2d((0, 0), (1, 1))
from_straight = score_2d((0, 0), (1, 0)) + score_2d((0, 0), (0, 1)) - score_2d((0, 0), (0, 0))
print(f"{diagonal:.4f} {from_straight:.4f}")
assert abs(diagonal - from_straight) < 1e-4

# A pair that turns with a mix of both coordinates (RoPE-Mixed, Heo et al. 2024) breaks this.
freq_rows, freq_cols = torch.rand(head_dim // 2), torch.rand(head_dim // 2)  # learned in RoPE-Mixed


def score_mixed(query_at: tuple[int, int], key_at: tuple[int, int]) -> float:
    def rotate(x, at):
        angles = at[0] * freq_rows + at[1] * freq_cols  # one angle per pair, from both axes
        cos, sin = torch.cat((angles.cos(), angles.cos())), torch.cat((angles.sin(), angles.sin()))
        return posenc.apply_rotary(x, cos, sin)

    return float(rotate(q, query_at) @ rotate(k, key_at))


mixed = score_mixed((0, 0), (1, 1))
mixed_from_straight = (
    score_mixed((0, 0), (1, 0)) + score_mixed((0, 0), (0, 1)) - score_mixed((0, 0), (0, 0))
)
print(f"{mixed:.4f} {mixed_from_straight:.4f}")
assert abs(mixed - mixed_from_straight) > 0.1
assert abs(score_mixed((2, 1), (3, 2)) - score_mixed((7, 5), (8, 6))) < 1e-4  # still relative
# --8<-- [end:separable]
