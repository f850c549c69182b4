"""Chapter "RoPE": the rotation derived from <f(q, m), f(k, n)> = g(q, k, m - n).

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope/derivation.py
"""

# --8<-- [start:complex]
import cmath
import math

# A 2-D vector (x_0, x_1) is the complex number x_0 + i x_1
q, k = complex(0.8, -0.3), complex(-0.2, 1.1)
m, n, theta = 7, 4, 0.3


def f(x: complex, position: int) -> complex:
    """The solution of the derivation: f(x, m) = x e^{i m theta}."""
    return x * cmath.exp(1j * position * theta)


dot = 0.8 * -0.2 + -0.3 * 1.1  # <q, k> of the two 2-D vectors
print("<q, k> = Re[q k*]:", math.isclose(dot, (q * k.conjugate()).real))
# f(q, m) f(k, n)* = q k* e^{i (m - n) theta}: the positions appear only as m - n
product = f(q, m) * f(k, n).conjugate()
print("f(q,m) f(k,n)* = q k* e^(i(m-n)θ):", cmath.isclose(product, f(q * k.conjugate(), m - n)))
# multiplying by e^{i m theta} is the 2-D rotation by m theta
c, s = math.cos(m * theta), math.sin(m * theta)
turned = complex(c * q.real - s * q.imag, s * q.real + c * q.imag)  # R(m theta) (q_0, q_1)
print("q e^(imθ) = R(mθ) q:", cmath.isclose(f(q, m), turned))
# --8<-- [end:complex]

# --8<-- [start:maps]
import unicodedata

import torch

import posenc

torch.manual_seed(0)
d = 64
w_q, w_k = (torch.randn(d, d, dtype=torch.float64) / math.sqrt(d) for _ in range(2))
x_a, x_b = torch.randn(2, d, dtype=torch.float64)  # the contents of two tokens
theta_i = 10_000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
pairs = [(3, 1), (10, 8), (100, 98), (1000, 998)]  # m - n = 2 every time


def rope(x: torch.Tensor, m: int) -> torch.Tensor:
    """R_m x: pair (x_2i, x_2i+1) as a complex number, times e^{i m theta_i}."""
    turned = torch.view_as_complex(x.reshape(-1, 2).contiguous()) * torch.exp(1j * m * theta_i)
    return torch.view_as_real(turned).flatten()


orthogonal, _ = torch.linalg.qr(torch.randn(d, d, dtype=torch.float64))  # a random Q, Q^T Q = I


def random_matrix(m: int) -> torch.Tensor:
    """An unrelated matrix for every position."""
    generator = torch.Generator().manual_seed(m)
    return torch.randn(d, d, dtype=torch.float64, generator=generator) / math.sqrt(d)


pe = posenc.sinusoidal(1001, d, dtype=torch.float64)  # chapter 2's code, PE(0) .. PE(1000)
maps = {  # name: (query at m, key at n), the same token contents every time
    "add": lambda m, n: (w_q @ (x_a + pe[m]), w_k @ (x_b + pe[n])),
    "rope": lambda m, n: (rope(w_q @ x_a, m), rope(w_k @ x_b, n)),
    "power": lambda m, n: (
        torch.linalg.matrix_power(orthogonal, m) @ w_q @ x_a,
        torch.linalg.matrix_power(orthogonal, n) @ w_k @ x_b,
    ),
    "grow": lambda m, n: (1.001**m * rope(w_q @ x_a, m), 1.001**n * rope(w_k @ x_b, n)),
    "random": lambda m, n: (random_matrix(m) @ w_q @ x_a, random_matrix(n) @ w_k @ x_b),
}
scores = {  # the score q . k at each (m, n)
    name: [(q_m @ k_n).item() for q_m, k_n in (encode(m, n) for m, n in pairs)]
    for name, encode in maps.items()
}
relative = {
    name: all(math.isclose(s, row[0], rel_tol=1e-9) for s in row) for name, row in scores.items()
}
assert relative == {"add": False, "rope": True, "power": True, "grow": False, "random": False}


def pad(text: str, width: int) -> str:
    """Left-align text in `width` columns of a terminal (a Chinese character takes two)."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - shown, 0)


def show_maps(lang: str = "en") -> None:
    labels = {
        "en": {
            "head": ("query at m, key at n", "depends on m - n only"),
            "add": "add: W (x + PE(m))",
            "rope": "RoPE: R_m W x",
            "power": "Q^m W x, Q random orthogonal",
            "grow": "1.001^m R_m W x",
            "random": "A_m W x, A_m random",
        },
        "zh": {
            "head": ("query 在 m，key 在 n", "只依赖 m - n"),
            "add": "相加：W (x + PE(m))",
            "rope": "RoPE：R_m W x",
            "power": "Q^m W x，Q 为随机正交矩阵",
            "grow": "1.001^m R_m W x",
            "random": "A_m W x，A_m 随机",
        },
    }[lang]
    columns = "".join(f"{f'({m}, {n})':>12}" for m, n in pairs)
    print(pad(labels["head"][0], 30) + columns + "  " + labels["head"][1])
    for name, row in scores.items():
        print(pad(labels[name], 30) + "".join(f"{s:12.4f}" for s in row) + f"  {relative[name]}")


# --8<-- [end:maps]

show_maps()
