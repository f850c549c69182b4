"""Chapter "Relative position encodings": Shaw et al., Transformer-XL, T5 and DeBERTa.

Sign convention: r = j - i, key position minus query position (posenc's, and T5's code).
Where a paper counts the other way (Transformer-XL's R_{i-j}, DeBERTa's delta(i, j)), the code
says so at the formula.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/relative/relative.py
"""

# --8<-- [start:relative_matrix]
import math
import unicodedata

import torch

import posenc

r = posenc.relative_positions(5, 5)  # r[i, j] = j - i: key position minus query position
print(r)
# every diagonal holds one value: a pair's offset does not depend on where the pair sits
assert all(r.diagonal(s).unique().numel() == 1 for s in range(-4, 5))
# --8<-- [end:relative_matrix]

# --8<-- [start:shaw_clip]
K = 2  # clipping distance: offsets beyond +-K share one embedding
print(r.clamp(-K, K) + K)  # the row of the table used by each (query, key) pair
# --8<-- [end:shaw_clip]

# --8<-- [start:shaw_attention]
torch.manual_seed(0)
n, d = 6, 8  # sequence length, head dimension
q, k, v = torch.randn(n, d), torch.randn(n, d), torch.randn(n, d)
rel_k = posenc.ShawRelativeEmbedding(max_relative_position=K, dim=d)  # w^K: 2K + 1 rows
rel_v = posenc.ShawRelativeEmbedding(max_relative_position=K, dim=d)  # w^V
print(tuple(rel_k.weight.shape), tuple(rel_k(n).shape))  # table, and a[i, j] for every pair

with torch.no_grad():
    a_k, a_v = rel_k(n), rel_v(n)  # (n, n, d) each
    # e[i, j] = q_i . (k_j + a^K_ij) / sqrt(d), split into two matrix products
    scores = (q @ k.T + torch.einsum("id,ijd->ij", q, a_k)) / math.sqrt(d)
    weights = scores.softmax(dim=-1)
    # z_i = sum_j w_ij (v_j + a^V_ij)
    out = weights @ v + torch.einsum("ij,ijd->id", weights, a_v)


def clip(x: int, k: int) -> int:
    """The paper's clip(x, k) = max(-k, min(k, x))."""
    return max(-k, min(k, x))


with torch.no_grad():
    # the same thing, one pair at a time: rows w_{clip(j - i, K)} taken from the tables
    slow = torch.zeros(n, d)
    for i in range(n):
        w_key = [rel_k.weight[clip(j - i, K) + K] for j in range(n)]
        w_value = [rel_v.weight[clip(j - i, K) + K] for j in range(n)]
        e = torch.stack([q[i] @ (k[j] + w_key[j]) for j in range(n)]) / math.sqrt(d)
        alpha = e.softmax(dim=0)
        slow[i] = sum(alpha[j] * (v[j] + w_value[j]) for j in range(n))
print(torch.allclose(out, slow, atol=1e-6))
# --8<-- [end:shaw_attention]

# --8<-- [start:shaw_translation]
# Only j - i matters: the embeddings for queries 0..5 and for queries 100..105 are the same
with torch.no_grad():
    print(torch.equal(rel_k(6, 6), rel_k(6, 106, offset=100)[:, 100:]))
# --8<-- [end:shaw_translation]


