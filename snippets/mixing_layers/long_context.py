"""Chapter "Mixing layers": per-type RoPE settings, Llama 4's attention temperature, and the
KV-cache memory of local and global layers.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/mixing_layers/long_context.py
"""

# --8<-- [start:bases]
import math
import unicodedata

import torch

import posenc

HEAD_DIM = 128  # Gemma 3 27B
local_setting = {"rope_type": "default", "rope_theta": 10000.0}
global_setting = {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}


def full_turns(setting: dict, span: int) -> int:
    """How many frequency pairs turn a full circle within `span` tokens (period <= span)."""
    inv_freq, _ = posenc.rope_inv_freq(HEAD_DIM, scaling=setting)
    return int((2 * math.pi / inv_freq <= span).sum())


def show_turns(lang: str = "en") -> None:
    rows = {
        "en": ["local layer, 1024 tokens", "global layer, 131072 tokens",
               "global setting, 1024 tokens"],
        "zh": ["局部层，1024 个 token", "全局层，131072 个 token", "全局层的设置，1024 个 token"],
    }[lang]  # fmt: skip
    title = {"en": ["layer, tokens it sees", "pairs that turn a full circle"],
             "zh": ["层，看到的 token 数", "转满一圈的维度对"]}[lang]  # fmt: skip
    print(_cell(title[0], 30), title[1])
    cases = [(local_setting, 1024), (global_setting, 131072), (global_setting, 1024)]
    for row, (setting, span) in zip(rows, cases, strict=True):
        print(_cell(row, 30), f"{full_turns(setting, span)} / {HEAD_DIM // 2}")


