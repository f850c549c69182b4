r"""Rotary position embedding (RoPE, Su et al., 2021).

Each channel pair \((x_a, x_b)\) of a query or key at position \(m\) is rotated by the angle
\(m\theta_i\):

\[
\begin{pmatrix} x_a' \\ x_b' \end{pmatrix} =
\begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
\begin{pmatrix} x_a \\ x_b \end{pmatrix},
\]

so that \(\langle R_m q, R_n k\rangle\) depends on \(m - n\) only. Two channel layouts are in use:

- ``"half"`` (GPT-NeoX, Hugging Face Llama): pair \(i\) is channels \((i, i + d/2)\).
- ``"interleaved"`` (Meta's llama, GPT-J): pair \(i\) is channels \((2i, 2i + 1)\).

Shapes: ``(batch, heads, seq, head_dim)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ._checks import (
    check_bool,
    check_choice,
    check_even,
    check_floating,
    check_int,
    check_positions,
    check_positive,
    is_compiling,
)
from .rope_scaling import LENGTH_DEPENDENT, rope_inv_freq, scaling_type

LAYOUTS = ("half", "interleaved")


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    r"""\((x_1, x_2) \mapsto (-x_2, x_1)\) on the halves of the last dimension ("half" layout)."""
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotate_interleaved(x: torch.Tensor) -> torch.Tensor:
    r"""\((x_{2i}, x_{2i+1}) \mapsto (-x_{2i+1}, x_{2i})\) on adjacent pairs ("interleaved")."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


def interleaved_to_half_permutation(head_dim: int) -> torch.Tensor:
    r"""Channel order that turns the interleaved layout into the half layout.

    ``x_half = x_interleaved[..., perm]`` with ``perm = [0, 2, 4, ..., 1, 3, 5, ...]``: pair \(i\)
    moves from channels \((2i, 2i+1)\) to \((i, i + d/2)\). Applied per head to the output rows of
    the query and key projections, it converts a checkpoint trained with one layout to the other
    (``w_q.view(heads, head_dim, -1)[:, perm]``) without changing the model's outputs.

    Args:
        head_dim: Number of rotated channels; even.

    Returns:
        An int64 index tensor of shape ``(head_dim,)``.

    Raises:
        ValueError: ``head_dim`` is not a positive even int.
    """
    check_even("head_dim", head_dim)
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))


