"""Chapter "RoPE in compressed attention: MLA": a tiny multi-head latent attention (MLA), why
RoPE on the compressed keys breaks the absorbed form, DeepSeek's decoupled RoPE key, the KV
cache per token, and the YaRN mscale settings of DeepSeek-V2/V3.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/decoupled_rope/mla.py
"""

# --8<-- [start:absorb]
import torch

import posenc

torch.manual_seed(0)
dt = torch.float64  # exact enough that "equal" means equal up to rounding
d_model, heads, d_nope, d_latent, seq = 32, 4, 8, 6, 6
h = torch.randn(seq, d_model, dtype=dt)  # six different tokens: (seq, d_model)

W_dkv = torch.randn(d_latent, d_model, dtype=dt) / d_model**0.5  # down-projection
W_uk = torch.randn(heads, d_nope, d_latent, dtype=dt) / d_latent**0.5  # up-projection, per head
W_q = torch.randn(heads, d_nope, d_model, dtype=dt) / d_model**0.5  # queries, per head

c = h @ W_dkv.T  # (seq, d_latent): the latent, the only thing the cache keeps
k = torch.einsum("hdc,sc->hsd", W_uk, c)  # keys rebuilt from it: (heads, seq, d_nope)
q = torch.einsum("hdm,sm->hsd", W_q, h)  # (heads, seq, d_nope)
scores = q @ k.transpose(-1, -2)  # (heads, seq, seq): q_m . k_n

q_absorbed = torch.einsum("hsd,hdc->hsc", q, W_uk)  # W_uk^T q: a query in latent space
scores_absorbed = q_absorbed @ c.T  # never builds a key
print(tuple(q_absorbed.shape), torch.allclose(scores, scores_absorbed, atol=1e-12))
# the value side: W_uv applied once to the weighted latents gives the same output
W_uv = torch.randn(heads, d_nope, d_latent, dtype=dt) / d_latent**0.5
weights = scores.softmax(-1)  # (heads, seq, seq)
out = weights @ torch.einsum("hdc,sc->hsd", W_uv, c)  # values rebuilt: (heads, seq, d_nope)
out_absorbed = torch.einsum("hdc,hsc->hsd", W_uv, weights @ c)  # one shared value: the latent
assert torch.allclose(out, out_absorbed, atol=1e-12)
# --8<-- [end:absorb]


# --8<-- [start:rope_breaks]
def rotation(position: int, dim: int) -> torch.Tensor:
    """The (dim, dim) RoPE matrix R_p: R_p @ x rotates x to position p (interleaved pairs)."""
    cos, sin = posenc.rotary_cos_sin(
        torch.tensor([position]), posenc.default_inv_freq(dim), layout="interleaved", dtype=dt
    )
    eye = torch.eye(dim, dtype=dt)  # rotating the rows of I gives the columns of R_p
    return posenc.apply_rotary(eye, cos, sin, layout="interleaved").T


positions = torch.arange(seq)
R = torch.stack([rotation(p, d_nope) for p in range(seq)])  # (seq, d_nope, d_nope)
q_rot = torch.einsum("sij,hsj->hsi", R, q)  # R_m q_m
k_rot = torch.einsum("sij,hsj->hsi", R, k)  # RoPE on the rebuilt keys: R_n W_uk c_n
scores_rope = q_rot @ k_rot.transpose(-1, -2)  # what the model computes

# absorb as before, with the query rotated: W_uk^T R_m q_m . c_n
naive = torch.einsum("hsd,hdc->hsc", q_rot, W_uk) @ c.T
print(torch.allclose(scores_rope, naive, atol=1e-12))

# the exact form: q_m^T R_(n-m) W_uk c_n, one matrix R_(n-m) W_uk per distance n - m
exact = torch.empty_like(scores_rope)
for m in range(seq):
    for n in range(seq):
        key_side = R[n] @ R[m].T @ W_uk  # R_n R_m^T = R_(n-m): depends on both positions
        exact[:, m, n] = torch.einsum("hd,hdc,c->h", q[:, m], key_side, c[n])
distances = {n - m for m in range(seq) for n in range(seq)}
print(torch.allclose(scores_rope, exact, atol=1e-12), len(distances))
# --8<-- [end:rope_breaks]

