"""Chapter "Relative position encodings": Shaw et al., Transformer-XL, T5 and DeBERTa.

Run it: python snippets/relative/relative.py
"""

# --8<-- [start:relative_matrix]
import math

import torch

import posenc

torch.manual_seed(0)
r = posenc.relative_positions(5, 5)  # r[i, j] = j - i: key position minus query position
print(r)
# --8<-- [end:relative_matrix]

# --8<-- [start:shaw_clip]
K = 2  # clipping distance: offsets beyond +-K share one embedding
print(r.clamp(-K, K) + K)  # the row of the table used by each (query, key) pair
# --8<-- [end:shaw_clip]

# --8<-- [start:shaw_attention]
n, d = 6, 8  # sequence length, head dimension
q, k, v = torch.randn(n, d), torch.randn(n, d), torch.randn(n, d)
rel_k = posenc.ShawRelativeEmbedding(max_relative_position=K, dim=d)  # a^K, 2K + 1 rows
rel_v = posenc.ShawRelativeEmbedding(max_relative_position=K, dim=d)  # a^V
print(tuple(rel_k.weight.shape), tuple(rel_k(n).shape))  # table, and a[i, j] for every pair

with torch.no_grad():
    a_k, a_v = rel_k(n), rel_v(n)  # (n, n, d) each
    # e[i, j] = q_i . (k_j + a^K_ij) / sqrt(d), split into two matrix products
    scores = (q @ k.T + torch.einsum("id,ijd->ij", q, a_k)) / math.sqrt(d)
    weights = scores.softmax(dim=-1)
    # z_i = sum_j w_ij (v_j + a^V_ij)
    out = weights @ v + torch.einsum("ij,ijd->id", weights, a_v)

    # the same thing, one pair at a time, straight from the formula
    slow = torch.zeros(n, d)
    for i in range(n):
        e = torch.stack([q[i] @ (k[j] + a_k[i, j]) / math.sqrt(d) for j in range(n)])
        w = e.softmax(dim=0)
        slow[i] = sum(w[j] * (v[j] + a_v[i, j]) for j in range(n))
print(torch.allclose(out, slow, atol=1e-6))
# --8<-- [end:shaw_attention]

# --8<-- [start:shaw_translation]
# Only j - i matters: the embeddings for queries 0..5 and for queries 100..105 are the same
with torch.no_grad():
    print(torch.equal(rel_k(6, 6), rel_k(6, 106, offset=100)[:, 100:]))
# --8<-- [end:shaw_translation]

# --8<-- [start:xl_direct]
torch.manual_seed(0)
q_len, mem_len, d = 4, 3, 8
k_len = mem_len + q_len  # keys: 3 cached from the previous segment, then the 4 current tokens
q = torch.randn(q_len, d)  # queries sit at positions mem_len .. k_len - 1
k = torch.randn(k_len, d)
w_r = torch.randn(d, d) / math.sqrt(d)  # projection of the relative encodings
u, v_bias = torch.randn(d), torch.randn(d)  # the two global bias vectors


def rel(distance: int) -> torch.Tensor:
    """Sinusoidal encoding of a distance i - j, projected: W_R R_{i-j}."""
    return w_r @ posenc.sinusoidal(torch.tensor([distance]), d)[0]


# (a) content-content, (b) content-position, (c) global content bias, (d) global position bias
direct = torch.full((q_len, k_len), float("-inf"))
for i in range(q_len):
    query_pos = mem_len + i
    for j in range(query_pos + 1):  # causal: keys up to the query itself
        r_ij = rel(query_pos - j)
        direct[i, j] = q[i] @ k[j] + q[i] @ r_ij + u @ k[j] + v_bias @ r_ij
print(direct.shape)
# --8<-- [end:xl_direct]


# --8<-- [start:xl_shift]
def rel_shift(x: torch.Tensor) -> torch.Tensor:
    """Row i of x holds distances k_len-1 .. 0; shift it so column j holds distance (i + mem) - j."""
    q_len, k_len = x.shape
    padded = torch.cat([x.new_zeros(q_len, 1), x], dim=1)  # (q_len, k_len + 1)
    return padded.view(k_len + 1, q_len)[1:].view(q_len, k_len)


