"""Chapter "RoPE beyond one dimension": M-RoPE of Qwen2-VL, Qwen2.5-VL and Qwen3-VL.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/multi_axis_rope/mrope.py
"""

# --8<-- [start:sections]
import torch

import posenc
from posenc import rope_axes

sections = [16, 24, 24]  # Qwen2-VL's mrope_section: frequency pairs, not dimensions
axes = rope_axes.mrope_axes(sections)  # the axis of every pair: 0 = t, 1 = h, 2 = w
print(len(axes), "".join("thw"[a] for a in axes))

inv_freq = posenc.default_inv_freq(128, 1e6)  # head_dim 128, rope_theta 1e6: 64 pairs
token = torch.tensor([[3], [4], [6]])  # one token with t = 3, h = 4, w = 6
cos, sin = rope_axes.mrope_cos_sin(token, inv_freq, sections)  # (1, 128) each
angles = torch.cat([3 * inv_freq[:16], 4 * inv_freq[16:40], 6 * inv_freq[40:]])  # p_{a_j}·θ_j
assert torch.allclose(cos[0], torch.cat((angles.cos(), angles.cos())), atol=1e-6)
assert torch.allclose(sin[0], torch.cat((angles.sin(), angles.sin())), atol=1e-6)
# --8<-- [end:sections]

# --8<-- [start:ids]
# 3 text tokens, an image of 6 x 8 patches (2 x 2 patches merge into one token: 3 x 4 tokens),
# then 4 text tokens
ids = rope_axes.mrope_position_ids([3, (1, 6, 8), 4])  # (3, 19): rows t, h, w
for name, row in zip("thw", ids.tolist(), strict=True):
    print(name, row)
print("ids.max() + 1 =", ids.max().item() + 1)  # where generation goes on
assert ids[:, 15].tolist() == [7, 7, 7]  # text after the image: 3 + max(3, 4) = image max + 1
assert ids.shape[1] == 19 and ids.max() == 10  # 19 tokens, ids up to 10 only
# --8<-- [end:ids]

# --8<-- [start:apply]
torch.manual_seed(0)
q = torch.randn(1, 4, 19, 128)  # (batch, heads, seq, head_dim): queries of the 19 tokens
cos, sin = rope_axes.mrope_cos_sin(ids[:, None], inv_freq, sections)  # ids as (3, batch, seq)
rotated = posenc.apply_rotary(q, cos[:, None], sin[:, None])  # insert the heads dimension
print(tuple(cos.shape), tuple(rotated.shape))
# --8<-- [end:apply]

# --8<-- [start:text_only]
positions = torch.arange(4096)
plain = posenc.rotary_cos_sin(positions, inv_freq)  # ordinary 1-D RoPE
for layout_sections, interleaved in (([16, 24, 24], False), ([24, 20, 20], True)):
    cos, sin = rope_axes.mrope_cos_sin(
        positions.expand(3, -1), inv_freq, layout_sections, interleaved=interleaved
    )  # t = h = w = p for every token
    print(layout_sections, torch.equal(cos, plain[0]) and torch.equal(sin, plain[1]))

# the image tokens do get other tables than their sequence index would
image_tables = rope_axes.mrope_cos_sin(ids, inv_freq, sections)[0]
print(torch.equal(image_tables, posenc.rotary_cos_sin(torch.arange(19), inv_freq)[0]))
# --8<-- [end:text_only]

# --8<-- [start:video]
# Qwen2-VL: a video of 8 frames, 2 frames per temporal patch, 4 x 4 patches per frame
video_ids = rope_axes.mrope_position_ids([2, (4, 4, 4), 2])
print("t", video_ids[0].tolist())
assert video_ids[:, -2].tolist() == [6, 6, 6]  # text after the video: its largest id + 1

