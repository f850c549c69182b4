"""Chapter "Sinusoidal encoding": the table of Vaswani et al. (2017) and its properties.

Run it: python snippets/sinusoidal/sinusoidal.py
"""

# --8<-- [start:table]
import math

import torch

import posenc

pe = posenc.sinusoidal(100, 16)  # positions 0..99, d_model = 16
print(pe.shape, pe.dtype)
# even dimensions hold sines, odd dimensions cosines: position 0 is [0, 1, 0, 1, ...]
print(pe[0].tolist()[:6])
# --8<-- [end:table]

# --8<-- [start:two_forms]
d_model = 16
i = torch.arange(d_model // 2, dtype=torch.float64)  # pair index 0..d/2-1
as_division = 1.0 / 10000 ** (2 * i / d_model)  # omega_i = 1 / 10000^(2i/d)
as_exp = torch.exp(-2 * i * math.log(10000.0) / d_model)  # omega_i = exp(-2i ln(10000) / d)
print(torch.allclose(as_division, as_exp, rtol=1e-12, atol=0))

# the table built by hand from either form equals posenc's
p = torch.arange(100, dtype=torch.float64)[:, None]
by_hand = torch.stack((torch.sin(p * as_exp), torch.cos(p * as_exp)), dim=-1).flatten(1)
print(torch.allclose(by_hand.float(), pe, atol=1e-6))
# --8<-- [end:two_forms]

# --8<-- [start:worked_example]
row = posenc.sinusoidal(torch.tensor([2]), 8, dtype=torch.float64)[0]  # position 2, d_model = 8
for dim, value in enumerate(row.tolist()):
    pair = dim // 2
    kind = "sin" if dim % 2 == 0 else "cos"
    angle = 2 / 10000 ** (2 * pair / 8)
    print(f"PE(2, {dim}) = {kind}(2 / 10000^({2 * pair}/8)) = {kind}({angle:g}) = {value:.4f}")
# --8<-- [end:worked_example]

# --8<-- [start:rounding]
value = math.cos(2 / 1000)  # PE(2, 7) for d_model = 8
print(f"{value:.7f} -> {value:.4f}")
assert f"{value:.4f}" == "1.0000" and f"{value:.4f}" != "0.9999"
# --8<-- [end:rounding]

# --8<-- [start:embedding_scale]
d_model = 512
torch.manual_seed(0)
# 1000 token embeddings initialised as tensor2tensor and fairseq do: each entry N(0, 1/d_model)
tokens = torch.randn(1000, d_model, dtype=torch.float64) / math.sqrt(d_model)
pe_512 = posenc.sinusoidal(256, d_model, dtype=torch.float64)


def mean_cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a, b, dim=-1).mean().item()


cosines = {}  # scale -> (two tokens at one position, one token at two positions)
for scale in (1.0, math.sqrt(d_model)):
    x = scale * tokens
    # two different tokens at the same position 100
    same_position = mean_cosine(x[:500] + pe_512[100], x[500:] + pe_512[100])
    # the same token at positions 100 and 200
    same_token = mean_cosine(x + pe_512[100], x + pe_512[200])
    cosines[scale] = same_position, same_token
    if scale == 1.0:
        assert same_position > 0.99  # unscaled: the input says where, hardly what
    else:
        assert same_position < 0.5 < same_token  # scaled: the token dominates
# PyTorch's nn.Embedding starts from N(0, 1): its rows are already about sqrt(d_model) long
default_rows = torch.nn.Embedding(1000, d_model).weight.detach()


