"""Shared input checks, so that every error message reads the same way.

Every message names the argument, says what is allowed and what was given:
``"head_dim must be a positive even int, got 7"``. A wrong *type* raises `TypeError`, a
wrong *value* of the right type `ValueError`.

Checks that read tensor *values* (for example "no negative positions") would force a
host-device synchronisation on an accelerator and cannot run inside ``torch.compile``.
They therefore run only on CPU tensors outside compilation (see `values_checkable`); on
other devices, or while compiling, only shapes, dtypes and devices are checked.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import torch


def is_compiling() -> bool:
    """True while `torch.compile` traces the caller."""
    return torch.compiler.is_compiling()


def values_checkable(tensor: torch.Tensor) -> bool:
    """Whether reading ``tensor``'s values is free: a CPU tensor outside compilation."""
    return tensor.device.type == "cpu" and not is_compiling()


def _given(value: object) -> str:
    """How a message shows what was given: the value, with its type when that is the problem."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


# ── numbers and flags ───────────────────────────────────────────────────────


def check_int(name: str, value: object, *, minimum: int = 0) -> int:
    """Check that ``value`` is a Python int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}, got {_given(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_even(name: str, value: object) -> int:
    """Check that ``value`` is a positive even int (rotations act on pairs of channels)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive even int, got {_given(value)}")
    if value < 1 or value % 2:
        raise ValueError(f"{name} must be a positive even int, got {value!r}")
    return int(value)


def check_number(
    name: str,
    value: object,
    *,
    above: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
) -> float:
    """Check that ``value`` is a finite real number within the given bounds.

    ``inf`` and ``nan`` are refused: no formula in this package means anything with them.
    """
    bounds = [
        f"> {above:g}" if above is not None else "",
        f">= {at_least:g}" if at_least is not None else "",
        f"<= {at_most:g}" if at_most is not None else "",
    ]
    allowed = " and ".join(b for b in bounds if b)
    wanted = f"a finite number {allowed}".rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {wanted}, got {_given(value)}")
    number = float(value)
    if (
        not math.isfinite(number)
        or (above is not None and not number > above)
        or (at_least is not None and not number >= at_least)
        or (at_most is not None and not number <= at_most)
    ):
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return number


def check_positive(name: str, value: object) -> float:
    """Check that ``value`` is a finite real number > 0."""
    return check_number(name, value, above=0)


def check_base(name: str, value: object) -> float:
    r"""Check a frequency base: finite and > 1, so that \(\mathrm{base}^{-2i/d}\) decreases."""
    return check_number(name, value, above=1)


def check_numbers(name: str, value: object, *, above: float = 0) -> tuple[float, ...]:
    """Check that ``value`` is a list or tuple of finite numbers > ``above``."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of finite numbers > {above:g}, got {_given(value)}")
    return tuple(check_number(f"{name}[{i}]", v, above=above) for i, v in enumerate(value))


def check_ints(name: str, value: object, *, length: int | None = None) -> tuple[int, ...]:
    """Check that ``value`` is a non-empty list or tuple of ints >= 1 (``length`` of them if
    given). A tensor is refused: reading its values would synchronise with its device."""
    if isinstance(value, str | bytes | torch.Tensor) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a list of ints >= 1, got {_given(value)}")
    if length is not None and len(value) != length:
        raise ValueError(f"{name} must have {length} entries, got {len(value)}: {list(value)!r}")
    if not value:
        raise ValueError(f"{name} must not be empty")
    return tuple(check_int(f"{name}[{i}]", v, minimum=1) for i, v in enumerate(value))


def check_bool(name: str, value: object) -> bool:
    """Check that ``value`` is True or False (not a truthy int or string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {_given(value)}")
    return value


def check_choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """Check that ``value`` is one of ``allowed``."""
    allowed = tuple(allowed)
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def check_float_dtype(
    name: str, value: object, *, default: torch.dtype | None = None
) -> torch.dtype:
    """Check that ``value`` is a floating-point `torch.dtype` (None means ``default``)."""
    if value is None and default is not None:
        return default
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {_given(value)}")
    if not value.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {value}")
    return value


def check_device(name: str, value: object) -> torch.device | None:
    """Check that ``value`` is None, a `torch.device` or a device string such as ``"cuda:0"``."""
    if value is None or isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        try:
            return torch.device(value)
        except RuntimeError:
            pass
    raise TypeError(f"{name} must be a torch.device, a device string or None, got {_given(value)}")


# ── tensors ─────────────────────────────────────────────────────────────────


def check_tensor(
    name: str, value: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check that ``value`` is a tensor with ``ndim`` dimensions (one of them, for a tuple)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {_given(value)}")
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if allowed is not None and value.ndim not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise ValueError(f"{name} must have {wanted} dimensions, got shape {tuple(value.shape)}")
    return value


def check_floating(
    name: str, value: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check that ``value`` is a floating-point tensor (float16/bfloat16/float32/float64)."""
    tensor = check_tensor(name, value, ndim=ndim)
    if not tensor.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")
    return tensor


def check_integer_tensor(
    name: str, value: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check that ``value`` is an integer tensor (any sign)."""
    tensor = check_tensor(name, value, ndim=ndim)
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise TypeError(
            f"{name} must be an integer tensor (int32 or int64), got dtype {tensor.dtype}"
        )
    return tensor


def check_positions(
    name: str, value: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check that ``value`` is an integer tensor of positions, non-negative where checkable.

    Float positions are refused rather than truncated: ``2.7`` is almost always a bug. A
    Python list is refused too (``torch.tensor(list)`` says which dtype and device).
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be an integer torch.Tensor, got {_given(value)}")
    tensor = check_integer_tensor(name, value, ndim=ndim)
    if values_checkable(tensor) and tensor.numel() and bool((tensor < 0).any()):
        raise ValueError(f"{name} must be >= 0, got a minimum of {int(tensor.min())}")
    return tensor


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices are the same (``"cuda"`` is the current CUDA device)."""
    if a.type != b.type:
        return False
    if a.index is None or b.index is None:
        current = (
            torch.cuda.current_device() if a.type == "cuda" and torch.cuda.is_available() else 0
        )
        return (a.index if a.index is not None else current) == (
            b.index if b.index is not None else current
        )
    return a.index == b.index


def check_on_device(name: str, tensor: torch.Tensor, device: torch.device, where: str) -> None:
    """Check that ``tensor`` lives on ``device`` (``where`` says whose device that is).

    Nothing is copied between devices behind the caller's back.
    """
    if not same_device(tensor.device, device):
        raise ValueError(f"{name} must be on {where} device ({device}), got {tensor.device}")


# ── the shared shape conventions ────────────────────────────────────────────


def check_qk(q: object, k: object, head_dim: int, *, same_seq: bool = False) -> None:
    """Queries and keys for a module of ``head_dim``: floating, 4-D ``(batch, heads, seq,
    head_dim)``, the same head size and batch (and sequence length with ``same_seq``: one
    position per token for both), k's heads dividing q's, one device."""
    check_floating("q", q, ndim=4)
    check_floating("k", k, ndim=4)
    for name, x in (("q", q), ("k", k)):
        if x.shape[-1] != head_dim:
            raise ValueError(
                f"{name}.shape[-1] must equal head_dim ({head_dim}), got {x.shape[-1]}"
            )
    if same_seq and (k.shape[0], k.shape[2]) != (q.shape[0], q.shape[2]):
        raise ValueError(
            f"k must have q's batch and seq sizes ({q.shape[0]}, {q.shape[2]}), "
            f"got shape {tuple(k.shape)} for q shape {tuple(q.shape)}"
        )
    if k.shape[0] != q.shape[0]:
        raise ValueError(f"k must have q's batch size ({q.shape[0]}), got {k.shape[0]}")
    check_heads(q.shape[1], k.shape[1])
    check_on_device("k", k, q.device, "q's")


def check_heads(q_heads: int, kv_heads: int) -> None:
    """Grouped-query attention: the key/value heads must divide the query heads."""
    if kv_heads < 1 or q_heads % kv_heads:
        raise ValueError(
            f"k's heads must divide q's heads ({q_heads}) (grouped-query attention), got {kv_heads}"
        )


def resolve_lengths(q_len: object, k_len: object, offset: object) -> tuple[int, int, int]:
    """The one rule for ``q_len``, ``k_len`` and ``offset`` in every module.

    Queries sit at positions ``offset .. offset + q_len - 1`` and keys at ``0 .. k_len - 1``.
    Given one of ``k_len`` and ``offset``, the other follows from "the queries are the last
    ``q_len`` keys" (``k_len = offset + q_len``), which is what decoding with a KV cache
    does; given neither, ``k_len = q_len`` and ``offset = 0``; given both, both are used.
    """
    q_len = check_int("q_len", q_len)
    if k_len is None and offset is None:
        return q_len, q_len, 0
    if k_len is None:
        offset = check_int("offset", offset)
        return q_len, offset + q_len, offset
    k_len = check_int("k_len", k_len)
    if offset is None:
        if q_len > k_len:
            raise ValueError(
                f"q_len must be <= k_len ({k_len}) when offset is not given (the queries are "
                f"the last q_len keys), got {q_len}; pass offset= for other positions"
            )
        return q_len, k_len, k_len - q_len
    return q_len, k_len, check_int("offset", offset)


def check_sequence_positions(
    positions: object, *, batch: int, seq: int, device: torch.device, offset: object
) -> torch.Tensor:
    """Positions given to a module's ``forward``: ``(seq,)`` or ``(batch or 1, seq)`` integers.

    ``offset`` says where the positions start when none are given, so it must stay 0 when
    they are.
    """
    check_int("offset", offset)
    if offset:
        raise ValueError(
            f"offset must be 0 when positions are given (they say where every token is), "
            f"got {offset}"
        )
    positions = check_positions("positions", positions, ndim=(1, 2))
    if positions.shape[-1] != seq:
        raise ValueError(
            f"positions.shape[-1] must equal the sequence length ({seq}), got {positions.shape[-1]}"
        )
    if positions.ndim == 2 and positions.shape[0] not in (1, batch):
        raise ValueError(
            f"positions.shape[0] must be 1 or the batch size ({batch}), got {positions.shape[0]}"
        )
    check_on_device("positions", positions, device, "the input's")
    return positions
