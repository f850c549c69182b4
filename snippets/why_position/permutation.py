"""Chapter "Why position information?": attention without positions sees a set, not a sequence.

Run it: python snippets/why_position/permutation.py
"""

# --8<-- [start:equivariance]
import torch
import torch.nn.functional as F

torch.manual_seed(0)
seq_len, dim = 5, 8
x = torch.randn(seq_len, dim)  # 5 token vectors, no position information
w_q, w_k, w_v = (torch.randn(dim, dim) / dim**0.5 for _ in range(3))


def self_attention(x: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """One attention head; (seq, dim) in, (seq, dim) out."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


perm = torch.tensor([3, 0, 4, 1, 2])  # any reordering of the 5 tokens
out = self_attention(x)
out_of_permuted = self_attention(x[perm])

# Attention(PX) == P Attention(X): the same rows, only in a different order
print(torch.allclose(out_of_permuted, out[perm], atol=1e-6))
# --8<-- [end:equivariance]

# --8<-- [start:bag_of_words]
vocab = {"猫": 0, "抓": 1, "老鼠": 2}  # cat, catches, mouse
embedding = torch.randn(len(vocab), dim)


def encode(words: list[str]) -> torch.Tensor:
    """Embed each word, attend, then mean-pool into one sentence vector."""
    ids = torch.tensor([vocab[w] for w in words])
    return self_attention(embedding[ids]).mean(dim=0)


cat_catches_mouse = encode(["猫", "抓", "老鼠"])
mouse_catches_cat = encode(["老鼠", "抓", "猫"])
print(torch.allclose(cat_catches_mouse, mouse_catches_cat, atol=1e-6))
# --8<-- [end:bag_of_words]

# --8<-- [start:with_position]
import posenc


def encode_with_position(words: list[str]) -> torch.Tensor:
    ids = torch.tensor([vocab[w] for w in words])
    # add the sinusoidal code of positions 0, 1, 2 to the word vectors
    h = embedding[ids] + posenc.sinusoidal(len(ids), dim)
    return self_attention(h).mean(dim=0)


a = encode_with_position(["猫", "抓", "老鼠"])
b = encode_with_position(["老鼠", "抓", "猫"])
print(torch.allclose(a, b, atol=1e-6))


def show_distance(lang="en"):
    label = {"en": "distance between the two sentence vectors: ", "zh": "两个句向量的距离："}[lang]
    print(f"{label}{torch.dist(a, b):.3f}")


# --8<-- [end:with_position]

# --8<-- [start:any_encoding]
learned = posenc.LearnedPositionalEmbedding(max_positions=16, dim=dim)  # random init


def encode_with_learned(words: list[str]) -> torch.Tensor:
    ids = torch.tensor([vocab[w] for w in words])
    with torch.no_grad():
        h = learned(embedding[ids].unsqueeze(0)).squeeze(0)  # adds rows 0, 1, 2 of its table
    return self_attention(h).mean(dim=0)


first, second = encode_with_learned(["猫", "抓", "老鼠"]), encode_with_learned(["老鼠", "抓", "猫"])
print(torch.allclose(first, second, atol=1e-6))
# --8<-- [end:any_encoding]


# --8<-- [start:counting]
# Kazemnejad et al. (2023), Theorem 1: with a causal mask, one head can count positions.
# Dimension 0 is a direction only the <bos> token has; ordinary tokens are 0 there.
def counting_head(h: torch.Tensor, causal: bool) -> torch.Tensor:
    """W_Q = 0, so every score is equal and the weights are uniform over what the mask
    allows; W_V keeps dimension 0 only (the <bos> flag)."""
    q = k = torch.zeros(len(h), 1)
    v = h[:, :1]
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)[:, 0]


bos = torch.zeros(1, dim)
bos[0, 0] = 1.0
counted = {}  # sentence -> the positions read back with the causal mask
for seed in (1, 2):  # two different sentences of 7 random tokens, no position information
    words = torch.randn(7, dim, generator=torch.Generator().manual_seed(seed))
    words[:, 0] = 0.0
    out = counting_head(torch.cat((bos, words)), causal=True)  # out[t] = 1 / (t + 1)
    positions = (1 / out - 1).round().int()
    assert torch.equal(positions, torch.arange(8, dtype=torch.int32))
    counted[seed] = positions.tolist()
out = counting_head(torch.cat((bos, words)), causal=False)  # every token sees all 8
unmasked = (1 / out - 1).round().int().tolist()
assert torch.all(out == out[0])  # the same number everywhere: no order left


def show_counts(lang="en"):
    masked, bare = {
        "en": ("sentence {}, causal mask: ", "sentence {}, no mask:     "),
        "zh": ("第 {} 句，因果掩码：", "第 {} 句，不加掩码："),
    }[lang]
    for seed, positions in counted.items():
        print(f"{masked.format(seed)}{positions}")
    print(f"{bare.format(seed)}{unmasked}")  # the last sentence, without the mask


# --8<-- [end:counting]

# --8<-- [start:causal_mask]
# A causal mask lets token i see tokens 0..i only: the mask itself depends on order.
causal_out = self_attention(x, causal=True)
causal_out_of_permuted = self_attention(x[perm], causal=True)
print(torch.allclose(causal_out_of_permuted, causal_out[perm], atol=1e-6))

# The first token attends only to itself, so its output is just its own value vector:
# the model can tell "I am first" even without any position encoding.
print(torch.allclose(causal_out[0], x[0] @ w_v, atol=1e-6))

# ... but one causal layer sees how many tokens came before, not their order: swapping
# tokens 1 and 2 leaves the outputs of tokens 3 and 4 unchanged
swap = torch.tensor([0, 2, 1, 3, 4])
assert torch.allclose(self_attention(x[swap], causal=True)[3:], causal_out[3:], atol=1e-6)
# --8<-- [end:causal_mask]


if __name__ == "__main__":
    show_distance()
    show_counts()