# --8<-- [start:xl_collision]
def pad(text: str, width: int) -> str:
    """Left-align text in `width` columns of a terminal (a Chinese character takes two)."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - shown, 0)


torch.manual_seed(0)
seg, d = 4, 8  # segment length L, model width
w_q, w_k = torch.randn(d, d), torch.randn(d, d)
u = posenc.sinusoidal(seg, d)  # absolute codes U_0 .. U_{L-1}: every segment starts at 0
key_codes = torch.cat([u, u])  # the keys: the cached segment, then the current one
query = u[2]  # a query at position 2 of the current segment
position_term = (w_k @ key_codes.T).T @ (w_q @ query)  # position-only part of each score
# relative instead: the query is token L + 2 of the keys, so its distance to key c is L + 2 - c
i_minus_j = (seg + 2) - torch.arange(2 * seg)
assert torch.equal(position_term[:seg], position_term[seg:])  # cached key j = current key j
assert set(i_minus_j[:seg].tolist()).isdisjoint(i_minus_j[seg:].tolist())  # never the same


def show_collision(lang: str = "en") -> None:
    labels = {
        "en": (
            "absolute: cached keys 0-3",
            "absolute: current keys 0-3",
            "i - j: cached keys 0-3",
            "i - j: current keys 0-3",
        ),
        "zh": (
            "绝对位置：缓存的 key 0-3",
            "绝对位置：当前段的 key 0-3",
            "i - j：缓存的 key 0-3",
            "i - j：当前段的 key 0-3",
        ),
    }[lang]
    rows = (position_term[:seg], position_term[seg:], i_minus_j[:seg], i_minus_j[seg:])
    for label, row in zip(labels, rows, strict=True):
        values = [f"{x:6.2f}" if row.is_floating_point() else f"{x:6d}" for x in row.tolist()]
        print(pad(label, 27), " ".join(values))


# --8<-- [end:xl_collision]

# --8<-- [start:xl_direct]
torch.manual_seed(0)
q_len, mem_len, d = 4, 3, 8
k_len = mem_len + q_len  # keys: 3 cached from the previous segment, then the 4 current tokens
q = torch.randn(q_len, d)  # queries sit at positions mem_len .. k_len - 1
k = torch.randn(k_len, d)
w_r = torch.randn(d, d) / math.sqrt(d)  # W_R, the projection of the relative encodings
u, v_bias = torch.randn(d), torch.randn(d)  # the two global bias vectors u and v


def rel(distance: int) -> torch.Tensor:
    """W_R R_{i-j}: the sinusoidal encoding of the distance i - j >= 0, projected."""
    return w_r @ posenc.sinusoidal(torch.tensor([distance]), d)[0]


# (a) content-content, (b) content-position, (c) global content bias, (d) global position bias
direct = torch.full((q_len, k_len), float("-inf"))
for i in range(q_len):
    query_pos = mem_len + i
    for j in range(query_pos + 1):  # causal: keys up to the query itself
        r_ij = rel(query_pos - j)  # Transformer-XL's distance: query minus key
        direct[i, j] = q[i] @ k[j] + q[i] @ r_ij + u @ k[j] + v_bias @ r_ij
print(direct.shape)
# --8<-- [end:xl_direct]


# --8<-- [start:xl_shift]
def rel_shift(x: torch.Tensor) -> torch.Tensor:
    """Row i of x holds distances k_len-1 .. 0; shift it so column j holds distance (i + mem) - j."""
    q_len, k_len = x.shape
    padded = torch.cat([x.new_zeros(q_len, 1), x], dim=1)  # (q_len, k_len + 1)
    return padded.view(k_len + 1, q_len)[1:].view(q_len, k_len)


distances = torch.arange(k_len - 1, -1, -1)  # k_len - 1, ..., 1, 0: column c holds k_len - 1 - c
R = posenc.sinusoidal(distances, d) @ w_r.T  # (k_len, d): row c is W_R R_{k_len-1-c}
ac = (q + u) @ k.T  # terms (a) + (c): (q_len, k_len)
bd = rel_shift((q + v_bias) @ R.T)  # terms (b) + (d), one matmul then the shift
fast = ac + bd
causal = torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=mem_len)
fast = fast.masked_fill(~causal, float("-inf"))
print(torch.allclose(fast, direct, atol=1e-5))
# --8<-- [end:xl_shift]

# --8<-- [start:t5_buckets]
offsets = torch.tensor([-300, -128, -100, -50, -20, -10, -8, -7, -1, 0, 1, 7, 8, 10, 50, 128, 300])
both = posenc.t5_relative_bucket(offsets, bidirectional=True, num_buckets=32, max_distance=128)
past = posenc.t5_relative_bucket(offsets, bidirectional=False, num_buckets=32, max_distance=128)


def show_buckets(lang: str = "en") -> None:
    labels = {"en": ("j - i", "bidirectional", "causal"), "zh": ("j - i", "双向", "因果")}[lang]
    for label, row in zip(labels, (offsets, both, past), strict=True):
        print(pad(label, 14), row.tolist())


# --8<-- [end:t5_buckets]

# --8<-- [start:t5_last_bucket]
dists = torch.arange(0, 1000)


def last_bucket(relative_position: torch.Tensor, bidirectional: bool) -> tuple[int, int]:
    """The highest bucket these offsets reach, and the first distance that lands in it."""
    buckets = posenc.t5_relative_bucket(relative_position, bidirectional=bidirectional)
    top = int(buckets.max())
    return top, int(dists[buckets == top][0])


behind_enc, start_enc = last_bucket(-dists, bidirectional=True)  # keys before the query
ahead_enc, start_ahead = last_bucket(dists, bidirectional=True)  # keys after it
behind_dec, start_dec = last_bucket(-dists, bidirectional=False)
assert start_ahead == start_enc  # the two directions are symmetric


def show_last_bucket(lang: str = "en") -> None:
    lines = {
        "en": (
            f"bidirectional: from distance {start_enc} on, one bucket per direction "
            f"({behind_enc} before the query, {ahead_enc} after it)",
            f"causal: from distance {start_dec} on, one bucket ({behind_dec})",
        ),
        "zh": (
            f"双向：距离 {start_enc} 及以上，每个方向只剩一个桶"
            f"（query 之前用 {behind_enc} 号，之后用 {ahead_enc} 号）",
            f"因果：距离 {start_dec} 及以上，全部落进 {behind_dec} 号桶",
        ),
    }[lang]
    print(*lines, sep="\n")


# --8<-- [end:t5_last_bucket]

# --8<-- [start:t5_bias]
torch.manual_seed(0)
encoder_bias = posenc.T5RelativeBias(num_heads=12, bidirectional=True)  # T5-base: 12 heads
decoder_bias = posenc.T5RelativeBias(num_heads=12, bidirectional=False)  # its own table
print(encoder_bias)
with torch.no_grad():
    b = encoder_bias(5, 5)  # (heads, q_len, k_len): added to every layer's attention logits
print(tuple(b.shape))
# the bias depends only on the bucket of j - i: pairs (0, 2) and (2, 4) get the same 12 values
print(torch.equal(b[:, 0, 2], b[:, 2, 4]))
assert not torch.equal(b[:, 0, 2], b[:, 2, 0])  # j - i = +2 and -2: different buckets
per_stack = encoder_bias.weight.numel()
both_stacks = per_stack + decoder_bias.weight.numel()


def show_t5_parameters(lang: str = "en") -> None:
    line = {
        "en": "{shape}: {per_stack} parameters per stack, {both} for encoder and decoder",
        "zh": "{shape}：编码器、解码器各 {per_stack} 个参数，共 {both} 个",
    }[lang]
    shape = tuple(encoder_bias.weight.shape)
    print(line.format(shape=shape, per_stack=per_stack, both=both_stacks))


# --8<-- [end:t5_bias]

# --8<-- [start:far_is_one_bucket]
far = torch.tensor([-113, -1000, -100_000])  # keys 113, 1000 and 100 000 tokens back
print(posenc.t5_relative_bucket(far, bidirectional=False).tolist())
# --8<-- [end:far_is_one_bucket]

# --8<-- [start:deberta]
torch.manual_seed(0)
n, d, k_span = 6, 8, 2  # tokens, head dimension, maximum relative distance k
H = torch.randn(n, d)  # content vectors of the tokens
P = torch.randn(2 * k_span, d)  # relative position embeddings, rows 0 .. 2k-1
w_qc, w_kc, w_qr, w_kr = (torch.randn(d, d) / math.sqrt(d) for _ in range(4))


def delta(i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
    """DeBERTa's delta(i, j): the distance i - j (query minus key), clipped, plus k."""
    return (i - j).clamp(-k_span, k_span - 1) + k_span


