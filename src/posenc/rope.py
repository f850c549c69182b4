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

Read top to bottom: the rotation of a pair (`rotate_half`, `rotate_interleaved`), the tables
of \(\cos m\theta_i\) and \(\sin m\theta_i\) (`rotary_cos_sin`), the rotation as the formula
writes it (`rotate_reference`), the rotation as it runs (`apply_rotary`, whose faster forms
live in `posenc.rope_kernels`), and the module (`RotaryEmbedding`). The frequencies
\(\theta_i\) and their long-context variants are in `posenc.rope_scaling`.

Shapes: ``(batch, heads, seq, head_dim)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch import nn

from . import rope_kernels
from ._checks import (
    check_bool,
    check_choice,
    check_device,
    check_even,
    check_float_dtype,
    check_floating,
    check_int,
    check_number,
    check_on_device,
    check_positions,
    check_qk,
    check_sequence_positions,
    is_compiling,
    same_device,
)
from .rope_scaling import RopeScaling, check_seq_len, frequency_dim, resolve_base

LAYOUTS = ("half", "interleaved")
APPLY_KERNELS = ("auto", "eager", "triton")
KERNELS = ("auto", "eager", "compiled", "triton")


# ── the rotation of one pair ────────────────────────────────────────────────


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
        TypeError: ``head_dim`` is not an int.
        ValueError: ``head_dim`` is not positive and even.
    """
    check_even("head_dim", head_dim)
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))


# ── the tables ──────────────────────────────────────────────────────────────


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
    (Positions above \(2^{24}\) are not exact in float32 either; transformers computes the
    same way.)

    Args:
        positions: Integer tensor of positions, any shape.
        inv_freq: Frequencies \(\theta_i\), a floating tensor ``(rotary_dim // 2,)`` on the
            device of ``positions``.
        layout: ``"half"`` repeats the table (\([\theta_0..\theta_{d/2-1}, \theta_0..]\)),
            ``"interleaved"`` repeats each entry (\([\theta_0, \theta_0, \theta_1, ...]\)).
        attention_factor: Factor \(a\) (YaRN, LongRoPE temperature); 1 by default.
        dtype: Floating dtype of the returned tables.

    Returns:
        ``(cos, sin)``, each of shape ``(*positions.shape, rotary_dim)``.

    Raises:
        TypeError: Non-integer ``positions`` (float positions too), non-floating ``inv_freq``
            or ``dtype``.
        ValueError: Negative positions (checked on CPU), ``inv_freq`` not 1-D or on another
            device, an unknown ``layout``, ``attention_factor`` not a finite number > 0.
    """
    check_choice("layout", layout, LAYOUTS)
    check_positions("positions", positions)
    check_floating("inv_freq", inv_freq, ndim=1)
    check_on_device("inv_freq", inv_freq, positions.device, "positions'")
    attention_factor = check_number("attention_factor", attention_factor, above=0)
    dtype = check_float_dtype("dtype", dtype)
    angles = positions.float()[..., None] * inv_freq.float()  # m·θ_i in float32
    return _cos_sin_from_angles(angles, layout, attention_factor, dtype)


