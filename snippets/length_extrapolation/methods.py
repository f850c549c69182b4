"""Chapter "Length extrapolation for RoPE": what each scaling method does to the frequencies.

Run it: python snippets/length_extrapolation/methods.py

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.
"""

# --8<-- [start:problem]
import math

import torch

import posenc

head_dim, base, trained = 64, 10000.0, 4096  # Llama-2-like: 64 channels per head, 4k context
inv_freq, _ = posenc.rope_inv_freq(head_dim, base=base)
wavelength = 2 * math.pi / inv_freq  # tokens per full turn of pair i
turns = trained / wavelength  # r_i: how many turns pair i makes within the trained length
full_turn = int((turns >= 1).sum())
# The slow pairs never completed a turn in training: angles past the trained range are new.
slowest = inv_freq[-1].item()


def show_problem(lang="en"):
    lines = {
        "en": ("pairs that turn at least once within {} tokens: {} of {}",
               "slowest pair: angle at position {} = {:.3f} rad, at {} = {:.3f} rad"),
        "zh": ("{0} 个 token 内至少转一圈的维度对：{2} 对中有 {1} 对",
               "最慢的一对：位置 {} 处的角度 = {:.3f} rad，位置 {} 处 = {:.3f} rad"),
    }[lang]  # fmt: skip
    print(lines[0].format(trained, full_turn, head_dim // 2))
    far = 4 * trained - 1
    print(lines[1].format(trained - 1, (trained - 1) * slowest, far, far * slowest))


# --8<-- [end:problem]

# --8<-- [start:linear]
s = 4.0  # stretch 4096 -> 16384
linear = {"rope_type": "linear", "factor": s}
pi_freq, factor = posenc.rope_inv_freq(head_dim, base=base, scaling=linear)
print(torch.allclose(pi_freq, inv_freq / s), factor)

# Scaling the frequencies is the same as squeezing the positions: m·(θ/s) = (m/s)·θ
positions = torch.arange(4 * trained)
cos_scaled_freq, _ = posenc.rotary_cos_sin(positions, pi_freq)
cos_scaled_pos = torch.cos(torch.cat(2 * [(positions / s)[:, None] * inv_freq], dim=-1))
print(torch.allclose(cos_scaled_freq, cos_scaled_pos, atol=1e-4))


# Every angle now stays inside the trained range, but neighbours are s times closer:
def show_neighbours(lang="en"):
    line = {"en": "angle between neighbours on the fastest pair: {:.2f} -> {:.2f} rad",
            "zh": "最快一对上相邻位置的角度差：{:.2f} -> {:.2f} rad"}[lang]  # fmt: skip
    print(line.format(inv_freq[0], pi_freq[0]))


# --8<-- [end:linear]

# --8<-- [start:ntk]
ntk_base = base * s ** (head_dim / (head_dim - 2))  # b' = b·s^(d/(d-2))
ntk_freq, _ = posenc.rope_inv_freq(head_dim, base=ntk_base)
ratio = ntk_freq / inv_freq
assert torch.all(ratio[1:] < ratio[:-1])  # the slower the pair, the more it is slowed down
# Slow pairs (no full turn in training) slowed by less than s still leave their trained range:
slow = turns < 1
past = slow & (4 * trained * ntk_freq > trained * inv_freq)  # angle at 4x length > any seen


def show_ntk(lang="en"):
    lines = {
        "en": ("new base: {:.0f}",
               "ratio θ'/θ, fastest pair: {:.4f}, slowest pair: {:.4f} (1/s = {})",
               "slow pairs that still reach unseen angles at 4x length: {} of {}"),
        "zh": ("新底数：{:.0f}",
               "θ'/θ：最快一对 {:.4f}，最慢一对 {:.4f}（1/s = {}）",
               "到 4 倍长度仍会走到没见过的角度的慢维度对：{1} 对中有 {0} 对"),
    }[lang]  # fmt: skip
    print(lines[0].format(ntk_base))
    print(lines[1].format(ratio[0], ratio[-1], 1 / s))
    print(lines[2].format(past.sum(), slow.sum()))


# --8<-- [end:ntk]

# --8<-- [start:dynamic]
# factor s is not the stretch at s * trained: the scale there is s^2 - s + 1 (3 for s = 2)
two = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": trained}
at_twice, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=two, seq_len=2 * trained)
ntk_three, _ = posenc.rope_inv_freq(head_dim, base=base * 3 ** (head_dim / (head_dim - 2)))
assert torch.allclose(at_twice, ntk_three)

dynamic = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": trained}
slowest_at = {}  # sequence length -> the slowest pair's frequency
for length in (2048, 4096, 8192, 16384):
    freq, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=dynamic, seq_len=length)
    slowest_at[length] = freq[-1]
