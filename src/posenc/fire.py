r"""FIRE: functional interpolation for relative positions (Li et al., 2023).

A learned function of a normalised distance, added to the logit of query \(i\) and key
\(j \le i\) (one output per head):

\[
b_{h,i,j} = f_\theta\!\left(\frac{\psi(i - j)}{\psi(\max(L, i))}\right)_h, \qquad
\psi(x) = \log(c\,x + 1),
\]

with \(f_\theta\) a small MLP, and \(c > 0\) and the threshold \(L > 0\) learned. Dividing by
\(\psi\) of the query's own position maps every distance a query can see into \([0, 1]\),
whatever the length ("progressive interpolation": a longer sequence only fills \([0, 1]\)
more densely); \(\psi\) spreads the short distances apart; the threshold \(L\) keeps the
queries near the start from stretching their few distances over the whole interval.

No code released by the authors was found; the formula is the paper's (§3). The defaults
follow the implementation that circulates under the paper's name (for example
mcleish7/arithmetic ``cramming/architectures/embeddings.py``, class ``FIRE``, commit
``86022a57d38c0fde46444d62e8dcbebcc0af614c``, which does not say where it comes from): an MLP
\(1 \to 32 \to\) heads with a ReLU, \(c\) initialised to 0.1 and used as \(|c|\),
\(L = |\lambda \cdot 512|\) with a learned multiplier \(\lambda\) initialised to 1 (so that
one learning rate moves \(L\) in proportion to its size, as it moves weights near 1), and
\(\varepsilon = 10^{-6}\) added to the denominator. The tests compare with it. Two
differences: keys after the query get the input 0 here (that code feeds them
\(\psi(|i - j|)\), which exceeds 1; the causal mask removes them either way), and
\(\log(1 + x)\) is computed as ``log1p``, exact for small \(c\,x\).
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from ._checks import (
    _given,
    check_device,
    check_floating,
    check_int,
    check_number,
    check_on_device,
    check_positive,
    resolve_lengths,
)


def _scalar(name: str, value: object) -> torch.Tensor | float:
    """A positive number, or a 0-d floating tensor (a learned one) taken as it is."""
    if isinstance(value, torch.Tensor):
        return check_floating(name, value, ndim=0)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return check_positive(name, value)
    raise TypeError(
        f"{name} must be a finite number > 0 or a 0-d floating tensor, got {_given(value)}"
    )


def fire_inputs(
    q_len: int,
    k_len: int | None = None,
    *,
    c: float | torch.Tensor = 0.1,
    threshold: float | torch.Tensor = 512.0,
    offset: int | None = None,
    eps: float = 1e-6,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""The MLP's inputs \(u_{ij} = \psi(\max(i - j, 0)) / (\psi(\max(L, i)) + \varepsilon)\).

    \(\psi(x) = \log(1 + c\,x)\); \(i\) is the query's position (``offset`` + row) and \(j\)
    the key's. Every \(u_{ij}\) lies in \([0, 1]\), below 1 when \(\varepsilon > 0\): 0 at
    distance 0 and for keys after the query, at most 1 because \(i - j \le i \le \max(L, i)\).

    Args:
        q_len: Number of queries.
        k_len: Number of keys (default ``offset + q_len``).
        c: \(c > 0\), a number or a 0-d floating tensor (learned, as in `FIRE`; a tensor is
            used as it is).
        threshold: \(L > 0\), a number or a 0-d floating tensor.
        offset: Position of the first query (default ``k_len - q_len``: the queries are the
            last keys).
        eps: \(\varepsilon \ge 0\) added to the denominator (it keeps \(u\) finite when a
            learned \(c\) reaches 0).
        device: Device of the result when neither ``c`` nor ``threshold`` is a tensor
            (otherwise theirs).

    Returns:
        A ``(q_len, k_len)`` tensor: float32, or the dtype of a tensor ``c``/``threshold``.

    Raises:
        TypeError: ``c`` or ``threshold`` neither a number nor a floating tensor.
        ValueError: A number ``c`` or ``threshold`` not > 0, a tensor one not 0-d or on
            another device than the other, a negative ``eps``, negative lengths,
            ``q_len > k_len`` without an offset.
    """
    c, threshold = _scalar("c", c), _scalar("threshold", threshold)
    eps = check_number("eps", eps, at_least=0)
    q_len, k_len, offset = resolve_lengths(q_len, k_len, offset)
    device = check_device("device", device)
    dtype = torch.float32
    tensors = [t for t in (c, threshold) if isinstance(t, torch.Tensor)]
    if tensors:  # learned values: computed where they live, in their dtype
        device, dtype = tensors[0].device, tensors[0].dtype
        if len(tensors) == 2:
            check_on_device("threshold", threshold, device, "c's")
            dtype = torch.promote_types(dtype, threshold.dtype)
    query = torch.arange(offset, offset + q_len, device=device)  # i
    key = torch.arange(k_len, device=device)  # j
    distance = (query[:, None] - key[None, :]).clamp(min=0).to(dtype)  # i - j; 0 after i
    query = query.to(dtype)
    if isinstance(threshold, torch.Tensor):
        normaliser = torch.maximum(query, threshold)  # max(L, i)
    else:
        normaliser = query.clamp(min=threshold)
    numerator = torch.log1p(c * distance)  # ψ(i - j) = log(1 + c(i - j))
    denominator = torch.log1p(c * normaliser) + eps  # ψ(max(L, i)) + ε
    return numerator / denominator[:, None]