distances = torch.arange(k_len - 1, -1, -1)  # k_len - 1, ..., 1, 0
R = posenc.sinusoidal(distances, d) @ w_r.T  # (k_len, d): row m is W_R R_{k_len-1-m}
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
print("j - i        ", offsets.tolist())
print("bidirectional", both.tolist())
print("causal       ", past.tolist())
# --8<-- [end:t5_buckets]

# --8<-- [start:t5_bias]
torch.manual_seed(0)
bias = posenc.T5RelativeBias(num_heads=12, bidirectional=True)  # T5-base: 12 heads
print(bias)
print(tuple(bias.weight.shape), bias.weight.numel(), "parameters for the whole model")
with torch.no_grad():
    b = bias(5, 5)[None]  # (1, heads, q_len, k_len): added to every layer's attention logits
print(tuple(b.shape))
# a bias depends only on the bucket of j - i: pairs (0, 2) and (2, 4) get the same value
print(torch.equal(b[0, :, 0, 2], b[0, :, 2, 4]))
# --8<-- [end:t5_bias]

# --8<-- [start:far_is_one_bucket]
far = torch.tensor([-128, -1000, -100_000])
print(posenc.t5_relative_bucket(far, bidirectional=False).tolist())
# --8<-- [end:far_is_one_bucket]

# --8<-- [start:deberta]
torch.manual_seed(0)
n, d, k_span = 6, 8, 2  # tokens, head dimension, maximum relative distance k
H = torch.randn(n, d)  # content vectors of the tokens
P = torch.randn(2 * k_span, d)  # relative position embeddings, one per bucket 0 .. 2k-1
w_qc, w_kc, w_qr, w_kr = (torch.randn(d, d) / math.sqrt(d) for _ in range(4))


def delta(i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:
    """DeBERTa's relative distance bucket: i - j + k, clipped to 0 .. 2k - 1."""
    return (i - j + k_span).clamp(0, 2 * k_span - 1)


q_c, k_c = H @ w_qc, H @ w_kc  # content projections
q_r, k_r = P @ w_qr, P @ w_kr  # position projections
i_idx, j_idx = torch.arange(n)[:, None], torch.arange(n)[None, :]
c2c = q_c @ k_c.T  # content -> content
c2p = (q_c @ k_r.T).gather(1, delta(i_idx, j_idx))  # content -> position: Q^c_i . K^r_delta(i,j)
p2c = (
    (k_c @ q_r.T).gather(1, delta(j_idx.T, i_idx.T)).T
)  # position -> content: K^c_j . Q^r_delta(j,i)
scores = (c2c + c2p + p2c) / math.sqrt(3 * d)

slow = torch.zeros(n, n)
for i in range(n):
    for j in range(n):
        dij, dji = delta(torch.tensor(i), torch.tensor(j)), delta(torch.tensor(j), torch.tensor(i))
        slow[i, j] = q_c[i] @ k_c[j] + q_c[i] @ k_r[dij] + k_c[j] @ q_r[dji]
print(torch.allclose(scores, slow / math.sqrt(3 * d), atol=1e-5))
print(delta(i_idx, j_idx))
# --8<-- [end:deberta]

# --8<-- [start:exercise_shaw]
K = 2
table_row = posenc.relative_positions(1, 8, offset=0)[0, 7].clamp(-K, K) + K  # query 0, key 7
print(int(table_row), "= row 2K, the same as for key 2")
# --8<-- [end:exercise_shaw]

# --8<-- [start:exercise_t5]
distances = torch.arange(0, 129)
buckets = posenc.t5_relative_bucket(-distances, bidirectional=False)  # keys in the past: j - i < 0
widths = torch.bincount(buckets, minlength=32)  # how many distances 0..128 share each bucket
print(widths.tolist())
print("bucket 31 starts at distance", int(distances[buckets == 31][0]))
# --8<-- [end:exercise_t5]

# --8<-- [start:comparison]
d_model, heads, layers, head_dim = 768, 12, 12, 64
counts = {
    "sinusoidal (absolute)": 0,
    "learned, 512 positions (absolute)": 512 * d_model,
    "Shaw, K = 16, keys and values, 12 layers": 2 * (2 * 16 + 1) * head_dim * layers,
    "T5 bias, 32 buckets, shared by layers": posenc.T5RelativeBias(heads).weight.numel(),
}
for name, count in counts.items():
    print(f"{name:42s} {count:>8,d}")
# --8<-- [end:comparison]