# With factor 1, dynamic NTK at length L is NTK-aware scaling with s = L / trained:
freq_16k, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=dynamic, seq_len=16384)


def show_dynamic(lang="en"):
    line = {
        "en": "seq_len {:>5}: slowest pair θ = {:.3e}",
        "zh": "seq_len {:>5}：最慢一对 θ = {:.3e}",
    }[lang]
    for length, theta in slowest_at.items():
        print(line.format(length, theta))
    print(torch.allclose(freq_16k, ntk_freq))


# --8<-- [end:dynamic]

# --8<-- [start:dynamic_cache]
# Dynamic NTK with a KV cache: keys are rotated once, when they enter the cache.
dyn = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": trained}
rope_dyn = posenc.RotaryEmbedding(head_dim, base=base, scaling=dyn)
torch.manual_seed(0)
q_vec, k_vec = torch.randn(head_dim), torch.randn(head_dim)


def rotated(x, position, seq_len):
    """x rotated to `position` with the frequencies dynamic NTK uses at length seq_len."""
    cos, sin = rope_dyn.cos_sin(torch.tensor([position]), seq_len=seq_len)
    return posenc.apply_rotary(x[None], cos, sin)[0]


def score(m, n, key_seq_len, query_seq_len=8192):
    return (rotated(q_vec, m, query_seq_len) @ rotated(k_vec, n, key_seq_len)).item()


# Recomputed keys: everything under the frequencies of length 8192. Same distance, same score.
print(math.isclose(score(8000, 3000, 8192), score(7000, 2000, 8192), rel_tol=1e-4))
# Cached keys: key n was rotated when the sequence was n + 1 long (default base up to 4096).
stale_a, stale_b = score(8000, 3000, 3001), score(7000, 2000, 2001)
print(math.isclose(stale_a, stale_b, rel_tol=1e-4))


def show_cached(lang="en"):
    line = {"en": "same distance 5000, cached keys: {:.3f} vs {:.3f}; recomputed: {:.3f}",
            "zh": "距离同为 5000，缓存的 key：{:.3f} 与 {:.3f}；重新计算：{:.3f}"}[lang]  # fmt: skip
    print(line.format(stale_a, stale_b, score(8000, 3000, 8192)))


# --8<-- [end:dynamic_cache]

# --8<-- [start:by_parts]
yarn = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
yarn_freq, attention_factor = posenc.rope_inv_freq(head_dim, base=base, scaling=yarn)
kept = torch.isclose(yarn_freq, inv_freq)
divided = torch.isclose(yarn_freq, inv_freq / s)
on_ramp = ~kept & ~divided
counts = int(kept.sum()), int(divided.sum()), int(on_ramp.sum())


