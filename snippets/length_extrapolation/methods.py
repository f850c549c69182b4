"""Chapter "Length extrapolation for RoPE": what each scaling method does to the frequencies.

Run it: python snippets/length_extrapolation/methods.py
"""

# --8<-- [start:problem]
import math

import torch

import posenc

head_dim, base, trained = 64, 10000.0, 4096  # Llama-2-like: 64 channels per head, 4k context
inv_freq, _ = posenc.rope_inv_freq(head_dim, base=base)
wavelength = 2 * math.pi / inv_freq  # tokens per full turn of pair i
full_turn = wavelength <= trained
turning = int(full_turn.sum())
print(f"pairs that turn at least once within {trained} tokens: {turning} of {head_dim // 2}")
# The slow pairs never completed a turn in training: angles past the trained range are new.
slowest = inv_freq[-1].item()
print(
    f"slowest pair: angle at position {trained - 1} = {(trained - 1) * slowest:.3f} rad, "
    f"at {4 * trained - 1} = {(4 * trained - 1) * slowest:.3f} rad"
)
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
print(f"angle between neighbours on the fastest pair: {inv_freq[0]:.2f} -> {pi_freq[0]:.2f} rad")
# --8<-- [end:linear]

# --8<-- [start:ntk]
ntk_base = base * s ** (head_dim / (head_dim - 2))  # b' = b·s^(d/(d-2))
ntk_freq, _ = posenc.rope_inv_freq(head_dim, base=ntk_base)
ratio = ntk_freq / inv_freq
print(f"new base: {ntk_base:.0f}")
print(f"ratio θ'/θ, fastest pair: {ratio[0]:.4f}, slowest pair: {ratio[-1]:.4f} (1/s = {1 / s})")
assert torch.all(ratio[1:] < ratio[:-1])  # the slower the pair, the more it is slowed down
# Slow pairs (no full turn in training) slowed by less than s still leave their trained range:
slow = wavelength > trained
past = slow & (4 * trained * ntk_freq > trained * inv_freq)  # angle at 4x length > any seen
print(f"slow pairs that still reach unseen angles at 4x length: {past.sum()} of {slow.sum()}")
# --8<-- [end:ntk]

# --8<-- [start:dynamic]
dynamic = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": trained}
for length in (2048, 4096, 8192, 16384):
    freq, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=dynamic, seq_len=length)
    print(f"seq_len {length:>5}: slowest pair θ = {freq[-1]:.3e}")
# With factor 1, dynamic NTK at length L is NTK-aware scaling with s = L / trained:
freq_16k, _ = posenc.rope_inv_freq(head_dim, base=base, scaling=dynamic, seq_len=16384)
print(torch.allclose(freq_16k, ntk_freq))
# --8<-- [end:dynamic]

# --8<-- [start:yarn]
yarn = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
yarn_freq, temperature = posenc.rope_inv_freq(head_dim, base=base, scaling=yarn)
kept = torch.isclose(yarn_freq, inv_freq)
interpolated = torch.isclose(yarn_freq, inv_freq / s)
print(
    f"pairs kept: {int(kept.sum())}, interpolated by 1/s: {int(interpolated.sum())}, "
    f"ramp in between: {int((~kept & ~interpolated).sum())}"
)
print(f"attention factor: {temperature:.4f} = 0.1·ln({s:g}) + 1")
assert math.isclose(temperature, 0.1 * math.log(s) + 1)
# --8<-- [end:yarn]

# --8<-- [start:yarn_temperature]
# The factor multiplies cos and sin, so it scales q AND k: logits grow by its square.
rope = posenc.RotaryEmbedding(head_dim, base=base, scaling=yarn)
plain = posenc.RotaryEmbedding(head_dim, base=base, scaling=yarn | {"attention_factor": 1.0})
torch.manual_seed(0)
q, k = torch.randn(1, 1, 8, head_dim), torch.randn(1, 1, 8, head_dim)
q_t, k_t = rope(q, k)
q_1, k_1 = plain(q, k)
logit_ratio = (q_t @ k_t.transpose(-1, -2)) / (q_1 @ k_1.transpose(-1, -2))
print(f"logits scaled by {logit_ratio.mean():.4f} = {temperature:.4f}²")
assert torch.allclose(logit_ratio, torch.full_like(logit_ratio, temperature**2), rtol=1e-4)
# --8<-- [end:yarn_temperature]

# --8<-- [start:llama3]
llama3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}  # Llama 3.1: head_dim 128, rope_theta 500000
l3_default, _ = posenc.rope_inv_freq(128, base=500000.0)
l3_freq, _ = posenc.rope_inv_freq(128, base=500000.0, scaling=llama3)
l3_wavelength = 2 * math.pi / l3_default
l3_kept = torch.isclose(l3_freq, l3_default).sum()
l3_divided = torch.isclose(l3_freq, l3_default / 8).sum()
print(f"wavelength < 8192/4 = 2048, kept:          {l3_kept}")
print(f"wavelength > 8192/1 = 8192, divided by 8:  {l3_divided}")
between = (l3_wavelength >= 2048) & (l3_wavelength <= 8192)
print(f"in between, smoothly blended:              {int(between.sum())}")
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
print(f"attention factor: {attn:.4f} = sqrt(1 + ln 8 / ln {trained})")
# --8<-- [end:longrope]

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
print(
    f"same distance 5000, cached keys: {stale_a:.3f} vs {stale_b:.3f}; "
    f"recomputed: {score(8000, 3000, 8192):.3f}"
)
# --8<-- [end:dynamic_cache]
