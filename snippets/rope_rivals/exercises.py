"""Chapter "RoPE's rivals": the worked answers of the exercises.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/exercises.py
"""

# --8<-- [start:gates]
import math

import torch

import posenc

# ALiBi's head h subtracts m_h per token; a FoX head with constant gate f adds log f per token.
# So f_h = exp(-m_h), and the gate's logit is b_h = log(f / (1 - f)) = -log(exp(m_h) - 1).
slopes = posenc.alibi_slope_values(8)
gates = [math.exp(-m) for m in slopes]
logits = [-math.log(math.expm1(m)) for m in slopes]
for f, b in zip(gates, logits, strict=True):
    assert math.isclose(1 / (1 + math.exp(-b)), f, rel_tol=1e-12)  # sigmoid(b_h) = f_h
# The released FoX initialises its data-independent gates from a "decay time" T as
# bias = -log(expm1(1 / T)): ALiBi's head h is the decay time T_h = 1 / m_h.
released = [-math.log(math.expm1(1 / (1 / m))) for m in slopes]
assert all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(released, logits, strict=True))


def right(text, width):
    """``text`` right-aligned in ``width`` terminal columns (a Chinese character takes two)."""
    return " " * max(width - sum(2 if ord(ch) > 0x2E80 else 1 for ch in text), 0) + text


def show_gates(lang="en"):
    head = {
        "en": ("head", "slope m_h", "gate f_h", "logit b_h", "decay time 1/m_h"),
        "zh": ("头", "斜率 m_h", "门 f_h", "logit b_h", "衰减时间 1/m_h"),
    }[lang]
    widths = (4, 12, 11, 12, 19)
    print("".join(right(name, w) for name, w in zip(head, widths, strict=True)))
    for h, (m, f, b) in enumerate(zip(slopes, gates, logits, strict=True), start=1):
        print(f"{h:4d}{m:12.5f}{f:11.4f}{b:12.3f}{1 / m:19.0f}")


# --8<-- [end:gates]

# --8<-- [start:reflections]


def householder(w, beta=2.0):
    """H = I - beta w w^T for a unit vector w (beta = 2: the reflection across the line ⟂ w)."""
    w = w / w.norm()
    return torch.eye(len(w), dtype=w.dtype) - beta * torch.outer(w, w)


theta = 0.7  # the angle RoPE turns a pair by, per token
w1 = torch.tensor([0.0, 1.0], dtype=torch.float64)
w2 = torch.tensor([-math.sin(theta / 2), math.cos(theta / 2)], dtype=torch.float64)
two_steps = householder(w2) @ householder(w1)  # two PaTH transitions with beta = 2
rotation = torch.tensor(
    [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]], dtype=torch.float64
)
assert torch.allclose(two_steps, rotation)
# ... and it is the rotation posenc.apply_rotary gives a pair at position 1 with frequency theta
x = torch.tensor([0.3, -1.2], dtype=torch.float64)
cos, sin = torch.tensor([math.cos(theta)] * 2), torch.tensor([math.sin(theta)] * 2)
rope = posenc.apply_rotary(x.float(), cos, sin, layout="interleaved").double()
assert torch.allclose(two_steps @ x, rope, atol=1e-6)
one_step = householder(w1)
assert torch.isclose(torch.linalg.det(one_step), torch.tensor(-1.0, dtype=torch.float64))
# The released layer's beta_t = 2·sigmoid(.) lies in (0, 2): |det H_t| = |1 - beta_t| < 1, so a
# product of PaTH transitions over any distance is never orthogonal (never a rotation).
gen = torch.Generator().manual_seed(0)
product = torch.eye(4, dtype=torch.float64)
for _ in range(16):
    beta_t = 2 * torch.sigmoid(torch.randn((), generator=gen, dtype=torch.float64) * 5)
    product = householder(torch.randn(4, generator=gen, dtype=torch.float64), beta_t) @ product
    assert abs(torch.linalg.det(product)) < 1
    assert not torch.allclose(product.T @ product, torch.eye(4, dtype=torch.float64))


def show_reflections(lang="en"):
    text = {
        "en": ("two reflections = RoPE's rotation by {}: {}", "det of one reflection: {:.0f}"),
        "zh": ("两次反射 = RoPE 转 {} 弧度的旋转：{}", "一次反射的行列式：{:.0f}"),
    }[lang]
    print(text[0].format(theta, torch.allclose(two_steps, rotation)))
    print(text[1].format(float(torch.linalg.det(one_step))))


# --8<-- [end:reflections]

if __name__ == "__main__":
    show_gates()
    show_reflections()