def _cos_sin_from_angles(
    angles: torch.Tensor, layout: str, attention_factor: float, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(a·cos, a·sin)`` of float32 angles ``(..., pairs)``, widened to ``(..., 2·pairs)`` in
    ``layout``'s channel order and cast to ``dtype`` last. Arguments already checked: the one
    place every table of the package (`rotary_cos_sin`, `posenc.rope_axes`) is made."""
    cos, sin = angles.cos() * attention_factor, angles.sin() * attention_factor
    if layout == "half":
        cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    else:
        cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
    return cos.to(dtype), sin.to(dtype)


# ── the rotation ────────────────────────────────────────────────────────────


def rotate_reference(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, layout: str = "half"
) -> torch.Tensor:
    r"""The rotation as the formula writes it: \(x' = x \odot \cos + \mathrm{rot}(x) \odot \sin\).

    With full-width tables, channel \(a\) of pair \(i\) gets
    \(x_a\cos m\theta_i - x_b \sin m\theta_i\) and channel \(b\) gets
    \(x_b \cos m\theta_i + x_a \sin m\theta_i\): the \(2\times2\) rotation above, for every pair
    at once. `apply_rotary` computes exactly this with less memory traffic
    (`posenc.rope_kernels`); this form is the reference it is tested against.

    Args:
        x: Tensor ``(..., seq, rotary_dim)``, all channels rotated.
        cos: Table broadcastable to ``x``.
        sin: Same shape as ``cos``.
        layout: ``"half"`` or ``"interleaved"``.
    """
    rot = rotate_half if check_choice("layout", layout, LAYOUTS) == "half" else rotate_interleaved
    return x * cos + rot(x) * sin


def apply_rotary(
    x: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    *,
    layout: str = "half",
    kernel: str = "auto",
) -> torch.Tensor:
    r"""Rotate ``x`` by `rotary_cos_sin` tables: \(x' = x \odot \cos + \mathrm{rot}(x) \odot \sin\).

    The result equals `rotate_reference`; the computation writes less memory (see
    `posenc.rope_kernels`). If ``cos`` is narrower than ``x``, only the first
    ``cos.shape[-1]`` channels rotate and the rest pass through (GPT-NeoX partial rotary).
    The tables are cast to ``x.dtype``, so the result has ``x``'s dtype.

    The tables are full width, one entry per channel, as `rotary_cos_sin` and Hugging Face build
    them: each angle appears twice, once for each channel of its pair. The computation reads
    one copy per pair, so both copies of an angle must be equal, as they are in those tables.

    Args:
        x: Tensor ``(..., seq, head_dim)``, e.g. ``(batch, heads, seq, head_dim)``.
        cos: Floating table broadcastable to ``(..., seq, rotary_dim)``, on ``x``'s device.
        sin: Same shape as ``cos``.
        layout: ``"half"`` or ``"interleaved"``.
        kernel: ``"eager"`` (PyTorch operators, `posenc.rope_kernels`), ``"triton"`` (one
            hand-written Triton kernel, `posenc.rope_triton`: a 4-D ``x`` on CUDA, float32,
            bfloat16 or float16; it computes in float32 and rounds once, so in half
            precision it can differ from ``"eager"`` by a rounding), or ``"auto"``:
            ``"triton"`` where it runs (CUDA, Triton installed, outside `torch.compile`),
            else ``"eager"``.

    Returns:
        The rotated tensor, same shape and dtype as ``x``.

    Raises:
        TypeError: ``x``, ``cos`` or ``sin`` is not a floating tensor.
        ValueError: Unknown ``layout`` or ``kernel``; tables of another shape than each other,
            wider than ``x``, of odd width, not broadcastable to ``x``, or on another device;
            ``kernel="triton"`` for an ``x`` it cannot take.
    """
    check_choice("layout", layout, LAYOUTS)
    check_choice("kernel", kernel, APPLY_KERNELS)
    check_floating("x", x)
    check_floating("cos", cos)
    check_floating("sin", sin)
    if cos.shape != sin.shape:
        raise ValueError(f"sin must have cos's shape {tuple(cos.shape)}, got {tuple(sin.shape)}")
    rotary_dim = cos.shape[-1] if cos.ndim else 0
    if rotary_dim > x.shape[-1] or rotary_dim % 2 or rotary_dim == 0:
        raise ValueError(
            f"cos.shape[-1] must be a positive even rotary width <= x.shape[-1] ({x.shape[-1]}), "
            f"got {rotary_dim}"
        )
    target = (*x.shape[:-1], rotary_dim)
    try:
        fits = torch.broadcast_shapes(cos.shape, target) == target
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"cos must broadcast to x's shape with rotary_dim channels {target} (one row "
            f"per position of x), got {tuple(cos.shape)}"
        )
    check_on_device("cos", cos, x.device, "x's")
    check_on_device("sin", sin, x.device, "x's")
    if _chosen_kernel(kernel, x, cos, sin) == "triton":
        if x.ndim != 4:
            raise ValueError(
                f"x must be 4-D (batch, heads, seq, head_dim) for kernel='triton', got shape "
                f"{tuple(x.shape)}"
            )
        return _triton().rotate(x, cos, sin, layout=layout)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    if rotary_dim == x.shape[-1]:
        return rope_kernels.rotate(x, cos, sin, layout)
    rotated, passed = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat((rope_kernels.rotate(rotated, cos, sin, layout), passed), dim=-1)


def _triton():
    # Imported on first use: importing posenc must not import Triton (seconds, and it must
    # see TRITON_INTERPRET before it defines the kernel).
    from . import rope_triton

    return rope_triton


_TRITON_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _chosen_kernel(kernel: str, x: torch.Tensor, *tables: torch.Tensor) -> str:
    """``"auto"`` resolved for ``x``: the Triton kernel where it runs natively (a 4-D CUDA
    tensor of a dtype it takes, outside torch.compile, Triton installed, no table to train:
    it passes gradients to ``x`` only), else eager."""
    if kernel != "auto":
        return kernel
    if x.device.type != "cuda" or x.ndim != 4 or x.dtype not in _TRITON_DTYPES:
        return "eager"
    if any(table.requires_grad for table in tables):
        return "eager"
    if is_compiling():  # the outer compiler fuses the eager form
        return "eager"
    return "triton" if _triton().triton is not None else "eager"


# ── the module ──────────────────────────────────────────────────────────────

_MIN_TABLE = 256


def _table_length(needed: int) -> int:
    # The next power of two (at least 256), so that a decoding loop re-allocates log(n) times.
    return max(_MIN_TABLE, 1 << (needed - 1).bit_length())


class RotaryEmbedding(nn.Module):
    r"""RoPE for queries and keys: \(q_m \mapsto R_m q_m\), \(k_n \mapsto R_n k_n\).

    A transformers config plugs in unchanged::

        RotaryEmbedding(config.head_dim, scaling=config.rope_parameters,
                        max_position_embeddings=config.max_position_embeddings,
                        ignore_keys=config.ignore_keys_at_rope_validation)

    (``rope_theta`` and ``partial_rotary_factor`` are read from the dict.) The scaling dict is
    parsed once, here, into a `RopeScaling`.

    The cos/sin tables for positions \(0..n-1\) are cached per device and dtype and grown
    (to the next power of two) when a call needs a few more rows; a call far beyond the
    cache (``offset=2**31``) gets tables for its own positions only. A table is built on the
    device it is used on, never copied across devices inside `forward`. Explicit
    ``positions`` are turned into tables on the fly (an index into a cache would need the
    largest position on the host, a synchronisation). Under `torch.compile` the cache is
    bypassed, which inductor fuses into the rotation anyway.

    Args:
        head_dim: Channels per head (even, unless only part of the head rotates).
        base: Frequency base (``rope_theta``); default the dict's ``rope_theta``, else 10000.
        layout: ``"half"`` (Hugging Face, GPT-NeoX) or ``"interleaved"`` (Meta llama, GPT-J).
        rotary_dim: Rotate only the first ``rotary_dim`` channels (GPT-NeoX partial rotary);
            default ``head_dim``, or ``int(head_dim * partial_rotary_factor)`` from the dict
            (an odd width is rounded up where transformers does: see
            `posenc.rope_scaling.frequency_dim`). Passing both is an error unless they agree.
        scaling: None, a transformers ``rope_parameters`` dict or a `RopeScaling`.
        max_position_embeddings: ``config.max_position_embeddings`` (see
            `RopeScaling.from_dict`).
        ignore_keys: Model-specific keys of the dict to pass over (see
            `RopeScaling.from_dict`).
        keep_longest: ``dynamic`` only: use the frequencies of the longest ``seq_len`` seen
            so far, as transformers' forward pass does (a length below the trained one goes
            back to the trained frequencies). Default: the frequencies of the current length.
            The running maximum is module state, updated in eager mode.
        kernel: How ``forward`` rotates ``q`` and ``k`` (the Performance chapter measures
            each):

            - ``"eager"``: PyTorch operators (`posenc.rope_kernels.rotate`): one pass over
              memory for interleaved float32, two otherwise.
            - ``"compiled"``: one kernel for ``q`` and ``k`` generated by `torch.compile`
              (C++ with OpenMP on CPU, Triton on CUDA), each output written once. The first
              call compiles (seconds); a new dtype, layout or table shape compiles again, and
              so does the first change of sequence length, after which any length is served.
            - ``"triton"``: one hand-written Triton kernel for ``q`` and ``k``
              (`posenc.rope_triton`) that computes the angles from the positions and reads no
              table; CUDA, float32, bfloat16 or float16. It rounds once, at the end, so in
              half precision it can differ from ``"eager"`` by a rounding.
            - ``"auto"`` (default): ``"triton"`` for CUDA tensors when Triton is installed,
              ``"eager"`` otherwise (on a CPU, eager beats or matches the compiled kernel
              except in the half layout; see the chapter).

            Inside a model compiled as a whole the choice changes nothing: the module uses
            its eager form, and the outer compiler fuses it.

    Attributes:
        inv_freq: Float32 buffer of \(\theta_i\) (not saved in the state dict; computed again
            in float32 after ``.to(torch.bfloat16)`` or ``.half()``); for the
            length-dependent variants (``dynamic``, ``longrope``) these are the frequencies at the
            trained length.
        attention_factor: The factor \(a\) applied to cos and sin.
        scaling: The parsed `RopeScaling`.
    """

    def __init__(
        self,
        head_dim: int,
        base: float | None = None,
        *,
        layout: str = "half",
        rotary_dim: int | None = None,
        scaling: Mapping[str, Any] | RopeScaling | None = None,
        max_position_embeddings: int | None = None,
        ignore_keys: Iterable[str] = (),
        keep_longest: bool = False,
        kernel: str = "auto",
    ) -> None:
        super().__init__()
        self.kernel = check_choice("kernel", kernel, KERNELS)
        self.keep_longest = check_bool("keep_longest", keep_longest)
        self.head_dim = check_int("head_dim", head_dim, minimum=1)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.scaling = RopeScaling.from_dict(
            scaling, max_position_embeddings=max_position_embeddings, ignore_keys=ignore_keys
        )
        self.rope_type = self.scaling.rope_type
        self._variant = self.scaling.variant  # the registry entry, looked up once
        self.base = resolve_base(base, self.scaling)
        self._dim = self._frequency_dim(rotary_dim)  # d of base^(-2i/d)
        inv_freq, self.attention_factor = self._compute(None, None)
        self.rotary_dim = 2 * inv_freq.shape[0]
        if self.rotary_dim > self.head_dim:
            raise ValueError(f"rotary_dim must be <= head_dim ({head_dim}), got {self.rotary_dim}")
        if self.keep_longest and self.rope_type != "dynamic":
            raise ValueError(
                f"keep_longest must be False for rope_type {self.rope_type!r} (it keeps "
                "dynamic NTK's longest length), got True"
            )
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._tables: dict[tuple[torch.device, torch.dtype], tuple[torch.Tensor, torch.Tensor]] = {}
        self._longest: int | torch.Tensor | None = None

    def _frequency_dim(self, rotary_dim: object) -> int:
        if rotary_dim is None:
            return frequency_dim(self.head_dim, self.scaling)
        rotary_dim = check_even("rotary_dim", rotary_dim)
        if rotary_dim > self.head_dim:
            raise ValueError(f"rotary_dim must be <= head_dim ({self.head_dim}), got {rotary_dim}")
        proportion = self.scaling.partial_rotary_factor
        if proportion is not None and self.rope_type != "proportional":
            from_dict = int(self.head_dim * proportion)
            if from_dict != rotary_dim:
                raise ValueError(
                    f"rotary_dim must agree with scaling['partial_rotary_factor'] ({proportion} "
                    f"of head_dim {self.head_dim} = {from_dict}) when both are given, "
                    f"got {rotary_dim}"
                )
        return frequency_dim(rotary_dim, self.scaling.replace(partial_rotary_factor=None))

    def _compute(self, device, seq_len) -> tuple[torch.Tensor, float]:
        # The variant's function on the parsed spec: no checks of the dict at every call.
        return self._variant.inv_freq(self._dim, self.base, self.scaling, seq_len, device)

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies depend on the current length (``dynamic``, ``longrope``)."""
        return self._variant.length_dependent

    def _frequencies(
        self, device: torch.device, seq_len: int | torch.Tensor | None
    ) -> tuple[torch.Tensor, float]:
        if self.length_dependent:
            return self._compute(device, self._length(seq_len))
        if same_device(self.inv_freq.device, device):
            return self.inv_freq, self.attention_factor
        # Another device: compute there rather than copy (no transfer inside forward).
        return self._compute(device, None)

    def _length(self, seq_len: int | torch.Tensor | None) -> int | torch.Tensor | None:
        """``seq_len``, or with ``keep_longest`` the longest so far (transformers' rule)."""
        if not self.keep_longest or seq_len is None:
            return seq_len
        original = self.scaling.original_max_position_embeddings
        previous = original if self._longest is None else self._longest
        if isinstance(seq_len, int) and isinstance(previous, int):
            # grow past the longest; below the trained length, go back to it
            longest = original if seq_len < original else max(previous, seq_len)
        else:  # a length on the device: the same rule, without reading it on the host
            device = (seq_len if isinstance(seq_len, torch.Tensor) else previous).device
            # torch.full fills on the device: an int becomes a tensor without a copy or a sync
            seq_len, previous = (
                x if isinstance(x, torch.Tensor) else torch.full((), x, device=device)
                for x in (seq_len, previous)
            )
            longest = torch.where(
                seq_len < original,
                torch.full_like(seq_len, original),
                torch.maximum(previous, seq_len),
            )
        self._longest = longest
        return longest

    def _cached_range(
        self, start: int, stop: int, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        key = (device, dtype)
        tables = self._tables.get(key)
        cached = 0 if tables is None else tables[0].shape[0]
        if stop <= cached:
            return tables[0][start:stop], tables[1][start:stop]
        inv_freq, factor = self._frequencies(device, None)
        length = _table_length(stop)
        if length > 2 * max(cached, stop - start, _MIN_TABLE):
            # Mostly rows nobody asked for (e.g. one query at offset 2**31): these rows only.
            positions = torch.arange(start, stop, device=device)
            return rotary_cos_sin(
                positions, inv_freq, layout=self.layout, attention_factor=factor, dtype=dtype
            )
        tables = rotary_cos_sin(
            torch.arange(length, device=device),
            inv_freq,
            layout=self.layout,
            attention_factor=factor,
            dtype=dtype,
        )
        self._tables[key] = tables
        return tables[0][start:stop], tables[1][start:stop]

    def cos_sin(
        self,
        positions: int | torch.Tensor,
        *,
        offset: int = 0,
        seq_len: int | torch.Tensor | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""The tables \(a\cos(m\theta_i)\), \(a\sin(m\theta_i)\) in this module's layout.

        Args:
            positions: An int ``n`` (positions ``offset .. offset + n - 1``, served from the
                cache) or an integer tensor of any shape.
            offset: First position when ``positions`` is an int; 0 with a tensor.
            seq_len: Current sequence length for ``dynamic``/``longrope`` scaling: an int or a
                0-d integer tensor; default ``offset + n`` for an int, and
                ``positions.max() + 1`` (a tensor, no synchronisation) for a tensor, as
                transformers does.
            device: Device when ``positions`` is an int (default: that of ``inv_freq``); with a
                tensor, None or the tensor's device.
            dtype: Floating dtype of the tables.

        Returns:
            ``(cos, sin)`` of shape ``(n, rotary_dim)`` or ``(*positions.shape, rotary_dim)``.

        Raises:
            TypeError: ``positions`` is neither an int nor an integer tensor, or ``dtype`` is
                not floating.
            ValueError: Negative positions, an offset with a tensor, or a ``device`` other than
                the tensor's.
        """
        check_int("offset", offset)
        dtype = check_float_dtype("dtype", dtype)
        device = check_device("device", device)
        seq_len = check_seq_len(seq_len)
        if isinstance(positions, torch.Tensor):
            check_positions("positions", positions)
            if offset:
                raise ValueError(
                    f"offset must be 0 when positions is a tensor (it says where every token "
                    f"is), got {offset}"
                )
            if device is not None:
                check_on_device("positions", positions, device, "the requested")
            device = positions.device
            if self.length_dependent and seq_len is None and positions.numel():
                seq_len = positions.max() + 1  # stays on the device: no synchronisation
        else:
            count = check_int("positions", positions)
            device = device if device is not None else self.inv_freq.device
            if not self.length_dependent and not is_compiling():
                return self._cached_range(offset, offset + count, device, dtype)
            seq_len = offset + count if seq_len is None else seq_len
            positions = torch.arange(offset, offset + count, device=device)
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
        seq_len: int | torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Rotate queries and keys: \(q_m \mapsto R_m q_m\), \(k_m \mapsto R_m k_m\).

        Args:
            q: Queries ``(batch, heads, seq, head_dim)``, floating point.
            k: Keys ``(batch, kv_heads, seq, head_dim)``; ``kv_heads`` divides ``heads``
                (grouped-query attention).
            positions: Integer positions ``(seq,)`` or ``(batch, seq)`` (KV-cache decoding, left
                padding, packed sequences); default ``offset .. offset + seq - 1``.
            offset: First position when ``positions`` is None (the KV-cache length).
            seq_len: Current length for ``dynamic``/``longrope`` scaling (default
                ``offset + seq`` without ``positions``, ``positions.max() + 1`` with them).

        Returns:
            ``(q_rotated, k_rotated)``, same shapes and dtypes as ``q`` and ``k``.

        Raises:
            TypeError: Non-floating ``q``/``k`` or non-integer ``positions``.
            ValueError: Wrong ranks, mismatched shapes or devices, negative positions, or an
                ``offset`` together with ``positions``.
            RuntimeError: ``kernel="compiled"`` and `torch.compile` cannot build its kernel
                (no C++ compiler on CPU, no Triton on CUDA), or ``kernel="triton"`` without
                Triton installed.
        """
        self._check_qk(q, k)
        batch, _, seq, _ = q.shape
        kernel = "eager" if is_compiling() else _chosen_kernel(self.kernel, q)
        if kernel == "triton":
            return self._rotate_triton(q, k, positions, offset, seq_len)
        if positions is None:
            cos, sin = self.cos_sin(
                seq, offset=offset, seq_len=seq_len, device=q.device, dtype=q.dtype
            )
        else:
            check_sequence_positions(
                positions, batch=batch, seq=seq, device=q.device, offset=offset
            )
            cos, sin = self.cos_sin(positions, seq_len=seq_len, dtype=q.dtype)
            if positions.ndim == 2:  # (batch, 1, seq, rotary_dim): the same over the heads
                cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        if kernel == "compiled":
            return rope_kernels.rotate_qk_compiled(q, k, cos, sin, self.layout)
        return (
            apply_rotary(q, cos, sin, layout=self.layout, kernel="eager"),
            apply_rotary(k, cos, sin, layout=self.layout, kernel="eager"),
        )

    def _rotate_triton(self, q, k, positions, offset, seq_len):
        # No tables: the kernel computes each angle from the position and the frequencies.
        if positions is None:
            check_int("offset", offset)
            positions = torch.arange(offset, offset + q.shape[2], device=q.device)
            if seq_len is None:
                seq_len = offset + q.shape[2]
        else:
            check_sequence_positions(
                positions, batch=q.shape[0], seq=q.shape[2], device=q.device, offset=offset
            )
            if self.length_dependent and seq_len is None and positions.numel():
                seq_len = positions.max() + 1  # on the device: no synchronisation
        inv_freq, factor = self._frequencies(q.device, check_seq_len(seq_len))
        triton_rope = _triton()
        # q, k and positions are checked above: only what the kernel adds (dtype, device)
        triton_rope._check_inputs(("q", q), ("k", k))
        return triton_rope._rotate_qk(
            q, k, positions, inv_freq.float().contiguous(), self.layout, float(factor)
        )

    def _apply(self, fn, recurse=True):
        # .to()/.cuda()/.half() make cached tables stale; rebuild lazily where they are used.
        self._tables.clear()
        super()._apply(fn, recurse)
        if self.inv_freq.dtype not in (torch.float32, torch.float64):
            # A model-wide .to(bfloat16) casts buffers too: θ_i rounded to 8 bits moves the
            # angle at position m by about m·θ_i·2⁻⁹, so compute the frequencies again.
            self.inv_freq = self._compute(self.inv_freq.device, None)[0]
        return self

    def _check_qk(self, q: torch.Tensor, k: torch.Tensor) -> None:
        check_qk(q, k, self.head_dim, same_seq=True)

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, rotary_dim={self.rotary_dim}, base={self.base}, "
            f"layout={self.layout!r}, rope_type={self.rope_type!r}"
            + (f", kernel={self.kernel!r}" if self.kernel != "auto" else "")
        )
