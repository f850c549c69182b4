"""Shared input checks, so every error message reads the same way.

Every message names the argument, says what was expected and what was given:
``"head_dim must be a positive even int, got 7"``.

Checks that read tensor *values* (for example "no negative positions") would force a
host-device synchronisation on an accelerator and cannot run inside ``torch.compile``.
They therefore run only on CPU tensors outside compilation (see `values_checkable`); on
other devices, or while compiling, only shapes and dtypes are checked.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def is_compiling() -> bool:
    """True while `torch.compile` traces the caller."""
    return torch.compiler.is_compiling()


def values_checkable(tensor: torch.Tensor) -> bool:
    """Whether reading ``tensor``'s values is free: a CPU tensor outside compilation."""
    return tensor.device.type == "cpu" and not is_compiling()


def check_int(name: str, value: object, *, minimum: int = 0) -> int:
    """Check that ``value`` is a Python int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int >= {minimum}, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return value


def check_even(name: str, value: object) -> int:
    """Check that ``value`` is a positive even int (rotations act on pairs of channels)."""
    check_int(name, value, minimum=1)
    if value % 2:
        raise ValueError(f"{name} must be a positive even int, got {value!r}")
    return value


def check_positive(name: str, value: object) -> float:
    """Check that ``value`` is a real number > 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number > 0, got {type(value).__name__} {value!r}")
    if not value > 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


def check_bool(name: str, value: object) -> bool:
    """Check that ``value`` is True or False (not a truthy int or string)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def check_choice(name: str, value: object, allowed: Iterable[str]) -> str:
    """Check that ``value`` is one of ``allowed``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def check_tensor(
    name: str, value: object, *, ndim: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """Check that ``value`` is a tensor with ``ndim`` dimensions (one of them, for a tuple)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
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

    Float positions are refused rather than truncated: ``2.7`` is almost always a bug.
    """
    tensor = check_integer_tensor(name, value, ndim=ndim)
    if values_checkable(tensor) and tensor.numel() and bool((tensor < 0).any()):
        raise ValueError(f"{name} must be >= 0, got a minimum of {int(tensor.min())}")
    return tensor


def check_same(name: str, value: object, other_name: str, other: object) -> None:
    """Check that two sizes that must agree do agree."""
    if value != other:
        raise ValueError(f"{name} must equal {other_name} ({other!r}), got {value!r}")