# --8<-- [start:decoupled]
d_rope = 4  # the small rotated part of every head
W_qr = torch.randn(heads, d_rope, d_model, dtype=dt) / d_model**0.5  # one per head
W_kr = torch.randn(d_rope, d_model, dtype=dt) / d_model**0.5  # ONE key for all heads


def decoupled_scores(pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores of the heads (heads, seq, seq), computed two ways: explicit keys, and absorbed."""
    cos, sin = posenc.rotary_cos_sin(
        pos, posenc.default_inv_freq(d_rope), layout="interleaved", dtype=dt
    )
    q_r = posenc.apply_rotary(torch.einsum("hdm,sm->hsd", W_qr, h), cos, sin, layout="interleaved")
    k_r = posenc.apply_rotary(h @ W_kr.T, cos, sin, layout="interleaved")  # (seq, d_rope)
    # explicit: every head's key is [k^C ; k^R], its query [q^C ; q^R]
    keys = torch.cat((k, k_r.expand(heads, seq, d_rope)), dim=-1)  # (heads, seq, 12)
    explicit = torch.cat((q, q_r), dim=-1) @ keys.transpose(-1, -2)
    # absorbed: latent part + rotated part, from the cache (c, k_r) alone
    absorbed = q_absorbed @ c.T + q_r @ k_r.T
    return explicit, absorbed


explicit, absorbed = decoupled_scores(positions)
print(torch.allclose(explicit, absorbed, atol=1e-12))
shifted, _ = decoupled_scores(positions + 100)  # every token 100 positions later
print(torch.allclose(explicit, shifted, atol=1e-12))


def show_cached(lang: str = "en") -> None:
    """What each token leaves in the cache (c and k^R), against a key and a value per head."""
    line = {"en": "cached per token: {} numbers instead of {}",
            "zh": "每个 token 缓存 {} 个数，而不是 {} 个"}[lang]  # fmt: skip
    print(line.format(d_latent + d_rope, 2 * heads * d_nope))


# --8<-- [end:decoupled]


# --8<-- [start:cache]
def cache_per_token(heads=128, head_dim=128, groups=8, latent=512, rope_dim=64) -> dict:
    """Numbers cached per token and layer (DeepSeek-V2/V3 shapes), as in DeepSeek-V2's Table 1."""
    return {
        "MHA": 2 * heads * head_dim,  # a key and a value per head
        "GQA": 2 * groups * head_dim,  # a key and a value per group
        "MQA": 2 * head_dim,  # one key and one value
        "MLA": latent + rope_dim,  # the latent c and the shared rotated key k^R
    }


def show_cache(layers: int = 61, lang: str = "en") -> None:
    labels = {
        "en": ["attention", "per layer", f"{layers} layers, bf16", "MLA = GQA with {} groups"],
        "zh": ["注意力", "每层", f"{layers} 层，bf16", "MLA 相当于 {} 组的 GQA"],
    }[lang]
    names = {"GQA": "GQA (8 groups)" if lang == "en" else "GQA（8 组）"}
    sizes = cache_per_token()
    print(_pad(labels[0], 15) + _pad(labels[1], 10, right=True) + _pad(labels[2], 17, right=True))
    for name, size in sizes.items():
        kib = size * layers * 2 / 1024  # 2 bytes per number in bf16
        print(f"{_pad(names.get(name, name), 15)}{size:10d}{kib:13.1f} KiB")
    print(labels[3].format(sizes["MLA"] / (2 * 128)))  # GQA caches 2 * 128 numbers per group


def _pad(text: str, width: int, right: bool = False) -> str:
    """Pad to a terminal column width: a Chinese character takes two columns."""
    import unicodedata

    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * (width - shown) + text if right else text + " " * (width - shown)


# --8<-- [end:cache]

# --8<-- [start:mscale]
deepseek_v3 = {  # rope_scaling of DeepSeek-V3's config.json, with rope_theta
    "rope_type": "yarn",
    "rope_theta": 10000.0,
    "factor": 40.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32,
    "beta_slow": 1,
    "mscale": 1.0,
    "mscale_all_dim": 1.0,
}


def softmax_scale(rope: dict, qk_head_dim: int = 192) -> float:
    """The factor in front of q . k: 1/sqrt(192), times YaRN's 0.1 m ln s + 1 squared, with
    m = mscale_all_dim."""
    return qk_head_dim**-0.5 * posenc.yarn_mscale(rope["factor"], rope["mscale_all_dim"]) ** 2


inv_freq, table_factor = posenc.rope_inv_freq(64, scaling=deepseek_v3)  # the 64 rotated dims
ratio = inv_freq / posenc.default_inv_freq(64)  # 1 = untouched, 1/40 = interpolated
kept, divided = torch.isclose(ratio, torch.tensor(1.0)), torch.isclose(ratio, torch.tensor(1 / 40))
# on cos and sin: mscale / mscale_all_dim, both 1 here
assert table_factor == posenc.yarn_mscale(40, 1.0) / posenc.yarn_mscale(40, 1.0)


def show_mscale(lang: str = "en") -> None:
    labels = {
        "en": ("cos/sin factor: ", "pairs kept: ", "pairs divided by 40: ", "softmax scale: ", "x"),
        "zh": (
            "cos/sin 的系数：",
            "保持原频率的维度对：",
            "除以 40 的维度对：",
            "softmax 缩放系数：",
            "×",
        ),
    }[lang]
    print(f"{labels[0]}{table_factor}")
    print(f"{labels[1]}{kept.nonzero().flatten().tolist()}")
    print(f"{labels[2]}{divided.nonzero().flatten().tolist()}")
    print(f"{labels[3]}{192**-0.5:.4f} {labels[4]} {posenc.yarn_mscale(40, 1.0) ** 2:.4f} = "
          f"{softmax_scale(deepseek_v3):.4f}")  # fmt: skip


# --8<-- [end:mscale]

# --8<-- [start:mistake_rope_key]
per_head_keys = 512 + 128 * 64  # the latent, plus a rotated key for each of the 128 heads


def show_per_head_keys(lang: str = "en") -> None:
    line = {"en": "{} instead of {}", "zh": "{} 个数，而不是 {} 个"}[lang]
    print(line.format(per_head_keys, 512 + 64))


# --8<-- [end:mistake_rope_key]

# --8<-- [start:mistake_temperature]
generic = {k: v for k, v in deepseek_v3.items() if not k.startswith("mscale")}
_, generic_factor = posenc.rope_inv_freq(64, scaling=generic)  # plain YaRN: on cos and sin
right = {"q^C.k^C": softmax_scale(deepseek_v3), "q^R.k^R": softmax_scale(deepseek_v3)}
wrong = {"q^C.k^C": 192**-0.5, "q^R.k^R": 192**-0.5 * generic_factor**2}


def show_temperature(lang: str = "en") -> None:
    line = {"en": "{}: {:.4f} (DeepSeek)  {:.4f} (cos/sin only)",
            "zh": "{}：{:.4f}（DeepSeek）  {:.4f}（只乘在 cos/sin 上）"}[lang]  # fmt: skip
    for part in right:
        print(line.format(part, right[part], wrong[part]))


# --8<-- [end:mistake_temperature]

# --8<-- [start:exercise]
lite = cache_per_token(heads=16)  # DeepSeek-V2-Lite: 16 heads of 128, 27 layers
v3 = cache_per_token()  # DeepSeek-V3: 128 heads, 61 layers
tokens = 128 * 1024
assert lite["MHA"] / lite["MLA"] == 2 * 16 * 128 / 576  # 7.1 times less


def show_exercise(lang: str = "en") -> None:
    lines = {
        "en": ("V2-Lite bytes per token: {} MHA: {}", "V3, {} tokens, {}: {:.1f} GiB"),
        "zh": (
            "V2-Lite 每个 token 的缓存：MLA {} 字节，MHA {} 字节",
            "V3，{} 个 token，{}：{:.1f} GiB",
        ),
    }[lang]
    print(lines[0].format(lite["MLA"] * 27 * 2, lite["MHA"] * 27 * 2))
    for name in ("MLA", "GQA", "MHA"):
        print(lines[1].format(tokens, name, v3[name] * 61 * 2 * tokens / 2**30))


# --8<-- [end:exercise]

if __name__ == "__main__":
    show_cached()
    show_cache()
    show_mscale()
    show_per_head_keys()
    show_temperature()
    show_exercise()