q_c, k_c = H @ w_qc, H @ w_kc  # content projections
q_r, k_r = P @ w_qr, P @ w_kr  # position projections
i_idx, j_idx = torch.arange(n)[:, None], torch.arange(n)[None, :]
c2c = q_c @ k_c.T  # content -> content
c2p = (q_c @ k_r.T).gather(1, delta(i_idx, j_idx))  # content -> position: Q^c_i . K^r_delta(i,j)
# position -> content: K^c_j . Q^r_delta(j,i); rows of (k_c @ q_r.T) are keys, so gather, then .T
p2c = (k_c @ q_r.T).gather(1, delta(j_idx.T, i_idx.T)).T
scores = (c2c + c2p + p2c) / math.sqrt(3 * d)


def delta_paper(i: int, j: int) -> int:
    """Equation 3 of the paper, case by case."""
    if i - j <= -k_span:
        return 0
    if i - j >= k_span:
        return 2 * k_span - 1
    return i - j + k_span


slow = torch.zeros(n, n)
for i in range(n):
    for j in range(n):
        c2p_ij = q_c[i] @ k_r[delta_paper(i, j)]
        p2c_ij = k_c[j] @ q_r[delta_paper(j, i)]
        slow[i, j] = (q_c[i] @ k_c[j] + c2p_ij + p2c_ij) / math.sqrt(3 * d)