# Qwen2.5-VL: the same 4 seconds of video sampled at 1, 2 and 4 frames per second
tokens_per_second, temporal_patch_size = 2, 2
starts = {}  # fps -> temporal id of each temporal patch, relative to the video's start
for fps in (1, 2, 4):
    seconds_per_patch = temporal_patch_size / fps  # second_per_grid_ts
    patches = 4 * fps // temporal_patch_size
    video = rope_axes.VisionGrid(patches, 4, 4, time_interval=tokens_per_second * seconds_per_patch)
    t_row = rope_axes.mrope_position_ids([video])[0]
    starts[fps] = t_row[::4].tolist()  # one token per temporal patch (4 tokens each)
    print(f"{fps} fps: {starts[fps]}")
assert starts[1][1] == starts[2][2] == starts[4][4] == 4  # second 2 of the video: id 4 at any fps
# --8<-- [end:video]

# --8<-- [start:frames]
# Qwen3-VL: each frame is laid out like an image, after its timestamp text ("<0.5 seconds>")
frames = rope_axes.mrope_position_ids([2, (1, 4, 4), 5, (1, 4, 4), 2])
print("t", frames[0].tolist())
# --8<-- [end:frames]

# --8<-- [start:interleaved]
import math
import unicodedata

interleaved_axes = rope_axes.mrope_axes([24, 20, 20], interleaved=True)  # Qwen3-VL
print(len(interleaved_axes), "".join("thw"[a] for a in interleaved_axes))
layouts = {"contiguous": rope_axes.mrope_axes([16, 24, 24]), "interleaved": interleaved_axes}
bands = {}  # (layout, axis) -> (pairs, fastest theta, shortest period, longest period)
for layout, layout_axes in layouts.items():
    for axis in range(3):
        thetas = inv_freq[[j for j, a in enumerate(layout_axes) if a == axis]]
        fastest, slowest = thetas.max().item(), thetas.min().item()
        bands[layout, axis] = (len(thetas), fastest, 2 * math.pi / fastest, 2 * math.pi / slowest)
assert bands["contiguous", 2][1] < 2e-4  # w: one column turns the fastest w pair by < 0.0002
assert all(bands["interleaved", axis][1] > 0.6 for axis in range(3))  # every axis: a fast pair
assert all(bands["interleaved", axis][3] > 1e6 for axis in range(3))  # ... and a slow one


def show_bands(lang: str = "en") -> None:
    names = {
        "en": {"contiguous": "contiguous", "interleaved": "interleaved"},
        "zh": {"contiguous": "分段", "interleaved": "交错"},
    }[lang]
    header = {
        "en": ["layout", "axis", "pairs", "angle per step", "shortest period", "longest period"],
        "zh": ["分配", "轴", "对数", "每步转角", "最短周期", "最长周期"],
    }[lang]
    widths = [11, 4, 5, 15, 16, 16]
    print(
        " ".join(
            _pad(t, w, left=i == 0) for i, (t, w) in enumerate(zip(header, widths, strict=True))
        )
    )
    for (layout, axis), (pairs, fastest, shortest, longest) in bands.items():
        print(
            f"{_pad(names[layout], 11, left=True)} {'thw'[axis]:>4s} {pairs:5d} {fastest:15.2e}"
            f" {shortest:16,.1f} {longest:16,.0f}"
        )


def _pad(text: str, width: int, left: bool = False) -> str:
    """Pad text to a column: a Chinese character takes two columns of a terminal."""
    gap = " " * (width - sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text))
    return text + gap if left else gap + text


# --8<-- [end:interleaved]


# --8<-- [start:mistake_sections]
def tables(t: int, h: int, w: int, read_as_dims: bool = False):
    """(cos, sin) of one token; read_as_dims: the mistake, channels cut by [32, 48, 48]."""
    if not read_as_dims:
        coords = torch.tensor([[t], [h], [w]])
        return [table[0] for table in rope_axes.mrope_cos_sin(coords, inv_freq, sections)]
    per_axis = [posenc.rotary_cos_sin(torch.tensor(p), inv_freq) for p in (t, h, w)]
    # channels 0-31 from t, 32-79 from h, 80-127 from w
    return [torch.cat((a[:32], b[32:80], c[80:])) for a, b, c in zip(*per_axis, strict=True)]


torch.manual_seed(0)
q, k = torch.randn(128), torch.randn(128)