def show_embedding_scale(lang="en"):
    lines = {
        "en": ("length of a token embedding: {:.2f}", "length of PE(p): {:.2f}",
               "x {:5.2f}: two tokens at one position {:.3f}, one token at two positions {:.3f}",
               "nn.Embedding default row: {:.1f}"),
        "zh": ("词嵌入的模长：{:.2f}", "PE(p) 的模长：{:.2f}",
               "乘以 {:5.2f}：同一位置、不同 token {:.3f}，同一 token、不同位置 {:.3f}",
               "nn.Embedding 默认初始化，每行的模长：{:.1f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(tokens.norm(dim=-1).mean()))
    print(lines[1].format(pe_512.norm(dim=-1).mean()))
    for scale, (same_position, same_token) in cosines.items():
        print(lines[2].format(scale, same_position, same_token))
    print(lines[3].format(default_rows.norm(dim=-1).mean()))


# --8<-- [end:embedding_scale]


# --8<-- [start:layouts]
def sin_cos_concatenated(n: int, d: int, spacing: str = "paper") -> torch.Tensor:
    """[sin | cos] table: all d/2 sines first, then all d/2 cosines (tensor2tensor, fairseq)."""
    i = torch.arange(d // 2, dtype=torch.float64)
    if spacing == "paper":
        omega = 10000.0 ** (-2 * i / d)  # omega_i = 10000^(-2i/d), as in the paper
    else:  # "tensor2tensor" (and fairseq): omega_i = 10000^(-i/(d/2 - 1))
        omega = 10000.0 ** (-i / (d // 2 - 1))
    angles = torch.arange(n, dtype=torch.float64)[:, None] * omega
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


interleaved = posenc.sinusoidal(2048, 512, dtype=torch.float64)  # the paper's layout
# [sin | cos] dimension i is interleaved dimension 2i; dimension 256 + i is 2i + 1
order = torch.cat((torch.arange(0, 512, 2), torch.arange(1, 512, 2)))
same_frequencies = sin_cos_concatenated(2048, 512)
print(torch.allclose(interleaved[:, order], same_frequencies, atol=1e-3))  # float32 angles
print(torch.allclose(interleaved, same_frequencies, atol=1e-3))  # without the reordering

i = torch.arange(256, dtype=torch.float64)
omega_paper, omega_t2t = 10000.0 ** (-2 * i / 512), 10000.0 ** (-i / 255)
lower = 1 - omega_t2t[-1] / omega_paper[-1]
t2t = sin_cos_concatenated(2048, 512, spacing="tensor2tensor")
gaps = {p: torch.dist(t2t[p], same_frequencies[p]) for p in (10, 100, 512, 2047)}
assert torch.all(omega_t2t <= omega_paper) and omega_t2t[0] == omega_paper[0] == 1


def show_spacings(lang="en"):
    lines = {
        "en": ("slowest pair: paper {:.4e}, tensor2tensor/fairseq {:.4e}",
               "tensor2tensor/fairseq frequencies are lower by up to {:.1%}",
               "p = {:4d}: the two [sin | cos] tables are {:5.2f} apart"),
        "zh": ("最慢一对的频率：论文 {:.4e}，tensor2tensor/fairseq {:.4e}",
               "tensor2tensor/fairseq 的频率最多低 {:.1%}",
               "p = {:4d}：两张 [sin | cos] 表相距 {:5.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(omega_paper[-1], omega_t2t[-1]))
    print(lines[1].format(lower))
    for p, gap in gaps.items():
        print(lines[2].format(p, gap))


# --8<-- [end:layouts]

# --8<-- [start:distinct]
big = posenc.sinusoidal(2048, 512).double()  # a realistic size: 2048 positions, d_model = 512
distances = torch.cdist(big, big)  # distances[p, q] = ||PE(p) - PE(q)||
distances.fill_diagonal_(float("inf"))


def show_closest(lang="en"):
    line = {"en": "closest pair of different positions: {:.4f} apart",
            "zh": "两个不同位置之间的最小距离：{:.4f}"}[lang]  # fmt: skip
    print(line.format(distances.min()))


# --8<-- [end:distinct]

# --8<-- [start:bounded]
norms = big.norm(dim=-1)  # each (sin, cos) pair has length 1, so ||PE(p)||^2 = d/2
same_norm = torch.allclose(norms, torch.full_like(norms, math.sqrt(512 / 2)))


def show_bounded(lang="en"):
    line = {"en": "values in [{:.4f}, {:.4f}]", "zh": "取值范围：[{:.4f}, {:.4f}]"}[lang]
    print(line.format(big.min(), big.max()))
    print(same_norm)


# --8<-- [end:bounded]


# --8<-- [start:rotation]
def shift_matrix(k: int, d: int, base: float = 10000.0) -> torch.Tensor:
    """Block-diagonal M_k with PE(p + k) = M_k PE(p) for every p."""
    omega = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    c, s = torch.cos(k * omega), torch.sin(k * omega)
    blocks = [torch.tensor([[c[j], s[j]], [-s[j], c[j]]]) for j in range(d // 2)]
    return torch.block_diag(*blocks)  # acts on each (sin, cos) pair


table = posenc.sinusoidal(1000, 64, dtype=torch.float64)
for k in (1, 7, 100):
    m_k = shift_matrix(k, 64)
    shifted = table[:-k] @ m_k.T  # row p becomes M_k PE(p)
    print(k, torch.allclose(shifted, table[k:], atol=1e-4))  # float32 angles: ~1e-5 error
# M_k does not depend on p: one matrix serves every position
# --8<-- [end:rotation]

# --8<-- [start:dot_product]
d = 512
omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
gram = big @ big.T  # gram[p, q] = PE(p) . PE(q), 2048 x 2048
offsets = torch.arange(300)[:, None] - torch.arange(300)[None, :]  # p - q on a 300 x 300 corner
sum_of_cosines = torch.cos(offsets[..., None] * omega).sum(-1)  # sum_i cos(omega_i (p - q))
print(torch.allclose(gram[:300, :300], sum_of_cosines, atol=1e-3))
print(torch.allclose(gram, gram.T))  # the same for p - q = k and p - q = -k
for k in (0, 1, 10, 100, 1000):
    print(f"k = {k:4d}: PE(p).PE(p+k) = {gram[0, k]:7.2f}")
# --8<-- [end:dot_product]

# --8<-- [start:not_inverse_distance]
curve = gram[0]  # f(k) = PE(0) . PE(k), k = 0..2047
ups = torch.nonzero(curve[1:] > curve[:-1]).flatten() + 1
assert torch.all(curve[1:44] < curve[:43])  # strictly falling up to k = 43


def show_not_inverse(lang="en"):
    lines = {
        "en": ("first offset where f goes up again: k = {}",
               "f({}) / f(1) = {:.3f}  (1/|k| would give {})",
               "smallest f(k) for k < 2048: {:.2f}"),
        "zh": ("f 第一次回升处：k = {}",
               "f({}) / f(1) = {:.3f}（按 1/|k| 应为 {}）",
               "k < 2048 时 f(k) 的最小值：{:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(ups[0].item()))
    for k, inverse in ((10, "0.100"), (1000, "0.001")):
        print(lines[1].format(k, curve[k] / curve[1], inverse))
    print(lines[2].format(curve.min()))


# --8<-- [end:not_inverse_distance]

# --8<-- [start:neighbours]
steps = (big[1:] - big[:-1]).norm(dim=-1)  # ||PE(p + 1) - PE(p)|| for p = 0..2046


def show_steps(lang="en"):
    line = {"en": "step from p to p+1: min {:.4f}, max {:.4f}",
            "zh": "从 p 到 p+1 的步长：最小 {:.4f}，最大 {:.4f}"}[lang]  # fmt: skip
    print(line.format(steps.min(), steps.max()))


# --8<-- [end:neighbours]

# --8<-- [start:measured]
from experiments.extrapolation.results import load

report = load("full")  # chapter 8's experiment, read from its committed results
experiment_len = report["config"]["train_len"]  # 128 (the next block sets its own 512)
sinusoidal_run = report["results"]["sinusoidal"]
nope_run = report["results"]["nope"]
nope_past = nope_run["perplexity_beyond_128"]
# past the trained length the model is worse than with no positions at all
assert sinusoidal_run["perplexity_beyond_128"]["256"] > 3 * sinusoidal_run["perplexity"]["128"]
for length, past in sinusoidal_run["perplexity_beyond_128"].items():
    assert past is None or past > nope_past[length]
# NoPE gets worse too (more keys to attend over), but by far less than the sinusoidal model
nope_rise = nope_past["256"] / nope_run["perplexity"]["128"]
sinus_rise = sinusoidal_run["perplexity_beyond_128"]["256"] / sinusoidal_run["perplexity"]["128"]
assert 1 < nope_rise < 1.5 < 3 < sinus_rise


def show_measured(lang="en"):
    lines = {
        "en": ("sinusoidal model trained at length {}, perplexity per character:",
               "  length {:4d}: {:5.2f} over all positions", ", {:5.2f} at positions >= {}",
               "no position encoding (NoPE): {:.2f} at length {}, {:.2f} at positions >= {} of 256"),
        "zh": ("正弦位置编码的模型，训练长度 {}，每个字符的困惑度：",
               "  长度 {:4d}：全部位置 {:5.2f}", "，位置 >= {1} 的部分 {0:5.2f}",
               "不用位置编码（NoPE）：长度 {1} 时 {0:.2f}，长度 256 中位置 >= {3} 的部分 {2:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(experiment_len))
    for length, everywhere in sinusoidal_run["perplexity"].items():
        past = sinusoidal_run["perplexity_beyond_128"][length]
        tail = "" if past is None else lines[2].format(past, experiment_len)
        print(lines[1].format(int(length), everywhere) + tail)
    nope_inside = nope_run["perplexity"]["128"]
    print(lines[3].format(nope_inside, experiment_len, nope_past["256"], experiment_len))


# --8<-- [end:measured]

# --8<-- [start:extrapolation]
train_len = 512
seen = big[:train_len]  # the positions a model trained on length 512 has met
wavelengths = 2 * math.pi / omega
nearest = {p: torch.cdist(big[p : p + 1], seen).min() for p in (512, 600, 1024, 2047)}
# 88 positions past the end, PE is already more than four neighbour-steps from every trained PE
assert torch.cdist(big[600:601], seen).min() > 4 * steps[0]


def show_extrapolation(lang="en"):
    lines = {
        "en": ("pairs slower than one cycle in {} positions: {} of {}",
               "distance from PE(p) to PE(p+1): {:.2f}",
               "p = {:4d}: nearest trained position is {:.2f} away"),
        "zh": ("{0} 个位置内转不满一圈的维度对：{2} 对中有 {1} 对",
               "PE(p) 到 PE(p+1) 的距离：{:.2f}",
               "p = {:4d}：离最近的训练位置 {:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(train_len, int((wavelengths > train_len).sum()), d // 2))
    print(lines[1].format(steps[0]))
    for p, distance in nearest.items():
        print(lines[2].format(p, distance))


# --8<-- [end:extrapolation]

# --8<-- [start:exercise_compose]
m_3, m_4, m_7 = (shift_matrix(k, 8) for k in (3, 4, 7))
print(torch.allclose(m_3 @ m_4, m_7))  # shifting by 3 then 4 is shifting by 7
print(torch.allclose(m_3.T @ m_3, torch.eye(8, dtype=torch.float64)))  # a rotation: M^T M = I
# --8<-- [end:exercise_compose]


# --8<-- [start:exercise_wavelength]
def show_wavelengths(lang="en"):
    line = {"en": "d_model = {}: fastest wavelength {:.2f}, slowest {:.0f} positions",
            "zh": "d_model = {}：最快一对的波长 {:.2f}，最慢一对的波长 {:.0f} 个位置"}[lang]  # fmt: skip
    for d_model in (8, 512):
        omega_last = 10000.0 ** (-(d_model - 2) / d_model)  # slowest pair, i = d/2 - 1
        print(line.format(d_model, 2 * math.pi, 2 * math.pi / omega_last))


# --8<-- [end:exercise_wavelength]


if __name__ == "__main__":
    show_embedding_scale()
    show_spacings()
    show_closest()
    show_bounded()
    show_not_inverse()
    show_steps()
    show_measured()
    show_extrapolation()
    show_wavelengths()