print(torch.allclose(scores, slow, atol=1e-5))
print(delta(i_idx, j_idx))
# --8<-- [end:deberta]

# --8<-- [start:deberta_code]
# The released code indexes position -> content with delta(i, j), the index of content -> position
p2c_code = (k_c @ q_r.T).gather(1, delta(i_idx, j_idx).T).T  # K^c_j . Q^r_delta(i,j)
print(torch.allclose(p2c_code, p2c))
# --8<-- [end:deberta_code]

# --8<-- [start:comparison]
d_model, heads, layers, head_dim = 768, 12, 12, 64
shaw = 2 * (2 * 16 + 1) * head_dim * layers  # w^K and w^V, 2K + 1 rows each, every layer
rows = [  # (English label, Chinese label, number of parameters)
    ("sinusoidal", "正弦位置编码", 0),
    ("learned, 512 positions", "可学习位置嵌入，512 个位置", 512 * d_model),
    ("Shaw, K = 16, heads share the tables", "Shaw，K = 16，各头共用一张表", shaw),
    ("Shaw, K = 16, a table per head", "Shaw，K = 16，每个头一张表", shaw * heads),
    (
        "Transformer-XL: W_R per layer, u, v",
        "Transformer-XL：每层一个 W_R，外加 u、v",
        layers * d_model * d_model + 2 * d_model,
    ),
    ("T5 bias, one stack", "T5 偏置，只算编码器", posenc.T5RelativeBias(heads).weight.numel()),
    (
        "DeBERTa v1, k = 512: P, W_qr and W_kr",
        "DeBERTa v1，k = 512：P、W_qr 和 W_kr",
        2 * 512 * d_model + layers * 2 * d_model * d_model,
    ),
]


def show_comparison(lang: str = "en") -> None:
    for english, chinese, count in rows:
        print(f"{count:>12,d}  {english if lang == 'en' else chinese}")


# --8<-- [end:comparison]


# --8<-- [start:exercise_shaw]
def show_exercise_shaw(lang: str = "en") -> None:
    K = 2
    row = posenc.relative_positions(1, 8, offset=0)[0, 7].clamp(-K, K) + K  # query 0, key 7
    line = {
        "en": "row {row} = 2K, the same as for key 2",
        "zh": "第 {row} 行，即 2K，与 key 2 用的是同一行",
    }[lang]
    print(line.format(row=int(row)))


# --8<-- [end:exercise_shaw]

# --8<-- [start:exercise_t5]
distances = torch.arange(0, 129)
buckets = posenc.t5_relative_bucket(-distances, bidirectional=False)  # keys in the past: j - i < 0
widths = torch.bincount(buckets, minlength=32)  # how many distances 0..128 share each bucket
assert (widths[:16] == 1).all() and int(widths.argmax()) == 31


def show_widths(lang: str = "en") -> None:
    print(widths.tolist())
    line = {
        "en": "widest up to 128: bucket {b} ({w} distances), and it takes every distance beyond",
        "zh": "到 128 为止最宽的是 {b} 号桶（{w} 个距离），更远的距离也全归它",
    }[lang]
    print(line.format(b=int(widths.argmax()), w=int(widths.max())))


# --8<-- [end:exercise_t5]

# --8<-- [start:exercise_sign]
behind = torch.arange(0, 6)  # keys 0 .. 5 tokens before the query
right = posenc.t5_relative_bucket(-behind, bidirectional=False)  # j - i, as T5 counts
flipped = posenc.t5_relative_bucket(behind, bidirectional=False)  # i - j passed by mistake
print(right.tolist(), flipped.tolist())
# --8<-- [end:exercise_sign]

show_collision()
show_buckets()
show_last_bucket()
show_t5_parameters()
show_comparison()
show_exercise_shaw()
show_widths()
