r"""RoPE frequencies and their long-context variants, chosen from a registry by name.

Every variant is a function ``(dim, base, params, seq_len, device) -> (inv_freq, attention_factor)``
that starts from the default frequencies

\[
\theta_i = \mathrm{base}^{-2i/d}, \qquad i = 0, \dots, d/2 - 1,
\]

and changes them. ``attention_factor`` multiplies \(\cos\) and \(\sin\) (YaRN, LongRoPE) and is
1 otherwise. ``params`` follows Hugging Face's ``rope_parameters`` / ``rope_scaling`` convention,
so a model config's dict can be passed unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ._checks import check_even, check_int, check_positive

RopeScalingFunction = Callable[
    [int, float, Mapping[str, Any], "int | None", "torch.device | str | None"],
    tuple[torch.Tensor, float],
]

# Keys a scaling dict may hold; anything else is a typo and raises.
KNOWN_KEYS = frozenset(
    {
        "rope_type", "type", "factor", "original_max_position_embeddings",
        "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
        "truncate", "low_freq_factor", "high_freq_factor", "short_factor", "long_factor",
        "rope_theta",
    }
)  # fmt: skip


def default_inv_freq(
    dim: int, base: float = 10000.0, *, device: torch.device | str | None = None
) -> torch.Tensor:
    r"""Original RoPE frequencies \(\theta_i = \mathrm{base}^{-2i/d}\), float32, ``(dim/2,)``."""
    exponent = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim  # 2i/d
    return 1.0 / (base**exponent)


def _require(params: Mapping[str, Any], rope_type: str, *keys: str) -> list[Any]:
    missing = [key for key in keys if params.get(key) is None]
    if missing:
        raise ValueError(
            f"scaling for rope_type {rope_type!r} needs the keys {', '.join(map(repr, keys))}; "
            f"missing {', '.join(map(repr, missing))}"
        )
    return [params[key] for key in keys]


def _check_factor(factor: object) -> float:
    return check_positive("scaling['factor']", factor)


def _original_length(value: object) -> int:
    return check_int("scaling['original_max_position_embeddings']", value, minimum=1)


def _default(dim, base, params, seq_len, device):
    return default_inv_freq(dim, base, device=device), 1.0


def _linear(dim, base, params, seq_len, device):
    # Position interpolation: (p / s)·θ_i == p·(θ_i / s), so scale the frequencies instead.
    (factor,) = _require(params, "linear", "factor")
    return default_inv_freq(dim, base, device=device) / _check_factor(factor), 1.0


def _dynamic(dim, base, params, seq_len, device):
    factor, original = _require(params, "dynamic", "factor", "original_max_position_embeddings")
    factor, original = _check_factor(factor), _original_length(original)
    if dim <= 2:
        raise ValueError(f"rope_type 'dynamic' needs a rotary dimension > 2, got {dim}")
    length = original if seq_len is None else max(check_int("seq_len", seq_len), original)
    # NTK-aware base: base' = base·(s·L/L0 − (s − 1))^(d/(d−2)); equals base up to L0.
    scaled_base = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
    return default_inv_freq(dim, scaled_base, device=device), 1.0


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    # Attention temperature from the YaRN paper: 0.1·m·ln(s) + 1 (1 when not extending).
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _yarn_correction_dim(rotations: float, dim: int, base: float, original: int) -> float:
    # Dimension whose wavelength fits `rotations` turns into the trained length:
    # d·ln(L0 / (2π·r)) / (2·ln(base))
    return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn(dim, base, params, seq_len, device):
    factor, original = _require(params, "yarn", "factor", "original_max_position_embeddings")
    factor, original = _check_factor(factor), _original_length(original)
    beta_fast = check_positive("scaling['beta_fast']", params.get("beta_fast") or 32)
    beta_slow = check_positive("scaling['beta_slow']", params.get("beta_slow") or 1)
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:  # DeepSeek-V2/V3 form: ratio of two temperatures
            attention_factor = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
        else:
            attention_factor = _yarn_mscale(factor)
    low = _yarn_correction_dim(beta_fast, dim, base, original)
    high = _yarn_correction_dim(beta_slow, dim, base, original)
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # avoid a zero-width ramp
    # ramp_i = clamp((i − low) / (high − low), 0, 1): 0 keeps θ_i (fast dims), 1 interpolates.
    ramp = (
        (torch.arange(dim // 2, dtype=torch.float32, device=device) - low) / (high - low)
    ).clamp(0, 1)
    keep = 1 - ramp
    powers = base ** (torch.arange(0, dim, 2, device=device).float() / dim)  # 1/θ_i
    extrapolated = 1.0 / powers
    interpolated = 1.0 / (factor * powers)
    # θ'_i = θ_i/s·(1 − keep_i) + θ_i·keep_i
    return interpolated * (1 - keep) + extrapolated * keep, float(attention_factor)


def _longrope(dim, base, params, seq_len, device):
    short, long, original = _require(
        params, "longrope", "short_factor", "long_factor", "original_max_position_embeddings"
    )
    original = _original_length(original)
    for name, factors in (("short_factor", short), ("long_factor", long)):
        if len(factors) != dim // 2:
            raise ValueError(
                f"scaling['{name}'] must have rotary_dim/2 = {dim // 2} entries, got {len(factors)}"
            )
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        (factor,) = _require(params, "longrope", "factor")  # needed only to derive the factor
        factor = _check_factor(factor)
        # sqrt(1 + ln s / ln L0), 1 when not extending
        attention_factor = (
            1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
        )
    # Per-frequency rescaling λ_i: θ'_i = θ_i / λ_i, long factors once past the trained length.
    chosen = long if seq_len and seq_len > original else short
    rescale = torch.tensor(chosen, dtype=torch.float32, device=device)
    exponent = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim
    return 1.0 / (rescale * base**exponent), float(attention_factor)


def _llama3(dim, base, params, seq_len, device):
    factor, low_freq_factor, high_freq_factor, original = _require(
        params, "llama3", "factor", "low_freq_factor", "high_freq_factor",
        "original_max_position_embeddings",
    )  # fmt: skip
    factor, original = _check_factor(factor), _original_length(original)
    if not high_freq_factor > low_freq_factor:
        raise ValueError(
            "scaling['high_freq_factor'] must be > scaling['low_freq_factor'], got "
            f"{high_freq_factor} and {low_freq_factor}"
        )
    inv_freq = default_inv_freq(dim, base, device=device)
    low_freq_wavelen = original / low_freq_factor
    high_freq_wavelen = original / high_freq_factor
    wavelen = 2 * math.pi / inv_freq  # λ_i = 2π/θ_i
    # Long wavelengths (λ > L0/low) are interpolated by s; short ones (λ < L0/high) kept.
    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # In between: θ' = (1 − γ)·θ/s + γ·θ with γ = (L0/λ − low) / (high − low)
    smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, scaled), 1.0


ROPE_SCALING: dict[str, RopeScalingFunction] = {
    "default": _default,
    "linear": _linear,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "longrope": _longrope,
    "llama3": _llama3,
}
"""Registry of RoPE variants by ``rope_type``; add an entry to plug in a new one."""

LENGTH_DEPENDENT = frozenset({"dynamic", "longrope"})
"""Variants whose frequencies depend on the current sequence length ``seq_len``."""


def scaling_type(scaling: Mapping[str, Any] | None) -> str:
    """The ``rope_type`` (or legacy ``type``) of a scaling dict; ``"default"`` for None.

    Raises:
        TypeError: ``scaling`` is not a dict.
        ValueError: The type is missing or not in `ROPE_SCALING`, or an unknown key is present.
    """
    if scaling is None:
        return "default"
    if not isinstance(scaling, Mapping):
        raise TypeError(f"scaling must be a dict or None, got {type(scaling).__name__}")
    unknown = sorted(set(scaling) - KNOWN_KEYS)
    if unknown:
        raise ValueError(
            f"scaling has unknown keys {unknown}; allowed keys are {sorted(KNOWN_KEYS)}"
        )
    rope_type = scaling.get("rope_type", scaling.get("type"))
    if rope_type is None:
        raise ValueError(f"scaling needs a 'rope_type' key, one of {sorted(ROPE_SCALING)}")
    if rope_type not in ROPE_SCALING:
        raise ValueError(
            f"scaling['rope_type'] must be one of {sorted(ROPE_SCALING)}, got {rope_type!r}"
        )
    return rope_type


def rope_inv_freq(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, float]:
    r"""RoPE inverse frequencies \(\theta_i\) and the attention factor of a scaling variant.

    Default (``scaling=None``): \(\theta_i = \mathrm{base}^{-2i/d}\). The variants:

    - ``linear`` (position interpolation): \(\theta_i' = \theta_i / s\).
    - ``dynamic`` (NTK-aware): \(\mathrm{base}' = \mathrm{base}\,(sL/L_0 - (s-1))^{d/(d-2)}\)
      with \(L = \max(\mathrm{seq\_len}, L_0)\).
    - ``yarn``: \(\theta_i' = (1-\gamma_i)\,\theta_i/s + \gamma_i\,\theta_i\), with a linear ramp
      \(\gamma_i\) between the dimensions that turn \(\beta_\mathrm{fast}\) and
      \(\beta_\mathrm{slow}\) times within \(L_0\); attention factor \(0.1 \ln s + 1\).
    - ``longrope``: \(\theta_i' = \theta_i / \lambda_i\) with per-frequency factors \(\lambda\)
      (``long_factor`` once \(\mathrm{seq\_len} > L_0\), else ``short_factor``); attention factor
      \(\sqrt{1 + \ln s / \ln L_0}\).
    - ``llama3``: wavelengths \(2\pi/\theta_i\) longer than \(L_0/\mathrm{low}\) are divided by
      \(s\), shorter than \(L_0/\mathrm{high}\) kept, and smoothly blended in between.

    Here \(s\) = ``factor`` and \(L_0\) = ``original_max_position_embeddings`` (the trained length).
    Everything is computed in float32, in the same order of operations as Hugging Face
    transformers, so the results agree to the bit.

    Args:
        head_dim: Number of rotated channels \(d\) (``rotary_dim`` for partial rotary); even.
        base: \(\mathrm{base}\) (``rope_theta``).
        scaling: None, or a dict in Hugging Face's ``rope_parameters`` convention:
            ``{"rope_type": ..., "factor": ..., "original_max_position_embeddings": ..., ...}``
            (``"type"`` is accepted for ``"rope_type"``). A ``"rope_theta"`` entry must
            equal ``base``.
        seq_len: Current sequence length, used by ``dynamic`` and ``longrope``.
        device: Device of the result.

    Returns:
        ``(inv_freq, attention_factor)``: a float32 tensor ``(head_dim // 2,)`` and a float.

    Raises:
        TypeError: An argument has the wrong type.
        ValueError: Odd ``head_dim``, unknown ``rope_type`` or key, missing keys, ``factor`` <= 0.
    """
    check_even("head_dim", head_dim)
    base = check_positive("base", base)
    rope_type = scaling_type(scaling)
    params = scaling or {}
    if params.get("rope_theta") is not None and float(params["rope_theta"]) != base:
        raise ValueError(
            f"scaling['rope_theta'] ({params['rope_theta']}) must equal base ({base}) "
            "when both are given"
        )
    if seq_len is not None:
        check_int("seq_len", seq_len, minimum=1)
    return ROPE_SCALING[rope_type](head_dim, base, params, seq_len, device)