def rotary_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Tables \(a\cos(m\theta_i)\) and \(a\sin(m\theta_i)\) for integer positions \(m\).

    Angles, cosines and sines are computed in float32 and cast to ``dtype`` only at the end:
    in bfloat16 a position near \(10^6\) is rounded by thousands, which scrambles the angle.

    Args:
        positions: Integer tensor of positions, any shape.
        inv_freq: Frequencies \(\theta_i\), shape ``(rotary_dim // 2,)``.
        layout: ``"half"`` repeats the table (\([\theta_0..\theta_{d/2-1}, \theta_0..]\)),
            ``"interleaved"`` repeats each entry (\([\theta_0, \theta_0, \theta_1, ...]\)).
        attention_factor: Factor \(a\) (YaRN, LongRoPE temperature); 1 by default.
        dtype: dtype of the returned tables.

    Returns:
        ``(cos, sin)``, each of shape ``(*positions.shape, rotary_dim)``.
    """
    check_choice("layout", layout, LAYOUTS)
    angles = positions.float()[..., None] * inv_freq.float()  # m·θ_i in float32
    if layout == "half":
        angles = torch.cat((angles, angles), dim=-1)
    else:
        angles = angles.repeat_interleave(2, dim=-1)
    cos, sin = angles.cos() * attention_factor, angles.sin() * attention_factor
    return cos.to(dtype), sin.to(dtype)


def apply_rotary(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, layout: str = "half"
) -> torch.Tensor:
    r"""Rotate ``x`` by `rotary_cos_sin` tables: \(x' = x \odot \cos + \mathrm{rot}(x) \odot \sin\).

    \(\mathrm{rot}\) is `rotate_half` or `rotate_interleaved`. If ``cos`` is narrower than
    ``x``, only the first ``cos.shape[-1]`` channels rotate and the rest pass through (GPT-NeoX
    partial rotary). The tables are cast to ``x.dtype``, so the result has ``x``'s dtype.

    The tables are full width, one entry per channel, as `rotary_cos_sin` and Hugging Face build
    them: each angle appears twice, once for each channel of its pair. The computation reads
    ``sin`` (and, for the interleaved layout in float32/float64, ``cos``) once per pair only,
    so both copies of an angle must be equal, as they are in those tables.

    Args:
        x: Tensor ``(..., seq, head_dim)``, e.g. ``(batch, heads, seq, head_dim)``.
        cos: Table broadcastable to ``(..., seq, rotary_dim)``.
        sin: Same shape as ``cos``.
        layout: ``"half"`` or ``"interleaved"``.

    Returns:
        The rotated tensor, same shape and dtype as ``x``.

    Raises:
        TypeError: ``x`` is not a floating tensor.
        ValueError: Unknown ``layout``, tables wider than ``x``, or ``cos``/``sin`` shapes differ.
    """
    check_choice("layout", layout, LAYOUTS)
    check_floating("x", x)
    if cos.shape != sin.shape:
        raise ValueError(
            f"cos and sin must have the same shape, got {tuple(cos.shape)} and {tuple(sin.shape)}"
        )
    rotary_dim = cos.shape[-1]
    if rotary_dim > x.shape[-1] or rotary_dim % 2:
        raise ValueError(
            f"cos.shape[-1] (rotary_dim) must be even and <= x.shape[-1] ({x.shape[-1]}), "
            f"got {rotary_dim}"
        )
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    if rotary_dim == x.shape[-1]:
        return _rotate(x, cos, sin, layout)
    rotated, passed = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat((_rotate(rotated, cos, sin, layout), passed), dim=-1)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    # The textbook x * cos + rot(x) * sin writes about 4.5 times the size of x (rot(x), two
    # products, their sum), and RoPE is limited by memory traffic. These forms write less.
    if layout == "interleaved" and _pairs_viewable_as_complex(x):
        # Pair (x_2i, x_2i+1) is the complex number x_2i + i x_2i+1, and the rotation is one
        # complex product with cos + i sin: a single pass that writes the output once.
        pairs = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
        turn = torch.complex(cos[..., 0::2], sin[..., 0::2])  # one table entry per pair
        return torch.view_as_real(pairs * turn).flatten(-2)
    if layout == "half":
        a, b = slice(0, x.shape[-1] // 2), slice(x.shape[-1] // 2, None)  # pair (i, i + d/2)
    else:
        a, b = slice(0, None, 2), slice(1, None, 2)  # pair (2i, 2i + 1)
    # Both channels of a pair share one angle, so one contiguous product gives
    # (x_a cos, x_b cos); then add -x_b sin and x_a sin in place: the output is written twice.
    out = x * cos
    out[..., a].addcmul_(x[..., b], sin[..., a], value=-1)  # x_a' = x_a cos - x_b sin
    out[..., b].addcmul_(x[..., a], sin[..., a])  # x_b' = x_b cos + x_a sin
    return out


def _pairs_viewable_as_complex(x: torch.Tensor) -> bool:
    # view_as_complex needs float32/float64 (there is no complex bfloat16 or float16 type) and
    # each pair adjacent and aligned: last stride 1, every other stride and the offset even.
    # Inductor generates no code for complex numbers, so torch.compile gets the real form;
    # other backends' complex support varies, so they do too.
    return (
        x.dtype in (torch.float32, torch.float64)
        and x.device.type in ("cpu", "cuda")
        and not is_compiling()
        and x.stride(-1) == 1
        and x.storage_offset() % 2 == 0
        and all(stride % 2 == 0 for stride in x.stride()[:-1])
    )


def _rotate_pairs(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    # The rotation written plainly for a compiler: ``cos``/``sin`` hold one entry per pair
    # (rotary_dim // 2 wide). Inductor turns this into one loop that reads x and writes the
    # output once, which no sequence of eager PyTorch ops does for the half layout.
    if layout == "half":
        x_a, x_b = x.chunk(2, dim=-1)
        return torch.cat((x_a * cos - x_b * sin, x_b * cos + x_a * sin), dim=-1)
    x_a, x_b = x[..., 0::2], x[..., 1::2]
    return torch.stack((x_a * cos - x_b * sin, x_b * cos + x_a * sin), dim=-1).flatten(-2)


def _rotate_qk(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> tuple[torch.Tensor, torch.Tensor]:
    # q and k in one graph, so the compiler can emit one kernel for both.
    pair = slice(0, cos.shape[-1] // 2) if layout == "half" else slice(0, None, 2)
    cos, sin = cos[..., pair], sin[..., pair]
    rotary_dim = cos.shape[-1] * 2

    def rotate(x: torch.Tensor) -> torch.Tensor:
        # tables in x's dtype, as apply_rotary does: the result keeps x's dtype
        rotated = _rotate_pairs(x[..., :rotary_dim], cos.to(x.dtype), sin.to(x.dtype), layout)
        if rotary_dim == x.shape[-1]:
            return rotated
        return torch.cat((rotated, x[..., rotary_dim:]), dim=-1)

    return rotate(q), rotate(k)


@functools.cache
def _compiled_rotate_qk() -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    # Built on first use: importing posenc must not pull in the compiler stack. torch.compile's
    # defaults: the first call specialises on its shapes, and the first change of a size makes
    # that size dynamic, so a decoding loop compiles once more, not at every step. Dynamic
    # shapes from the start (dynamic=True) would make head_dim symbolic too, and the
    # generated CPU loop measurably slower.
    return torch.compile(_rotate_qk)


def _run_compiled_rotate_qk(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> tuple[torch.Tensor, torch.Tensor]:
    try:
        return _compiled_rotate_qk()(q, k, cos, sin, layout)
    except torch._dynamo.exc.BackendCompilerFailed as error:
        raise RuntimeError(
            f"RotaryEmbedding(compiled=True) could not compile its kernel for {q.device.type}: "
            "torch.compile needs a working C++ compiler on CPU and Triton on CUDA. "
            "Use compiled=False (eager PyTorch ops) where neither is available."
        ) from error


def _table_length(needed: int) -> int:
    # Grow to the next power of two (at least 256) so a decoding loop re-allocates log(n) times.
    return max(256, 1 << (needed - 1).bit_length())


class RotaryEmbedding(nn.Module):
    r"""RoPE for queries and keys: \(q_m \mapsto R_m q_m\), \(k_n \mapsto R_n k_n\).

    The cos/sin tables for positions \(0..n-1\) are cached per device and dtype and grown on
    demand; a table is built directly on the device it is used on, never copied across devices
    inside `forward`. Explicit ``positions`` are turned into tables on the fly (an index into a
    cache would need the largest position on the host, a synchronisation). Under
    `torch.compile` the cache is bypassed, which inductor fuses into the rotation anyway.

    Args:
        head_dim: Channels per head; even.
        base: Frequency base \(\mathrm{base}\) (``rope_theta``).
        layout: ``"half"`` (Hugging Face, GPT-NeoX) or ``"interleaved"`` (Meta llama, GPT-J).
        rotary_dim: Rotate only the first ``rotary_dim`` channels (GPT-NeoX partial rotary);
            default ``head_dim``.
        scaling: Optional scaling dict, see `rope_inv_freq`.
        compiled: Rotate ``q`` and ``k`` with one kernel generated by `torch.compile`
            (C++ with OpenMP on CPU, Triton on CUDA) instead of eager PyTorch ops. Each
            output is written once, which eager ops cannot do for the half layout (the
            Performance chapter measures the difference). The first call compiles (seconds); a
            new dtype, layout or table shape compiles again, and so does the first change of
            sequence length, after which any length is served. Needs a C++ compiler on CPU and
            Triton on CUDA. Inside a model compiled as a whole this flag changes nothing: the
            outer compiler fuses the eager form.

    Attributes:
        inv_freq: Float32 buffer of \(\theta_i\) (not saved in the state dict); for the
            length-dependent variants (``dynamic``, ``longrope``) these are the frequencies at the
            trained length.
        attention_factor: The factor \(a\) applied to cos and sin.
    """

    def __init__(
        self,
        head_dim: int,
        *,
        base: float = 10000.0,
        layout: str = "half",
        rotary_dim: int | None = None,
        scaling: Mapping[str, Any] | None = None,
        compiled: bool = False,
    ) -> None:
        super().__init__()
        self.compiled = check_bool("compiled", compiled)
        self.head_dim = check_even("head_dim", head_dim)
        self.rotary_dim = head_dim if rotary_dim is None else check_even("rotary_dim", rotary_dim)
        if self.rotary_dim > head_dim:
            raise ValueError(f"rotary_dim must be <= head_dim ({head_dim}), got {rotary_dim}")
        self.base = check_positive("base", base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.scaling = dict(scaling) if scaling is not None else None
        self.rope_type = scaling_type(self.scaling)
        inv_freq, self.attention_factor = rope_inv_freq(
            self.rotary_dim, base=self.base, scaling=self.scaling
        )
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._tables: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor]] = {}

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies depend on the current length (``dynamic``, ``longrope``)."""
        return self.rope_type in LENGTH_DEPENDENT

    def _frequencies(self, device: torch.device, seq_len: int | None) -> tuple[torch.Tensor, float]:
        if self.length_dependent:
            return rope_inv_freq(
                self.rotary_dim,
                base=self.base,
                scaling=self.scaling,
                seq_len=seq_len,
                device=device,
            )
        if self.inv_freq.device == device:
            return self.inv_freq, self.attention_factor
        # Another device: compute there rather than copy (no transfer inside forward).
        return rope_inv_freq(self.rotary_dim, base=self.base, scaling=self.scaling, device=device)

    def _cached_range(
        self, start: int, stop: int, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        key = (device, dtype)
        tables = self._tables.get(key)
        if tables is None or tables[0].shape[0] < stop:
            inv_freq, factor = self._frequencies(device, None)
            positions = torch.arange(_table_length(stop), device=device)
            tables = rotary_cos_sin(
                positions, inv_freq, layout=self.layout, attention_factor=factor, dtype=dtype
            )
            self._tables[key] = tables
        cos, sin = tables
        return cos[start:stop], sin[start:stop]

    def cos_sin(
        self,
        positions: int | torch.Tensor,
        *,
        offset: int = 0,
        seq_len: int | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""The tables \(a\cos(m\theta_i)\), \(a\sin(m\theta_i)\) in this module's layout.

        Args:
            positions: An int ``n`` (positions ``offset .. offset + n - 1``, served from the
                cache) or an integer tensor of any shape.
            offset: First position when ``positions`` is an int.
            seq_len: Current sequence length for ``dynamic``/``longrope`` scaling; default
                ``offset + n`` for an int, required with a tensor.
            device: Device when ``positions`` is an int (default: that of ``inv_freq``).
            dtype: dtype of the tables.

        Returns:
            ``(cos, sin)`` of shape ``(n, rotary_dim)`` or ``(*positions.shape, rotary_dim)``.

        Raises:
            TypeError: ``positions`` is neither an int nor an integer tensor.
            ValueError: Negative positions, or ``seq_len`` missing for a length-dependent variant.
        """
        check_int("offset", offset)
        if isinstance(positions, torch.Tensor):
            check_positions("positions", positions)
            device = positions.device
        else:
            count = check_int("positions", positions)
            device = torch.device(device) if device is not None else self.inv_freq.device
            if not self.length_dependent and not is_compiling():
                return self._cached_range(offset, offset + count, device, dtype)
            seq_len = offset + count if seq_len is None else seq_len
            positions = torch.arange(offset, offset + count, device=device)
        if self.length_dependent and seq_len is None:
            raise ValueError(
                f"seq_len is required with explicit positions for rope_type {self.rope_type!r} "
                "(its frequencies depend on the current length; reading it from positions would "
                "synchronise with the device)"
            )
        inv_freq, factor = self._frequencies(device, seq_len)
        return rotary_cos_sin(
            positions, inv_freq, layout=self.layout, attention_factor=factor, dtype=dtype
        )

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        positions: torch.Tensor | None = None,
        *,
        offset: int = 0,
        seq_len: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Rotate queries and keys: \(q_m \mapsto R_m q_m\), \(k_m \mapsto R_m k_m\).

        Args:
            q: Queries ``(batch, heads, seq, head_dim)``, floating point.
            k: Keys ``(batch, kv_heads, seq, head_dim)``; ``kv_heads`` may divide ``heads``
                (grouped-query attention).
            positions: Integer positions ``(seq,)`` or ``(batch, seq)`` (KV-cache decoding, left
                padding, packed sequences); default ``offset .. offset + seq - 1``.
            offset: First position when ``positions`` is None (the KV-cache length).
            seq_len: Current length for ``dynamic``/``longrope`` scaling (default
                ``offset + seq`` without ``positions``; required with them).

        Returns:
            ``(q_rotated, k_rotated)``, same shapes and dtypes as ``q`` and ``k``.

        Raises:
            TypeError: Non-floating ``q``/``k`` or non-integer ``positions``.
            ValueError: Wrong ranks, mismatched shapes, negative positions, or a missing
                ``seq_len``.
            RuntimeError: ``compiled=True`` and `torch.compile` cannot build its kernel (no
                C++ compiler on CPU, no Triton on CUDA).
        """
        self._check_qk(q, k)
        batch, _, seq, _ = q.shape
        if positions is None:
            cos, sin = self.cos_sin(
                seq, offset=offset, seq_len=seq_len, device=q.device, dtype=q.dtype
            )
        else:
            check_positions("positions", positions, ndim=(1, 2))
            if positions.shape[-1] != seq:
                raise ValueError(
                    f"positions.shape[-1] must equal seq ({seq}), got {positions.shape[-1]}"
                )
            if positions.ndim == 2 and positions.shape[0] not in (1, batch):
                raise ValueError(
                    f"positions.shape[0] must be 1 or batch ({batch}), got {positions.shape[0]}"
                )
            cos, sin = self.cos_sin(positions, seq_len=seq_len, dtype=q.dtype)
            if positions.ndim == 2:
                cos, sin = (
                    cos.unsqueeze(1),
                    sin.unsqueeze(1),
                )  # (batch, 1, seq, rotary_dim): over heads
        if self.compiled and not is_compiling():
            return _run_compiled_rotate_qk(q, k, cos, sin, self.layout)
        return (
            apply_rotary(q, cos, sin, layout=self.layout),
            apply_rotary(k, cos, sin, layout=self.layout),
        )

    def _apply(self, fn, recurse=True):
        # .to()/.cuda()/.half() make cached tables stale; rebuild lazily where they are used.
        self._tables.clear()
        return super()._apply(fn, recurse)

    def _check_qk(self, q: torch.Tensor, k: torch.Tensor) -> None:
        check_floating("q", q, ndim=4)
        check_floating("k", k, ndim=4)
        if q.shape[-1] != self.head_dim:
            raise ValueError(
                f"q.shape[-1] must equal head_dim ({self.head_dim}), got {q.shape[-1]}"
            )
        if k.shape[-1] != self.head_dim:
            raise ValueError(
                f"k.shape[-1] must equal head_dim ({self.head_dim}), got {k.shape[-1]}"
            )
        if (k.shape[0], k.shape[2]) != (q.shape[0], q.shape[2]):
            raise ValueError(
                f"k must have q's batch and seq sizes ({q.shape[0]}, {q.shape[2]}), "
                f"got shape {tuple(k.shape)} for q shape {tuple(q.shape)}"
            )
        if q.shape[1] % k.shape[1]:
            raise ValueError(
                f"k's heads ({k.shape[1]}) must divide q's heads ({q.shape[1]}) "
                "(grouped-query attention)"
            )

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, rotary_dim={self.rotary_dim}, base={self.base}, "
            f"layout={self.layout!r}, rope_type={self.rope_type!r}"
            + (", compiled=True" if self.compiled else "")
        )
