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
print(f"length of a token embedding: {tokens.norm(dim=-1).mean():.2f}")
print(f"length of PE(p): {pe_512.norm(dim=-1).mean():.2f}")


def mean_cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a, b, dim=-1).mean().item()


for scale in (1.0, math.sqrt(d_model)):
    x = scale * tokens
    # two different tokens at the same position 100
    same_position = mean_cosine(x[:500] + pe_512[100], x[500:] + pe_512[100])
    # the same token at positions 100 and 200
    same_token = mean_cosine(x + pe_512[100], x + pe_512[200])
    print(
        f"x {scale:5.2f}: two tokens at one position {same_position:.3f}, "
        f"one token at two positions {same_token:.3f}"
    )
    if scale == 1.0:
        assert same_position > 0.99  # unscaled: the input says where, hardly what
    else:
        assert same_position < 0.5 < same_token  # scaled: the token dominates
# PyTorch's nn.Embedding starts from N(0, 1): its rows are already about sqrt(d_model) long
default_rows = torch.nn.Embedding(1000, d_model).weight.detach()
print(f"nn.Embedding default row: {default_rows.norm(dim=-1).mean():.1f}")
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
print(f"slowest pair: paper {omega_paper[-1]:.4e}, tensor2tensor/fairseq {omega_t2t[-1]:.4e}")
lower = 1 - omega_t2t[-1] / omega_paper[-1]
print(f"tensor2tensor/fairseq frequencies are lower by up to {lower:.1%}")
t2t = sin_cos_concatenated(2048, 512, spacing="tensor2tensor")
for p in (10, 100, 512, 2047):
    gap = torch.dist(t2t[p], same_frequencies[p])
    print(f"p = {p:4d}: the two [sin | cos] tables are {gap:5.2f} apart")
assert torch.all(omega_t2t <= omega_paper) and omega_t2t[0] == omega_paper[0] == 1
# --8<-- [end:layouts]

# --8<-- [start:distinct]
big = posenc.sinusoidal(2048, 512).double()  # a realistic size: 2048 positions, d_model = 512
distances = torch.cdist(big, big)  # distances[p, q] = ||PE(p) - PE(q)||
distances.fill_diagonal_(float("inf"))
print(f"closest pair of different positions: {distances.min():.4f} apart")
# --8<-- [end:distinct]

# --8<-- [start:bounded]
print(f"values in [{big.min():.4f}, {big.max():.4f}]")
norms = big.norm(dim=-1)  # each (sin, cos) pair has length 1, so ||PE(p)||^2 = d/2
print(torch.allclose(norms, torch.full_like(norms, math.sqrt(512 / 2))))
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
print(f"first offset where f goes up again: k = {ups[0].item()}")
print(f"f(10) / f(1) = {curve[10] / curve[1]:.3f}  (1/|k| would give 0.100)")
print(f"f(1000) / f(1) = {curve[1000] / curve[1]:.3f}  (1/|k| would give 0.001)")
print(f"smallest f(k) for k < 2048: {curve.min():.2f}")
assert torch.all(curve[1:44] < curve[:43])  # strictly falling up to k = 43
# --8<-- [end:not_inverse_distance]

# --8<-- [start:neighbours]
steps = (big[1:] - big[:-1]).norm(dim=-1)  # ||PE(p + 1) - PE(p)|| for p = 0..2046
print(f"step from p to p+1: min {steps.min():.4f}, max {steps.max():.4f}")
# --8<-- [end:neighbours]

# --8<-- [start:measured]
from experiments.extrapolation.results import load

report = load("full")  # chapter 8's experiment, read from its committed results
train_len = report["config"]["train_len"]
sinusoidal_run = report["results"]["sinusoidal"]
print(f"sinusoidal model trained at length {train_len}, perplexity per character:")
for length, everywhere in sinusoidal_run["perplexity"].items():
    past = sinusoidal_run["perplexity_beyond_128"][length]
    tail = "" if past is None else f", {past:5.2f} at positions >= {train_len}"
    print(f"  length {int(length):4d}: {everywhere:5.2f} over all positions{tail}")
nope_past = report["results"]["nope"]["perplexity_beyond_128"]
print(
    f"no position encoding (NoPE), positions >= {train_len} at length 256: {nope_past['256']:.2f}"
)
# past the trained length the model is worse than with no positions at all
assert sinusoidal_run["perplexity_beyond_128"]["256"] > 3 * sinusoidal_run["perplexity"]["128"]
for length, past in sinusoidal_run["perplexity_beyond_128"].items():
    assert past is None or past > nope_past[length]
# --8<-- [end:measured]

# --8<-- [start:extrapolation]
train_len = 512
seen = big[:train_len]  # the positions a model trained on length 512 has met
wavelengths = 2 * math.pi / omega
print(
    f"pairs slower than one cycle in {train_len} positions: "
    f"{int((wavelengths > train_len).sum())} of {d // 2}"
)
print(f"distance from PE(p) to PE(p+1): {steps[0]:.2f}")
for p in (512, 600, 1024, 2047):
    nearest = torch.cdist(big[p : p + 1], seen).min()
    print(f"p = {p:4d}: nearest trained position is {nearest:.2f} away")
# 88 positions past the end, PE is already more than four neighbour-steps from every trained PE
assert torch.cdist(big[600:601], seen).min() > 4 * steps[0]
# --8<-- [end:extrapolation]

# --8<-- [start:exercise_compose]
m_3, m_4, m_7 = (shift_matrix(k, 8) for k in (3, 4, 7))
print(torch.allclose(m_3 @ m_4, m_7))  # shifting by 3 then 4 is shifting by 7
print(torch.allclose(m_3.T @ m_3, torch.eye(8, dtype=torch.float64)))  # a rotation: M^T M = I
# --8<-- [end:exercise_compose]

# --8<-- [start:exercise_wavelength]
for d_model in (8, 512):
    omega_last = 10000.0 ** (-(d_model - 2) / d_model)  # slowest pair, i = d/2 - 1
    print(
        f"d_model = {d_model}: fastest wavelength {2 * math.pi:.2f}, "
        f"slowest {2 * math.pi / omega_last:.0f} positions"
    )
# --8<-- [end:exercise_wavelength]