# Kept pairs turn more than beta_fast = 32 times within the trained length, divided ones less
# than beta_slow = 1 time: r_i of the last kept pair and of the first divided pair.
def show_by_parts(lang="en"):
    lines = {
        "en": ("pairs kept: {}, divided by s: {}, on the ramp: {}", "r of pair {}: {:.1f}, of pair 23: {:.2f}"),
        "zh": ("保持不变：{} 对，除以 s：{} 对，在斜坡上：{} 对", "第 {} 对的 r：{:.1f}，第 23 对的 r：{:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(*counts))
    print(lines[1].format(int(kept.sum()) - 1, turns[kept][-1], turns[23]))


# --8<-- [end:by_parts]

# --8<-- [start:ramp]
import unicodedata

alpha, beta = 1.0, 32.0  # beta_slow and beta_fast: turns where the ramp ends and starts


def gamma_paper(r):
    """YaRN paper, Eq. 18: 0 below alpha turns, 1 above beta, linear in r in between."""
    return ((r - alpha) / (beta - alpha)).clamp(0, 1)


def pair_turning(n, dim=head_dim, b=base, original=trained):
    """The (fractional) pair index that makes n turns within `original` tokens."""
    return dim * math.log(original / (n * 2 * math.pi)) / (2 * math.log(b))


def gamma_code(i):
    """The reference code, transformers, MiniMind and posenc: linear in the pair index i
    between the pairs that turn beta and alpha times, rounded outwards."""
    low, high = math.floor(pair_turning(beta)), math.ceil(pair_turning(alpha))
    return 1 - ((i - low) / (high - low)).clamp(0, 1)


def blend(gamma):
    return (1 - gamma) * inv_freq / s + gamma * inv_freq  # θ'_i = (1 − γ)·θ_i/s + γ·θ_i


def right(text, width=7):
    """Right-aligned in `width` columns, counting a Chinese character as two."""
    return " " * (width - sum(1 + (unicodedata.east_asian_width(c) == "W") for c in text)) + text


def ramp_table(lang="en"):
    """Both ramps on the pairs between the last kept and the first divided pair."""
    label = {
        "en": ("pair", "turns r", "γ paper", "γ code", "θ' code/paper"),
        "zh": ("维度对", "圈数 r", "论文 γ", "代码 γ", "θ' 代码/论文"),
    }[lang]
    print("  ".join(right(text) for text in label))
    for i in range(10, 24):
        row = (turns[i], gamma_paper(turns[i]), gamma_code(torch.tensor(i)), gap[i])
        print(f"{i:>7}  " + "  ".join(f"{value:>7.3f}" for value in row))


paper_freq = blend(gamma_paper(turns))
code_freq = blend(gamma_code(torch.arange(head_dim // 2)))
assert torch.allclose(code_freq, yarn_freq)  # posenc's YaRN is the code form
gap = code_freq / paper_freq  # how much faster the code's pair turns than the paper's
assert torch.allclose(gap[~on_ramp], torch.ones(1))  # the two agree outside the ramp
# --8<-- [end:ramp]

# --8<-- [start:temperature]
# The factor multiplies cos and sin, so it scales q AND k: logits grow by its square.
print(f"attention_factor = sqrt(1/t) = {attention_factor:.4f} = 0.1·ln({s:g}) + 1")
assert math.isclose(attention_factor, 0.1 * math.log(s) + 1)
rope = posenc.RotaryEmbedding(head_dim, base=base, scaling=yarn)
plain = posenc.RotaryEmbedding(head_dim, base=base, scaling=yarn | {"attention_factor": 1.0})
torch.manual_seed(0)
q, k = torch.randn(1, 1, 8, head_dim), torch.randn(1, 1, 8, head_dim)
q_t, k_t = rope(q, k)
q_1, k_1 = plain(q, k)
logit_ratio = (q_t @ k_t.transpose(-1, -2)) / (q_1 @ k_1.transpose(-1, -2))
assert torch.allclose(logit_ratio, torch.full_like(logit_ratio, attention_factor**2), rtol=1e-4)


def show_logits(lang="en"):
    line = {
        "en": "logits scaled by 1/t = {:.4f} = {:.4f}²",
        "zh": "注意力分数乘以 1/t = {:.4f} = {:.4f}²",
    }[lang]
    print(line.format(logit_ratio.mean(), attention_factor))


# --8<-- [end:temperature]

# --8<-- [start:mscale]
# DeepSeek-V2: YaRN with s = 40 on the 64 rotated dims; the paper's per-side factor is
# 0.0707·ln(s) + 1, written in the config as mscale = mscale_all_dim = 0.707.
deepseek = {
    "rope_type": "yarn",
    "factor": 40,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32,
    "beta_slow": 1,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
}
_, cos_sin_factor = posenc.rope_inv_freq(64, base=10000.0, scaling=deepseek)
# what DeepSeek's attention multiplies its softmax scale by: (0.1·mscale_all_dim·ln s + 1)²
softmax_factor = posenc.yarn_mscale(40, 0.707) ** 2


def show_mscale(lang="en"):
    lines = {
        "en": ("cos/sin factor: {}", "softmax scale multiplied by {:.4f} = (0.0707·ln 40 + 1)²"),
        "zh": ("cos/sin 乘的系数：{}", "softmax 缩放系数乘以 {:.4f} = (0.0707·ln 40 + 1)²"),
    }[lang]  # fmt: skip
    print(lines[0].format(cos_sin_factor))
    print(lines[1].format(softmax_factor))


# --8<-- [end:mscale]

# --8<-- [start:llama3]
llama3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}  # Llama 3.1: head_dim 128, rope_theta 500000
l3_default, _ = posenc.rope_inv_freq(128, base=500000.0)
l3_freq, l3_factor = posenc.rope_inv_freq(128, base=500000.0, scaling=llama3)
l3_turns = 8192 * l3_default / (2 * math.pi)  # r_i = L0 / λ_i
l3_kept = torch.isclose(l3_freq, l3_default).sum()
l3_divided = torch.isclose(l3_freq, l3_default / 8).sum()
between = (l3_turns >= 1) & (l3_turns <= 4)
# The blend is the paper's NTK-by-parts ramp, linear in r, with alpha = 1 and beta = 4:
l3_gamma = ((l3_turns - 1) / (4 - 1)).clamp(0, 1)
l3_blend = torch.allclose(l3_freq, (1 - l3_gamma) * l3_default / 8 + l3_gamma * l3_default)


def show_llama3(lang="en"):
    labels = {
        "en": ("wavelength < 8192/4 = 2048, kept:", "wavelength > 8192/1 = 8192, divided by 8:",
               "in between, smoothly blended:"),
        "zh": ("波长 < 8192/4 = 2048，保持不变：", "波长 > 8192/1 = 8192，除以 8：",
               "介于两者之间，平滑过渡："),
    }[lang]  # fmt: skip
    column = {"en": 43, "zh": 34}[lang]  # where the counts start
    for label, count in zip(labels, (l3_kept, l3_divided, int(between.sum())), strict=True):
        print(f"{_pad(label, column)}{count}")
    print(l3_blend, l3_factor)


def _pad(text, width):
    """Left-aligned in `width` columns, counting a Chinese character as two."""
    return text + " " * (width - sum(1 + (unicodedata.east_asian_width(c) in "WF") for c in text))


# --8<-- [end:llama3]

# --8<-- [start:longrope]
# Illustrative per-pair factors (real ones come from LongRoPE's search, one list per model).
short = [1.0] * (head_dim // 2)
long = torch.linspace(1.0, 8.0, head_dim // 2).tolist()  # rescale slow pairs more
longrope = {
    "rope_type": "longrope",
    "factor": 8.0,
    "original_max_position_embeddings": trained,
    "short_factor": short,
    "long_factor": long,
}
short_freq, attn = posenc.rope_inv_freq(head_dim, base=base, scaling=longrope, seq_len=trained)
long_freq, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=longrope, seq_len=trained + 1)
uses_long = torch.allclose(long_freq, inv_freq / torch.tensor(long))
print(torch.allclose(short_freq, inv_freq), uses_long)
# Squared, it is log base L0 of the target length s·L0: the log-n scale taken at n = s·L0.
assert math.isclose(attn**2, math.log(8 * trained) / math.log(trained))
# The factor does not switch with the length: a 100-token prompt gets it too. Phi-3.5-mini's
# released config (4096 -> 131072 tokens, s = 32): 1.19 on each of cos and sin.
assert posenc.rope_inv_freq(head_dim, base=base, scaling=longrope, seq_len=100)[1] == attn
phi = posenc.describe(posenc.released_config("phi-3.5-mini")["config"]).layers[0]
assert round(phi.attention_factor, 2) == 1.19 and phi.scaling.factor == 32


def show_longrope(lang="en"):
    lines = {
        "en": ("attention factor: {:.4f} = sqrt(1 + ln 8 / ln {})", "squared: {:.4f} = ln({}) / ln({})"),
        "zh": ("注意力因子：{:.4f} = sqrt(1 + ln 8 / ln {})", "平方：{:.4f} = ln({}) / ln({})"),
    }[lang]  # fmt: skip
    print(lines[0].format(attn, trained))
    print(lines[1].format(attn**2, 8 * trained, trained))


# --8<-- [end:longrope]


if __name__ == "__main__":
    show_problem()
    show_neighbours()
    show_ntk()
    show_dynamic()
    show_cached()
    show_by_parts()
    ramp_table()
    show_logits()
    show_mscale()
    show_llama3()
    show_longrope()