def _cell(text: str, width: int, right: bool = False) -> str:
    """Pad text to a column: a Chinese character takes two columns of a terminal."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * (width - shown) + text if right else text + " " * (width - shown)


# --8<-- [end:bases]

# --8<-- [start:yarn]
gpt_oss = {
    "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
    "truncate": False, "original_max_position_embeddings": 4096, "rope_theta": 150000.0,
}  # fmt: skip
yarn, factor = posenc.rope_inv_freq(64, scaling=gpt_oss)  # head_dim 64
plain = posenc.default_inv_freq(64, 150000.0)
kept = torch.isclose(yarn, plain, rtol=1e-6, atol=0).sum().item()
divided = torch.isclose(yarn, plain / 32, rtol=1e-6, atol=0).sum().item()
change = ((plain - yarn) * 127).abs().max().item()  # the farthest key of a 128-token window


def show_yarn(lang: str = "en") -> None:
    lines = {
        "en": [f"of 32 pairs: {kept} kept, {divided} divided by 32, {32 - kept - divided} blended",
               f"largest change of angle within a window of 128 tokens: {change:.2f} rad",
               f"attention_factor {factor:.4f}: logits x {factor**2:.4f}, in every layer"],
        "zh": [f"32 对维度：{kept} 对不变，{divided} 对除以 32，{32 - kept - divided} 对在两者之间",
               f"128 个 token 的窗口内，角度最多改变 {change:.2f} rad",
               f"attention_factor {factor:.4f}：每一层的注意力分数都乘以 {factor**2:.4f}"],
    }[lang]  # fmt: skip
    print("\n".join(lines))


# --8<-- [end:yarn]

# --8<-- [start:temperature]
FLOOR_SCALE, ATTN_SCALE = 8192, 0.1  # Llama 4: floor_scale, attn_scale


def temperature(position: torch.Tensor) -> torch.Tensor:
    """The factor Llama 4 multiplies the queries of its NoPE layers by, at 0-based position p:
    1 + attn_scale * log(1 + floor((p + 1) / floor_scale))."""
    return torch.log1p(torch.floor((position.double() + 1.0) / FLOOR_SCALE)) * ATTN_SCALE + 1.0


def show_temperature(lang: str = "en") -> None:
    titles = {"en": ["position p", "factor"], "zh": ["位置 p", "因子"]}[lang]
    print(_cell(titles[0], 10, right=True), _cell(titles[1], 8, right=True))
    positions = torch.tensor([0, 8190, 8191, 16383, 32767, 131071, 1048575, 10485759])
    for p, factor in zip(positions.tolist(), temperature(positions).tolist(), strict=True):
        print(f"{p:10d} {factor:8.4f}")


# --8<-- [end:temperature]

# --8<-- [start:memory]
GEMMA3_27B = {"layers": 62, "global_layers": 10, "kv_heads": 16, "head_dim": 128, "window": 1024}
BYTES = 2  # bfloat16


def kv_bytes(tokens: int, m: dict = GEMMA3_27B, all_global: bool = False) -> tuple[int, int]:
    """KV-cache bytes of one sequence: (local layers, global layers). A local layer keeps
    the keys and values of at most `window` tokens, a global layer those of every token."""
    per_token = 2 * m["kv_heads"] * m["head_dim"] * BYTES  # K and V
    globals_ = m["layers"] if all_global else m["global_layers"]
    local = (m["layers"] - globals_) * min(tokens, m["window"]) * per_token
    return local, globals_ * tokens * per_token


def show_memory(lang: str = "en") -> None:
    titles = {
        "en": ["tokens", "local layers", "global layers", "total", "all global", "share"],
        "zh": ["token 数", "局部层", "全局层", "合计", "全部全局", "占比"],
    }[lang]
    widths = [7, 13, 14, 10, 11, 6]
    print(" ".join(_cell(t, w, right=True) for t, w in zip(titles, widths, strict=True)))
    for tokens in (8192, 32768, 131072):
        local, global_ = kv_bytes(tokens)
        dense = sum(kv_bytes(tokens, all_global=True))
        gib = [x / 2**30 for x in (local, global_, local + global_, dense)]
        cells = [str(tokens), *(f"{g:.2f} GiB" for g in gib), f"{(local + global_) / dense:.0%}"]
        print(" ".join(_cell(c, w, right=True) for c, w in zip(cells, widths, strict=True)))


assert kv_bytes(131072)[0] == kv_bytes(1024)[0]  # local layers stop growing at the window
# --8<-- [end:memory]

# --8<-- [start:mistake_base]
torch.manual_seed(0)
q, k = torch.randn(HEAD_DIM), torch.randn(HEAD_DIM)  # one query and one key, random content


def score(setting: dict, distance: int) -> float:
    """q at position `distance`, k at position 0, rotated with the given setting."""
    inv_freq, _ = posenc.rope_inv_freq(HEAD_DIM, scaling=setting)
    cos, sin = posenc.rotary_cos_sin(torch.tensor([distance, 0]), inv_freq)
    return float(posenc.apply_rotary(q, cos[0], sin[0]) @ posenc.apply_rotary(k, cos[1], sin[1]))


def show_scores(lang: str = "en") -> None:
    titles = {"en": ["distance", "local setting", "global setting"],
              "zh": ["距离", "局部层的设置", "全局层的设置"]}[lang]  # fmt: skip
    print(_cell(titles[0], 8, right=True), *(_cell(t, 15, right=True) for t in titles[1:]))
    for d in (1, 10, 100, 1000):
        print(f"{d:8d} {score(local_setting, d):15.2f} {score(global_setting, d):15.2f}")


# --8<-- [end:mistake_base]

# --8<-- [start:exercise_memory]
GPT_OSS_120B = {"layers": 36, "global_layers": 18, "kv_heads": 8, "head_dim": 64, "window": 128}
windowed, full = kv_bytes(131072, GPT_OSS_120B)
every_layer = sum(kv_bytes(131072, GPT_OSS_120B, all_global=True))
print(f"{windowed / 2**20:.1f} MiB + {full / 2**30:.2f} GiB / {every_layer / 2**30:.2f} GiB"
      f" = {(windowed + full) / every_layer:.1%}")  # fmt: skip
# --8<-- [end:exercise_memory]

# --8<-- [start:exercise_temperature]
scales = temperature(torch.arange(20000))
first = int((scales > 1).nonzero()[0])
print(first, round(temperature(torch.tensor(1048575)).item(), 4))

# Scout's RoPE layers: with equal low and high factors, Meta's apply_scaling divides by 16 every
# pair whose wavelength exceeds 8192 tokens and leaves the others (a step; posenc's llama3
# type wants high > low); how far the fastest divided pair turns across the 8191 steps of a
# chunk, before and after
inv_freq = posenc.default_inv_freq(128, 500000.0)
slow = 2 * math.pi / inv_freq > 8192  # the pairs Scout divides by 16
fastest = inv_freq[slow].max().item()
print(int(slow.sum()), int((~slow).sum()), round(2 * math.pi / fastest))
print(round(fastest * 8191, 2), round(fastest / 16 * 8191, 2))
# --8<-- [end:exercise_temperature]

if __name__ == "__main__":
    show_memory(lang="en")
    show_memory(lang="zh")