def score(query_ids, key_ids, read_as_dims=False):
    rotated_q = posenc.apply_rotary(q, *tables(*query_ids, read_as_dims=read_as_dims))
    rotated_k = posenc.apply_rotary(k, *tables(*key_ids, read_as_dims=read_as_dims))
    return float(rotated_q @ rotated_k)


results = {}  # reading -> (score, score with every id + 100: the same offsets)
for read_as_dims in (False, True):
    near = score((3, 4, 6), (3, 5, 7), read_as_dims)
    shifted = score((103, 104, 106), (103, 105, 107), read_as_dims)
    results[read_as_dims] = (near, shifted)
assert abs(results[False][0] - results[False][1]) < 1e-3  # pairs: only offsets matter
assert abs(results[True][0] - results[True][1]) > 0.1  # dimensions: no longer a rotation
# the two channels of a pair (j and j + 64) get different angles: channel 16 is a t channel,
# channel 80 a w channel, both of pair 16
assert not torch.equal(tables(3, 4, 6, True)[0][16], tables(3, 4, 6, True)[0][80])


def show_sections_mistake(lang: str = "en") -> None:
    labels = {
        "en": ("as pairs: ", "as dimensions: ", "score {near:.4f}, every id + 100: {shifted:.4f}"),
        "zh": ("按维度对：", "按维度：", "分数 {near:.4f}，所有编号加 100 后 {shifted:.4f}"),
    }[lang]
    for read_as_dims, (near, shifted) in results.items():
        name = labels[1] if read_as_dims else labels[0]
        print(name + labels[2].format(near=near, shifted=shifted))


# --8<-- [end:mistake_sections]

# --8<-- [start:mistake_restart]
# Wrong: text after the image goes on from its index in the sequence (3 + 12 = 15)
restarted = ids.clone()
restarted[:, 15:] = torch.arange(15, 19)
print(ids[0, 13:].tolist())  # right: t of the last two image tokens and the text after
print(restarted[0, 13:].tolist())  # wrong
gap_right = (ids[0, 15] - ids[0, 2]).item()  # first text token after the image - last before
gap_wrong = (restarted[0, 15] - restarted[0, 2]).item()
print(gap_right, gap_wrong)
# --8<-- [end:mistake_restart]

# --8<-- [start:mistake_flat]
# Wrong: give the image tokens their sequence index (t = h = w = index): plain 1-D RoPE again.
# A 1288 x 728 image at patch size 14: 92 x 52 patches, 46 x 26 = 1196 tokens
big = (1, 52, 92)
mrope_ids = rope_axes.mrope_position_ids([3, big, 4])
flat_ids = torch.arange(mrope_ids.shape[1]).expand(3, -1)
print(mrope_ids.shape[1], mrope_ids.max().item(), flat_ids.max().item())  # tokens, largest ids
below = 46  # the token below another one, 46 tokens later in the sequence
print(
    (mrope_ids[:, 3 + below] - mrope_ids[:, 3]).tolist(),
    (flat_ids[:, 3 + below] - flat_ids[:, 3]).tolist(),
)
# --8<-- [end:mistake_flat]

# --8<-- [start:exercise_224]
# 224 x 224 pixels, patch size 14: 16 x 16 patches, merged 2 x 2 into 8 x 8 = 64 tokens,
# between <|vision_start|> and <|vision_end|>; 4 text tokens before the image
image = (1, 224 // 14, 224 // 14)
tokens = rope_axes.mrope_position_ids([4 + 1, image, 1 + 3])  # start / end tokens are text
image_tokens = tokens.shape[1] - 5 - 4
print(image_tokens, image_tokens + 2)
print(tokens[:, 5 + image_tokens].tolist())  # <|vision_end|>
# --8<-- [end:exercise_224]

# --8<-- [start:exercise_decoding]
# The running example again (19 tokens, largest id 10). Generated token i (0, 1, ...) sits at
# sequence index 19 + i; its three ids are 19 + i + rope_delta, the same in all three rows.
rope_delta = ids.max().item() + 1 - ids.shape[1]
print(rope_delta)
for i in range(3):
    print([19 + i + rope_delta] * 3)
# --8<-- [end:exercise_decoding]