class FIRE(nn.Module):
    r"""FIRE's learned bias \(f_\theta(u_{ij})\), one output per head (see the module docstring).

    Args:
        num_heads: Number of heads (outputs of the MLP).
        mlp_width: Width of the hidden layers.
        hidden_layers: Number of hidden layers of the MLP, each followed by a ReLU.
        init_c: Initial \(c\).
        init_threshold: Initial \(L\) (the fixed factor of \(L = |\lambda \cdot L_0|\)).

    Attributes:
        mlp: The MLP \(f_\theta\), ``Linear(1, w)``, ReLU, ..., ``Linear(w, num_heads)``, with
            PyTorch's default initialisation.
        c: Parameter, 0-d; used as \(|c|\).
        threshold_multiplier: Parameter \(\lambda\), 0-d, initialised to 1.
        init_threshold: Buffer \(L_0\), 0-d.
    """

    def __init__(
        self,
        num_heads: int,
        *,
        mlp_width: int = 32,
        hidden_layers: int = 1,
        init_c: float = 0.1,
        init_threshold: float = 512.0,
    ) -> None:
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.mlp_width = check_int("mlp_width", mlp_width, minimum=1)
        self.hidden_layers = check_int("hidden_layers", hidden_layers, minimum=1)
        layers: list[nn.Module] = [nn.Linear(1, mlp_width), nn.ReLU()]
        for _ in range(hidden_layers - 1):
            layers += [nn.Linear(mlp_width, mlp_width), nn.ReLU()]
        self.mlp = nn.Sequential(*layers, nn.Linear(mlp_width, num_heads))
        self.c = nn.Parameter(torch.tensor(check_positive("init_c", init_c)))
        self.threshold_multiplier = nn.Parameter(torch.tensor(1.0))
        self.register_buffer(
            "init_threshold", torch.tensor(check_positive("init_threshold", init_threshold))
        )

    @property
    def threshold(self) -> torch.Tensor:
        r"""The current \(L = |\lambda \cdot L_0|\), 0-d."""
        return (self.threshold_multiplier * self.init_threshold).abs()

    def forward(
        self, q_len: int, k_len: int | None = None, *, offset: int | None = None
    ) -> torch.Tensor:
        r"""The bias for queries ``offset .. offset + q_len - 1`` and keys ``0 .. k_len - 1``.

        Args:
            q_len: Number of queries.
            k_len: Number of keys (default ``offset + q_len``).
            offset: Position of the first query (default ``k_len - q_len``).

        Returns:
            A ``(num_heads, q_len, k_len)`` tensor, in the dtype of the parameters; keys after
            the query get \(f_\theta(0)\), for the causal mask to remove.

        Raises:
            TypeError: A length or the offset is not an int.
            ValueError: A negative length or offset, or ``q_len > k_len`` without an offset.
        """
        inputs = fire_inputs(q_len, k_len, c=self.c.abs(), threshold=self.threshold, offset=offset)
        return self.mlp(inputs[..., None]).permute(2, 0, 1)  # (q, k, heads) -> (heads, q, k)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, mlp_width={self.mlp_width}, "
            f"hidden_layers={self.hidden_layers}"
        )
