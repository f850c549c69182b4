r"""RoPE over several position axes: 2-D axial RoPE for image patches, M-RoPE for text + images
+ video (Qwen2-VL, Qwen2.5-VL, Qwen3-VL).

A token has one coordinate per axis: \((\text{row}, \text{col})\) for a patch, \((t, h, w)\) for a
token of a vision-language model. Each frequency pair \(j\) of a head is given one frequency
\(\theta_j\) *and one axis* \(a_j\), and turns by

\[
\varphi_j = \theta_j \, p_{a_j},
\]

the coordinate of the token on that axis times the frequency. A score then depends on the
offsets \(p' - p\) along each axis, as 1-D RoPE depends on \(n - m\). The schemes differ only
in the two lists \(\theta_j\) and \(a_j\):

- **axial 2-D** (Su 2021; Heo et al. 2024; the vision encoders of Qwen2-VL to Qwen3-VL, and
  Pixtral): the first half of the pairs follow the first axis, the second half the second
  (`axial_inv_freq` says which frequencies each half gets);
- **M-RoPE** (Qwen2-VL, Qwen2.5-VL): the pairs are cut into three contiguous sections for
  \(t, h, w\) (``mrope_section``, counted in *pairs*, e.g. ``[16, 24, 24]`` for head_dim 128);
- **interleaved M-RoPE** (Qwen3-VL): pair \(j\) follows axis \(j \bmod 3\), so that every axis
  gets fast and slow frequencies.

When every coordinate of a token is the same number \(p\) (text tokens in M-RoPE),
\(\varphi_j = \theta_j p\) for every pair: exactly 1-D RoPE, whatever the axes.

Read top to bottom: which axis each pair follows (`mrope_axes`), the tables for any axes
(`multi_axis_cos_sin`) and for M-RoPE (`mrope_cos_sin`), the position ids of a text + image +
video sequence (`mrope_position_ids`), and the 2-D tables of a patch grid (`patch_positions`,
`axial_inv_freq`, `axial_cos_sin`). The tables are those of `posenc.rotary_cos_sin`, in the
same layouts, and rotate queries and keys with `posenc.apply_rotary`.

Shapes: coordinates come first, ``(axes, ...)``: ``(3, batch, seq)`` position ids as
transformers' Qwen-VL models take them, ``(2, n)`` for a patch grid. Tables have the shape of
one axis plus the rotated width, ``(batch, seq, head_dim)``; for queries
``(batch, heads, seq, head_dim)`` insert the heads dimension: ``cos[:, None]``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import NamedTuple

import torch

from ._checks import (
    check_choice,
    check_device,
    check_even,
    check_float_dtype,
    check_floating,
    check_int,
    check_ints,
    check_number,
    check_positions,
)
from .rope import LAYOUTS, _cos_sin_from_angles
from .rope_scaling import default_inv_freq

AXIAL_SPLITS = ("halves", "parity")


# ── which axis each frequency pair follows ──────────────────────────────────


def mrope_axes(sections: Sequence[int], *, interleaved: bool = False) -> tuple[int, ...]:
    r"""The axis \(a_j\) (0 = \(t\), 1 = \(h\), 2 = \(w\)) of every frequency pair \(j\).

    ``sections`` counts frequency *pairs*, not dimensions: ``[16, 24, 24]`` covers the 64
    pairs of a 128-dimensional head.

    - contiguous (Qwen2-VL, Qwen2.5-VL, transformers' ``recomposition_frequencies``): pairs
      \(0..s_t-1\) follow \(t\), the next \(s_h\) follow \(h\), the last \(s_w\) follow \(w\);
    - interleaved (Qwen3-VL): pair \(j\) follows \(h\) if \(j \bmod 3 = 1\) and \(j < 3 s_h\),
      \(w\) if \(j \bmod 3 = 2\) and \(j < 3 s_w\), and \(t\) otherwise; with ``[24, 20, 20]``
      the pairs run \(t, h, w, t, h, w, \dots\) up to pair 59 and pairs 60 to 63 follow \(t\).

    Args:
        sections: Three ints >= 1, pairs per axis \((s_t, s_h, s_w)\).
        interleaved: Qwen3-VL's interleaved order instead of contiguous sections.

    Returns:
        A tuple of ``sum(sections)`` ints in ``{0, 1, 2}``.

    Raises:
        TypeError: ``sections`` is not a list of ints, or ``interleaved`` not a bool.
        ValueError: Not three sections, a section < 1, or (interleaved) sections that the
            interleaved order cannot give: each axis must end up with the pairs its section
            asks for.
    """
    sections = check_ints("sections", sections, length=3)
    if not isinstance(interleaved, bool):
        raise TypeError(f"interleaved must be True or False, got {interleaved!r}")
    pairs = sum(sections)
    if not interleaved:
        return tuple(axis for axis, count in enumerate(sections) for _ in range(count))
    axes = []
    for j in range(pairs):
        if j % 3 == 1 and j < 3 * sections[1]:
            axes.append(1)  # h on pairs 1, 4, 7, ... below 3·s_h
        elif j % 3 == 2 and j < 3 * sections[2]:
            axes.append(2)  # w on pairs 2, 5, 8, ... below 3·s_w
        else:
            axes.append(0)  # t on every other pair
    counts = tuple(axes.count(axis) for axis in range(3))
    if counts != sections:
        raise ValueError(
            f"sections must be reachable by interleaving t, h, w over {pairs} pairs (h on "
            f"pairs 1, 4, ... below 3*s_h, w on pairs 2, 5, ... below 3*s_w, t elsewhere), "
            f"got {list(sections)}, which interleaves to {list(counts)}"
        )
    return tuple(axes)


# ── the tables ──────────────────────────────────────────────────────────────


def multi_axis_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    axes: Sequence[int],
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Tables \(a\cos\varphi_j\), \(a\sin\varphi_j\) with \(\varphi_j = \theta_j\, p_{a_j}\).

    Pair \(j\) reads the coordinate of axis ``axes[j]``. Angles are computed in float32, in
    the order transformers computes them (position times frequency, then cos and sin), and
    cast to ``dtype`` at the end: the tables equal transformers' bit for bit.

    Args:
        positions: Integer coordinates ``(n_axes, *shape)``, e.g. ``(3, batch, seq)``.
        inv_freq: Frequencies \(\theta_j\), a 1-D floating tensor of ``len(axes)`` entries on
            the device of ``positions``.
        axes: The axis of every pair, ints in ``0 .. n_axes - 1`` (see `mrope_axes`).
        layout: ``"half"`` (pair \(j\) is channels \(j, j + d/2\): Hugging Face) or
            ``"interleaved"`` (channels \(2j, 2j+1\)).
        attention_factor: Factor \(a\) on cos and sin; 1 by default.
        dtype: Floating dtype of the tables.

    Returns:
        ``(cos, sin)``, each ``(*shape, 2 * len(axes))``.

    Raises:
        TypeError: Non-integer ``positions``, non-floating ``inv_freq``, ``axes`` not a list of
            ints, a non-floating ``dtype``.
        ValueError: ``positions`` with fewer than 2 dimensions or negative (checked on CPU);
            ``inv_freq`` not 1-D, of another length than ``axes`` or on another device; an axis
            outside ``0 .. n_axes - 1``; an unknown ``layout``; ``attention_factor`` <= 0.
    """
    check_positions("positions", positions)
    if positions.ndim < 2:
        raise ValueError(
            "positions must have the axes first and at least one more dimension, "
            f"(n_axes, ...), got shape {tuple(positions.shape)}"
        )
    check_floating("inv_freq", inv_freq, ndim=1)
    axes = _check_axes(axes, positions.shape[0])
    if inv_freq.shape[0] != len(axes):
        raise ValueError(
            f"inv_freq must have one frequency per entry of axes ({len(axes)}), "
            f"got {inv_freq.shape[0]}"
        )
    if inv_freq.device != positions.device:
        raise ValueError(
            f"inv_freq must be on positions' device ({positions.device}), got {inv_freq.device}"
        )
    check_choice("layout", layout, LAYOUTS)
    attention_factor = check_number("attention_factor", attention_factor, above=0)
    dtype = check_float_dtype("dtype", dtype)
    index = torch.tensor(axes, device=positions.device)
    chosen = positions.index_select(0, index)  # (pairs, *shape): p_{a_j} for every pair j
    angles = chosen.movedim(0, -1).float() * inv_freq.float()  # φ_j = θ_j · p_{a_j}, float32
    return _cos_sin_from_angles(angles, layout, attention_factor, dtype)


def _check_axes(axes: object, n_axes: int) -> tuple[int, ...]:
    if isinstance(axes, str | bytes | torch.Tensor) or not isinstance(axes, Sequence):
        raise TypeError(f"axes must be a list of ints, got {type(axes).__name__} {axes!r}")
    if not axes:
        raise ValueError("axes must not be empty")
    checked = tuple(check_int(f"axes[{j}]", a) for j, a in enumerate(axes))
    if max(checked) >= n_axes:
        raise ValueError(
            f"axes must name axes of positions (0 .. {n_axes - 1}, positions.shape[0] is "
            f"{n_axes}), got {max(checked)}"
        )
    return checked


def mrope_cos_sin(
    position_ids: torch.Tensor,
    inv_freq: torch.Tensor,
    sections: Sequence[int],
    *,
    interleaved: bool = False,
    attention_factor: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""M-RoPE tables: pair \(j\) turns by \(\theta_j\) times the \(t\), \(h\) or \(w\) id.

    What transformers' ``Qwen2VLRotaryEmbedding`` (contiguous sections) and
    ``Qwen3VLTextRotaryEmbedding`` (``interleaved=True``) return, bit for bit, in the half
    layout they use. Rotate with ``posenc.apply_rotary(q, cos[:, None], sin[:, None])``.

    Args:
        position_ids: Integer ids ``(3, batch, seq)`` (rows \(t, h, w\)), or ``(3, seq)``.
        inv_freq: \(\theta_j\), ``(sum(sections),)``: ``posenc.default_inv_freq(head_dim, base)``.
        sections: Pairs per axis, e.g. ``[16, 24, 24]`` (Qwen2-VL) or ``[24, 20, 20]``
            (Qwen3-VL); see `mrope_axes`.
        interleaved: Qwen3-VL's interleaved order.
        attention_factor: Factor on cos and sin; 1 by default.
        dtype: Floating dtype of the tables.

    Returns:
        ``(cos, sin)``, each ``(batch, seq, 2 * sum(sections))`` (or ``(seq, ...)``).

    Raises:
        TypeError, ValueError: As `mrope_axes` and `multi_axis_cos_sin`; also ``position_ids``
            without exactly 3 rows.
    """
    check_positions("position_ids", position_ids, ndim=(2, 3))
    if position_ids.shape[0] != 3:
        raise ValueError(
            "position_ids must have 3 rows (t, h, w) first, (3, batch, seq) or (3, seq), "
            f"got shape {tuple(position_ids.shape)}"
        )
    axes = mrope_axes(sections, interleaved=interleaved)
    return multi_axis_cos_sin(
        position_ids, inv_freq, axes, attention_factor=attention_factor, dtype=dtype
    )


# ── the position ids of a text + image + video sequence ─────────────────────


class VisionGrid(NamedTuple):
    r"""One image or video in a token sequence, as the processor describes it (``grid_thw``).

    ``t, h, w`` count vision-encoder patches (``h = height_pixels // patch_size``); the
    language model sees ``t * (h // m) * (w // m)`` tokens for a spatial merge ``m``.
    ``time_interval`` is the step of the temporal id between two temporal patches: 1 in
    Qwen2-VL; in Qwen2.5-VL ``tokens_per_second * second_per_grid_t`` for a video (its temporal
    ids follow seconds, not frame numbers) and 1 for an image.
    """

    t: int
    h: int
    w: int
    time_interval: float = 1.0


# Where the ids go on after an image or video: two rules, both in released code (see
# mrope_position_ids), offered by name so that neither is applied silently.
AFTER_VISION = ("largest_id", "spatial_extent")


def mrope_position_ids(
    pieces: Sequence[int | Sequence[int | float]],
    *,
    spatial_merge_size: int = 2,
    after_vision: str = "largest_id",
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""The \((t, h, w)\) ids of every token of one sequence of text, images and videos.

    What Qwen-VL's ``get_rope_index`` computes, by the rule of the Qwen2-VL paper (§2.1):

    - a text token gets the same id \(p\) in all three rows; ids count up by one;
    - a vision block that starts at \(s\) gives its token at temporal patch \(k\), row \(r\),
      column \(c\) the ids \((s + \lfloor k\,\Delta\rfloor,\ s + r,\ s + c)\), in the order
      \(k, r, c\) (row-major within a frame), with \(\Delta\) = ``time_interval``;
    - whatever follows a block starts at the block's largest id plus one
      (``after_vision="largest_id"``).

    For an image (\(k = 0\)) the largest id is \(s + \max(h', w') - 1\), so text after it
    starts at \(s + \max(h', w')\) with \(h' = h/m\), \(w' = w/m\). For a video whose
    temporal ids run past its spatial ones (more temporal patches than rows and columns, or
    Qwen2.5-VL's time steps), the two rules in released code differ, and ``after_vision``
    names the one to apply:

    - ``"largest_id"`` (the default): after the block's largest id, temporal ids included, as
      the paper, Qwen's original code and transformers up to 5.2 compute;
    - ``"spatial_extent"``: \(s + \max(h', w')\) after every block, as transformers 5.3 to
      5.23 compute (``get_rope_index``), which starts the text below the video's last
      temporal ids.

    Qwen3-VL cuts a video into frames with timestamp text between them: pass each frame as
    ``(1, h, w)`` (both rules then agree).

    Args:
        pieces: In sequence order: an int ``n`` >= 1 for ``n`` text tokens, or ``(t, h, w)``
            / ``(t, h, w, time_interval)`` / a `VisionGrid` for an image or video (``h`` and
            ``w`` divisible by ``spatial_merge_size``; ``time_interval`` > 0).
        spatial_merge_size: Patches merged per side into one language-model token (2 in
            Qwen2-VL to Qwen3-VL).
        after_vision: Where the ids go on after an image or video: ``"largest_id"`` or
            ``"spatial_extent"`` (above).
        device: Device of the result.

    Returns:
        An int64 tensor ``(3, seq)``; stack several with ``torch.stack(ids, dim=1)`` for
        ``(3, batch, seq)``.

    Raises:
        TypeError: A piece that is neither an int nor a tuple of ints, a non-int size.
        ValueError: No pieces, a size < 1, ``h`` or ``w`` not divisible by the merge size, a
            ``time_interval`` that is not a finite number > 0, an unknown ``after_vision``.
    """
    merge = check_int("spatial_merge_size", spatial_merge_size, minimum=1)
    check_choice("after_vision", after_vision, AFTER_VISION)
    device = check_device("device", device)
    if isinstance(pieces, str | bytes | torch.Tensor) or not isinstance(pieces, Sequence):
        raise TypeError(
            f"pieces must be a list of ints (text) and (t, h, w) tuples (images, videos), "
            f"got {type(pieces).__name__}"
        )
    if not pieces:
        raise ValueError("pieces must not be empty")
    blocks, start = [], 0  # start: the id the next piece begins at (max so far + 1)
    for i, piece in enumerate(pieces):
        if isinstance(piece, numbers.Integral) and not isinstance(piece, bool):
            count = check_int(f"pieces[{i}]", piece, minimum=1)
            blocks.append(torch.arange(start, start + count).expand(3, count))  # t = h = w
            start += count
            continue
        grid = _check_grid(f"pieces[{i}]", piece, merge)
        rows, cols = grid.h // merge, grid.w // merge  # h', w': the merged grid
        temporal = (torch.arange(grid.t) * grid.time_interval).long()  # ⌊k·Δ⌋
        t_ids, h_ids, w_ids = torch.meshgrid(
            temporal, torch.arange(rows), torch.arange(cols), indexing="ij"
        )
        block = torch.stack((t_ids, h_ids, w_ids)).reshape(3, -1) + start  # (3, t·h'·w')
        blocks.append(block)
        if after_vision == "largest_id":
            start = int(block.max()) + 1  # a host-side tensor: no device sync
        else:
            start += max(rows, cols)
    return torch.cat(blocks, dim=1).to(device=device)


def _check_grid(name: str, piece: object, merge: int) -> VisionGrid:
    if isinstance(piece, str | bytes | torch.Tensor) or not isinstance(piece, Sequence):
        raise TypeError(
            f"{name} must be an int (text tokens) or (t, h, w[, time_interval]), "
            f"got {type(piece).__name__} {piece!r}"
        )
    if len(piece) not in (3, 4):
        raise ValueError(
            f"{name} must be (t, h, w) or (t, h, w, time_interval), got {len(piece)} entries"
        )
    t, h, w = (check_int(f"{name}[{k}]", v, minimum=1) for k, v in enumerate(piece[:3]))
    interval = check_number(f"{name}[3]", piece[3], above=0) if len(piece) == 4 else 1.0
    for axis, size in (("h", h), ("w", w)):
        if size % merge:
            raise ValueError(
                f"{name}: {axis} must be divisible by spatial_merge_size ({merge}), got {size}"
            )
    return VisionGrid(t, h, w, interval)


# ── 2-D axial RoPE for a patch grid ─────────────────────────────────────────


def patch_positions(
    height: int,
    width: int,
    *,
    merge_size: int = 1,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""(row, column) of every patch of a ``height x width`` grid, in token order.

    With ``merge_size`` 1 the order is row-major (Pixtral, RoPE-ViT). With ``merge_size``
    \(m > 1\) the patches of each \(m \times m\) block come together, blocks in row-major
    order (Qwen-VL vision encoders, so that a block merges into one token), as transformers'
    ``get_vision_position_ids`` orders them.

    Returns:
        An int64 tensor ``(2, height * width)``: rows, then columns.

    Raises:
        TypeError: A size that is not an int.
        ValueError: A size < 1, or ``height``/``width`` not divisible by ``merge_size``.
    """
    height = check_int("height", height, minimum=1)
    width = check_int("width", width, minimum=1)
    merge = check_int("merge_size", merge_size, minimum=1)
    device = check_device("device", device)
    for name, size in (("height", height), ("width", width)):
        if size % merge:
            raise ValueError(f"{name} must be divisible by merge_size ({merge}), got {size}")
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    blocks = (height // merge, merge, width // merge, merge)  # (block row, r, block col, c)
    rows = rows.reshape(blocks).transpose(1, 2).flatten()
    cols = cols.reshape(blocks).transpose(1, 2).flatten()
    return torch.stack((rows, cols)).to(device=device)


def axial_inv_freq(
    head_dim: int,
    base: float = 10000.0,
    *,
    split: str = "halves",
    device: torch.device | str | None = None,
) -> torch.Tensor:
    r"""Frequencies of 2-D axial RoPE: the first ``head_dim // 4`` pairs follow axis 0 (rows),
    the others axis 1 (columns).

    - ``"halves"`` (Qwen2-VL to Qwen3-VL vision encoders; RoPE-ViT's axial variant): each axis
      gets the same ladder \(\theta_k = \mathrm{base}^{-4k/d}\), \(k = 0..d/4 - 1\), i.e. 1-D
      RoPE for a head of \(d/2\) channels.
    - ``"parity"`` (Pixtral): the ladder of 1-D RoPE over the whole head,
      \(\mathrm{base}^{-2i/d}\), dealt out by parity: even \(i\) to rows
      (\(\mathrm{base}^{-4k/d}\)), odd \(i\) to columns (\(\mathrm{base}^{-(4k+2)/d}\)).

    Returns:
        Float32 ``(head_dim // 2,)``: the row frequencies, then the column frequencies.

    Raises:
        TypeError: ``head_dim`` not an int, ``base`` not a number.
        ValueError: ``head_dim`` not a positive multiple of 4, ``base`` <= 1, unknown ``split``.
    """
    check_even("head_dim", head_dim)
    if head_dim % 4:
        raise ValueError(
            f"head_dim must be a multiple of 4 (two axes, each with pairs of channels), "
            f"got {head_dim}"
        )
    base = check_number("base", base, above=1)
    check_choice("split", split, AXIAL_SPLITS)
    device = check_device("device", device)
    if split == "halves":
        ladder = default_inv_freq(head_dim // 2, base, device=device)  # base^(-2k/(d/2))
        return torch.cat((ladder, ladder))
    ladder = default_inv_freq(head_dim, base, device=device)  # base^(-2i/d)
    return torch.cat((ladder[0::2], ladder[1::2]))  # even i: rows, odd i: columns


def axial_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    layout: str = "half",
    attention_factor: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""2-D tables: the first half of the pairs turn with the row, the second with the column.

    \(\varphi_j = \theta_j\,\text{row}\) for \(j < d/4\) and \(\theta_j\,\text{col}\) after:
    Su's block-diagonal \(R_{x,y} = \operatorname{diag}(R_x, R_y)\). With `axial_inv_freq`
    these are the tables of transformers' ``Qwen2VLVisionRotaryEmbedding`` (``"halves"``) and
    ``PixtralVisionRotaryEmbedding`` (``"parity"``), bit for bit.

    Args:
        positions: Integer ``(2, *shape)``, rows then columns (`patch_positions`).
        inv_freq: ``(head_dim // 2,)``: `axial_inv_freq`.
        layout: As in `multi_axis_cos_sin`.
        attention_factor: As in `multi_axis_cos_sin`.
        dtype: As in `multi_axis_cos_sin`.

    Returns:
        ``(cos, sin)``, each ``(*shape, head_dim)``.

    Raises:
        TypeError, ValueError: As `multi_axis_cos_sin`; also ``positions`` without exactly 2
            rows, or ``inv_freq`` of odd length.
    """
    check_positions("positions", positions)
    if positions.ndim < 2 or positions.shape[0] != 2:
        raise ValueError(
            "positions must have 2 rows (row, column) first, (2, ...), "
            f"got shape {tuple(positions.shape)}"
        )
    check_floating("inv_freq", inv_freq, ndim=1)
    pairs = inv_freq.shape[0]
    if pairs % 2 or pairs == 0:
        raise ValueError(
            f"inv_freq must have an even length (half for rows, half for columns), got {pairs}"
        )
    axes = (0,) * (pairs // 2) + (1,) * (pairs // 2)
    return multi_axis_cos_sin(
        positions, inv_freq, axes, layout=layout, attention_factor=attention_factor, dtype=dtype
    )


__all__ = [
    "AXIAL_SPLITS",
    "VisionGrid",
    "axial_cos_sin",
    "axial_inv_freq",
    "mrope_axes",
    "mrope_cos_sin",
    "mrope_position_ids",
    "multi_axis_cos_sin",
    "patch_positions",
]
