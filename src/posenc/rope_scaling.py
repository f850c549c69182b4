r"""RoPE frequencies and their long-context variants, chosen from a registry by name.

Every variant starts from the default frequencies

\[
\theta_i = \mathrm{base}^{-2i/d}, \qquad i = 0, \dots, \lceil d/2 \rceil - 1,
\]

and changes them; it returns ``(inv_freq, attention_factor)``, where ``attention_factor``
multiplies \(\cos\) and \(\sin\) (YaRN, LongRoPE) and is 1 otherwise.

A scaling dict follows Hugging Face transformers' ``rope_parameters`` (formerly
``rope_scaling``), so a model config's dict can be passed unchanged. It is parsed once into a
`RopeScaling`: every key is checked against the keys its ``rope_type`` takes, every value
against what it may be, and the values transformers derives from the config (the trained
length, YaRN's and LongRoPE's ``factor``) are filled in. Computing frequencies from a
`RopeScaling` checks nothing again.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import torch

from ._checks import (
    check_base,
    check_bool,
    check_device,
    check_even,
    check_int,
    check_integer_tensor,
    check_number,
    check_numbers,
    check_positive,
)

# ── the default frequencies ─────────────────────────────────────────────────


def _inv_freq(dim: int, base: float | torch.Tensor, device) -> torch.Tensor:
    # θ_i = 1 / base^(2i/d), float32, in the order of operations transformers uses. For an
    # odd d (transformers' rule for an odd partial rotary width) there are ceil(d/2) of them.
    exponent = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim  # 2i/d
    return 1.0 / (base**exponent)


def default_inv_freq(
    dim: int, base: float = 10000.0, *, device: torch.device | str | None = None
) -> torch.Tensor:
    r"""Original RoPE frequencies \(\theta_i = \mathrm{base}^{-2i/d}\), float32, ``(dim/2,)``.

    Args:
        dim: Number of rotated channels \(d\); a positive even int.
        base: \(\mathrm{base}\) (``rope_theta``); a finite number > 1.
        device: Device of the result.

    Raises:
        TypeError: An argument of the wrong type.
        ValueError: Odd ``dim``, or ``base`` not a finite number > 1.
    """
    check_even("dim", dim)
    return _inv_freq(dim, check_base("base", base), check_device("device", device))


# ── the parsed scaling dict ─────────────────────────────────────────────────

# What each key may hold; the checks run once, when a dict becomes a RopeScaling.
_KEY_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "factor": check_positive,
    "original_max_position_embeddings": lambda name, v: check_int(name, v, minimum=1),
    "partial_rotary_factor": lambda name, v: check_number(name, v, above=0, at_most=1),
    "rope_theta": check_base,
    "attention_factor": check_positive,
    "beta_fast": check_positive,
    "beta_slow": check_positive,
    "mscale": lambda name, v: check_number(name, v, at_least=0),
    "mscale_all_dim": lambda name, v: check_number(name, v, at_least=0),
    "truncate": check_bool,
    "low_freq_factor": check_positive,
    "high_freq_factor": check_positive,
    "short_factor": check_numbers,
    "long_factor": check_numbers,
}

# Keys every rope_type takes (transformers puts the first two in every rope_parameters dict;
# Ministral 3 stores max_position_embeddings there too).
_COMMON_KEYS = frozenset({"rope_theta", "partial_rotary_factor", "max_position_embeddings"})


@dataclass(frozen=True)
class RopeScaling:
    r"""A RoPE scaling dict, parsed and checked once (see `RopeScaling.from_dict`).

    Fields are the keys of transformers' ``rope_parameters``; None means "not given". After
    parsing, the values a variant needs are all set: ``original_max_position_embeddings``
    (from ``max_position_embeddings`` where transformers falls back to it), and ``factor`` for
    YaRN and LongRoPE (``max_position_embeddings / original_max_position_embeddings`` when
    the dict has none). ``extra`` holds the keys of a variant registered by the user.
    """

    rope_type: str = "default"
    factor: float | None = None
    original_max_position_embeddings: int | None = None
    partial_rotary_factor: float | None = None
    rope_theta: float | None = None
    attention_factor: float | None = None
    beta_fast: float | None = None
    beta_slow: float | None = None
    mscale: float | None = None
    mscale_all_dim: float | None = None
    truncate: bool | None = None
    low_freq_factor: float | None = None
    high_freq_factor: float | None = None
    short_factor: tuple[float, ...] | None = None
    long_factor: tuple[float, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_dict(
        cls,
        scaling: Mapping[str, Any] | RopeScaling | None,
        *,
        max_position_embeddings: int | None = None,
        ignore_keys: Iterable[str] = (),
    ) -> RopeScaling:
        r"""Parse and check a scaling dict in transformers' ``rope_parameters`` convention.

        Args:
            scaling: ``{"rope_type": ..., "factor": ..., ...}`` (``"type"`` is accepted for
                ``"rope_type"``; no type means ``"default"``, as in transformers), a parsed
                `RopeScaling` (returned as it is), or None (``"default"``).
            max_position_embeddings: The model's ``config.max_position_embeddings``.
                transformers reads the trained length of ``dynamic`` from it, and falls back
                to it for a missing ``original_max_position_embeddings`` (``yarn``,
                ``longrope``, ``llama3``) and a missing ``factor`` (``yarn``, ``longrope``:
                ``max_position_embeddings / original_max_position_embeddings``).
            ignore_keys: Keys a model config keeps in the dict for its own use, passed over
                when this ``rope_type`` does not take them (transformers' config classes list
                them in ``ignore_keys_at_rope_validation``, e.g. Qwen2-VL's
                ``mrope_section``; posenc rotates by one position per token).

        Returns:
            A `RopeScaling`.

        Raises:
            TypeError: ``scaling`` is not a dict, or a value has the wrong type.
            ValueError: An unknown ``rope_type``; a key this ``rope_type`` does not take; a
                required key missing; a value out of range; two values that contradict each
                other; a per-layer dict (pass one layer type's dict).
        """
        if isinstance(scaling, RopeScaling):
            if max_position_embeddings is not None or tuple(ignore_keys):
                raise ValueError(
                    "max_position_embeddings and ignore_keys must be None and () with a parsed "
                    "RopeScaling (they apply when it is parsed), got "
                    f"{max_position_embeddings!r} and {tuple(ignore_keys)!r}"
                )
            return scaling
        if max_position_embeddings is not None:
            check_int("max_position_embeddings", max_position_embeddings, minimum=1)
        if isinstance(ignore_keys, str) or not isinstance(ignore_keys, Iterable):
            raise TypeError(f"ignore_keys must be a collection of key names, got {ignore_keys!r}")
        ignore_keys = frozenset(ignore_keys)
        if scaling is None:
            return cls()
        if not isinstance(scaling, Mapping):
            raise TypeError(
                "scaling must be a dict (transformers' rope_parameters), a RopeScaling or None, "
                f"got {type(scaling).__name__} {scaling!r}"
            )
        nested = [key for key, value in scaling.items() if isinstance(value, Mapping)]
        if nested:
            raise ValueError(
                f"scaling must be the rope_parameters of one layer type, got a dict of them "
                f"({', '.join(map(repr, nested))}): pass scaling=rope_parameters[{nested[0]!r}]"
            )
        params = {key: value for key, value in scaling.items() if value is not None}
        rope_type = _rope_type(params)
        variant = ROPE_SCALING[rope_type]
        params.pop("rope_type", None)
        params.pop("type", None)

        dict_max = params.pop("max_position_embeddings", None)
        if dict_max is not None:
            dict_max = check_int("scaling['max_position_embeddings']", dict_max, minimum=1)
            if max_position_embeddings is not None and dict_max != max_position_embeddings:
                raise ValueError(
                    f"max_position_embeddings must equal scaling['max_position_embeddings'] "
                    f"({dict_max}) when both are given, got {max_position_embeddings}"
                )
            max_position_embeddings = dict_max

        allowed = _COMMON_KEYS | variant.keys
        unknown = sorted(set(params) - allowed - ignore_keys)
        if unknown:
            raise ValueError(
                f"scaling must hold only keys that rope_type {rope_type!r} takes "
                f"({', '.join(sorted(allowed | {'rope_type'}))}), got {unknown}"
                + (" (a dict without 'rope_type' is 'default')" if rope_type == "default" else "")
                + "; keys a model keeps for itself go in ignore_keys="
            )
        fields, extra = {}, {}
        for key, value in params.items():
            if key not in allowed:
                continue  # an ignored key
            if key in _KEY_CHECKS:
                fields[key] = _KEY_CHECKS[key](f"scaling[{key!r}]", value)
            else:
                extra[key] = value  # a registered variant's own key; its prepare() checks it
        spec = cls(rope_type=rope_type, extra=MappingProxyType(extra), **fields)
        if variant.prepare is not None:
            spec = variant.prepare(spec, max_position_embeddings)
        return spec

    @property
    def variant(self) -> RopeVariant:
        """The registry entry of this ``rope_type``."""
        return ROPE_SCALING[self.rope_type]

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies depend on the current length (``dynamic``, ``longrope``)."""
        return self.variant.length_dependent

    def replace(self, **changes: Any) -> RopeScaling:
        """A copy with some fields changed (no checks: for variants' ``prepare``)."""
        return dataclasses.replace(self, **changes)


def _rope_type(params: Mapping[str, Any]) -> str:
    rope_type, legacy = params.get("rope_type"), params.get("type")
    if rope_type is not None and legacy is not None and rope_type != legacy:
        raise ValueError(
            f"scaling['type'] must equal scaling['rope_type'] ({rope_type!r}) when both are "
            f"given (it is the old name of the same key), got {legacy!r}"
        )
    rope_type = rope_type if rope_type is not None else legacy
    if rope_type is None:
        return "default"
    if not isinstance(rope_type, str) or rope_type not in ROPE_SCALING:
        raise ValueError(
            f"scaling['rope_type'] must be one of {', '.join(map(repr, ROPE_SCALING))}, "
            f"got {rope_type!r}"
        )
    return rope_type


def _missing(rope_type: str, key: str, how: str = "") -> ValueError:
    return ValueError(f"scaling[{key!r}] must be given for rope_type {rope_type!r}{how}, got none")


def _trained_length(spec: RopeScaling, max_position_embeddings: int | None) -> int:
    # transformers' standardize_rope_params: original_max_position_embeddings defaults to
    # max_position_embeddings for yarn, longrope and llama3.
    original = spec.original_max_position_embeddings or max_position_embeddings
    if original is None:
        raise _missing(
            spec.rope_type,
            "original_max_position_embeddings",
            " (or pass max_position_embeddings=, which transformers falls back to)",
        )
    return original


def _derived_factor(spec: RopeScaling, max_position_embeddings: int | None) -> float:
    # transformers: factor = max_position_embeddings / original_max_position_embeddings when
    # the dict has none (DeepSeek-V3, Phi-3 store the two lengths instead).
    if spec.factor is not None:
        return spec.factor
    if max_position_embeddings is None:
        raise _missing(
            spec.rope_type,
            "factor",
            " (or pass max_position_embeddings=: transformers then uses "
            "max_position_embeddings / original_max_position_embeddings)",
        )
    return max_position_embeddings / spec.original_max_position_embeddings


# ── the registry ────────────────────────────────────────────────────────────

InvFreqFunction = Callable[
    [int, float, RopeScaling, "int | torch.Tensor | None", "torch.device | None"],
    tuple[torch.Tensor, float],
]


@dataclass(frozen=True)
class RopeVariant:
    r"""One entry of `ROPE_SCALING`.

    Attributes:
        inv_freq: ``(dim, base, spec, seq_len, device) -> (inv_freq, attention_factor)``:
            \(\lceil d/2 \rceil\) float32 frequencies for \(d\) = ``dim`` rotated channels.
            ``seq_len`` is None, an int, or (for a length-dependent variant) a 0-d integer
            tensor, which must not be read on the host.
        keys: The keys of a scaling dict this variant takes, besides ``rope_type``,
            ``rope_theta``, ``partial_rotary_factor`` and ``max_position_embeddings``. Keys
            that are not `RopeScaling` fields end up in ``spec.extra``.
        prepare: ``(spec, max_position_embeddings) -> spec``: fills in derived values and
            checks what one key cannot check alone; runs once per dict.
        length_dependent: The frequencies depend on ``seq_len``.
        odd_width: Works for an odd \(d\) (transformers' rule: \(\lceil d/2 \rceil\)
            frequencies \(\mathrm{base}^{-2i/d}\), rotating \(d + 1\) channels).
    """

    inv_freq: InvFreqFunction
    keys: frozenset[str] = frozenset()
    prepare: Callable[[RopeScaling, int | None], RopeScaling] | None = None
    length_dependent: bool = False
    odd_width: bool = False


def _default(dim, base, spec, seq_len, device):
    return _inv_freq(dim, base, device), 1.0


def _linear(dim, base, spec, seq_len, device):
    # Position interpolation: (p / s)·θ_i == p·(θ_i / s), so scale the frequencies instead.
    return _inv_freq(dim, base, device) / spec.factor, 1.0


def _prepare_linear(spec, max_position_embeddings):
    if spec.factor is None:
        raise _missing("linear", "factor")
    return spec


def _dynamic(dim, base, spec, seq_len, device):
    factor, original = spec.factor, spec.original_max_position_embeddings
    if dim <= 2:
        raise ValueError(
            f"head_dim must give more than 2 rotated channels for 'dynamic', got {dim}"
        )
    if not isinstance(seq_len, torch.Tensor):
        length = original if seq_len is None else max(seq_len, original)
        # NTK-aware base: base' = base·(s·L/L0 − (s − 1))^(d/(d−2)); equals base up to L0.
        scaled_base = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
        return _inv_freq(dim, scaled_base, device), 1.0
    # A length on the device: the same formula in float32 tensor arithmetic, as transformers'
    # forward pass computes it, and no host-device synchronisation (no `if` on its value).
    trained = torch.full((), original, dtype=seq_len.dtype, device=seq_len.device)  # no copy
    length = torch.maximum(seq_len, trained)
    scaled_base = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
    # Up to L0 transformers keeps the frequencies it computed at start-up: the default ones.
    return torch.where(
        seq_len > original, _inv_freq(dim, scaled_base, device), _inv_freq(dim, base, device)
    ), 1.0


def _prepare_dynamic(spec, max_position_embeddings):
    if spec.factor is None:
        raise _missing("dynamic", "factor")
    original = spec.original_max_position_embeddings
    if original is None and max_position_embeddings is None:
        raise ValueError(
            "max_position_embeddings must be given for rope_type 'dynamic' (transformers reads "
            "the trained length from config.max_position_embeddings; posenc also takes it as "
            "scaling['original_max_position_embeddings']), got none"
        )
    if None not in (original, max_position_embeddings) and original != max_position_embeddings:
        raise ValueError(
            "max_position_embeddings must equal scaling['original_max_position_embeddings'] "
            f"({original}) for rope_type 'dynamic' (both are the trained length), "
            f"got {max_position_embeddings}"
        )
    return spec.replace(original_max_position_embeddings=original or max_position_embeddings)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    r"""YaRN's attention temperature \(\sqrt{1/t} = 0.1\,m\ln s + 1\) for the factor \(s\)
    (1 when \(s \le 1\): nothing is extended).

    ``rope_inv_freq`` multiplies cos and sin by ``yarn_mscale(factor)`` for plain YaRN, and
    by ``yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)`` when the dict
    has both DeepSeek keys, neither 0. DeepSeek-V3's attention in transformers also
    multiplies the softmax scale by ``yarn_mscale(factor, mscale_all_dim) ** 2`` when
    ``mscale_all_dim`` is not 0 (its ``yarn_get_mscale`` is this function; chapter 14).

    Args:
        factor: The scaling factor \(s\); a finite number > 0.
        mscale: The coefficient \(m\) (``mscale`` or ``mscale_all_dim`` of a config); a
            finite number >= 0.

    Raises:
        TypeError: An argument that is not a real number.
        ValueError: ``factor`` not > 0, or ``mscale`` negative, or either not finite.
    """
    factor = check_positive("factor", factor)
    mscale = check_number("mscale", mscale, at_least=0)
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def _yarn_correction_dim(rotations: float, dim: int, base: float, original: int) -> float:
    # Dimension whose wavelength fits `rotations` turns into the trained length:
    # d·ln(L0 / (2π·r)) / (2·ln(base))
    return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn(dim, base, spec, seq_len, device):
    factor, original = spec.factor, spec.original_max_position_embeddings
    attention_factor = spec.attention_factor
    if attention_factor is None:
        if spec.mscale and spec.mscale_all_dim:  # DeepSeek-V2/V3: ratio of two temperatures
            attention_factor = yarn_mscale(factor, spec.mscale) / yarn_mscale(
                factor, spec.mscale_all_dim
            )
        else:
            attention_factor = yarn_mscale(factor)
    beta_fast, beta_slow = spec.beta_fast or 32, spec.beta_slow or 1
    low = _yarn_correction_dim(beta_fast, dim, base, original)
    high = _yarn_correction_dim(beta_slow, dim, base, original)
    if spec.truncate is not False:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # avoid a zero-width ramp
    # ramp_i = clamp((i − low) / (high − low), 0, 1): 0 keeps θ_i (fast dims), 1 interpolates.
    ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
    keep = 1 - ramp.to(device=device)
    powers = base ** (torch.arange(0, dim, 2, device=device).float() / dim)  # 1/θ_i
    extrapolated = 1.0 / powers
    interpolated = 1.0 / (factor * powers)
    # θ'_i = θ_i/s·(1 − keep_i) + θ_i·keep_i
    return interpolated * (1 - keep) + extrapolated * keep, float(attention_factor)


def _prepare_yarn(spec, max_position_embeddings):
    spec = spec.replace(
        original_max_position_embeddings=_trained_length(spec, max_position_embeddings)
    )
    spec = spec.replace(factor=_derived_factor(spec, max_position_embeddings))
    if (spec.beta_fast or 32) < (spec.beta_slow or 1):
        raise ValueError(
            f"scaling['beta_fast'] must be >= scaling['beta_slow'] ({spec.beta_slow or 1}) "
            f"(the fast boundary turns more often), got {spec.beta_fast or 32}"
        )
    return spec


def _longrope(dim, base, spec, seq_len, device):
    original = spec.original_max_position_embeddings
    for name, factors in (("short_factor", spec.short_factor), ("long_factor", spec.long_factor)):
        if len(factors) != dim // 2:
            raise ValueError(
                f"scaling[{name!r}] must have rotary_dim/2 = {dim // 2} entries, got {len(factors)}"
            )
    attention_factor = spec.attention_factor
    if attention_factor is None:  # sqrt(1 + ln s / ln L0), 1 when not extending
        factor = spec.factor
        attention_factor = (
            1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
        )
    # Per-frequency rescaling λ_i: θ'_i = θ_i / λ_i, long factors once past the trained length.
    exponent = torch.arange(0, dim, 2, dtype=torch.int64, device=device).float() / dim

    def rescaled(factors):
        return 1.0 / (torch.tensor(factors, dtype=torch.float32, device=device) * base**exponent)

    if not isinstance(seq_len, torch.Tensor):
        chosen = spec.long_factor if seq_len and seq_len > original else spec.short_factor
        return rescaled(chosen), float(attention_factor)
    # A length on the device: choose without reading it (transformers' forward does this).
    long, short = rescaled(spec.long_factor), rescaled(spec.short_factor)
    return torch.where(seq_len > original, long, short), float(attention_factor)


def _prepare_longrope(spec, max_position_embeddings):
    for key in ("short_factor", "long_factor"):
        if getattr(spec, key) is None:
            raise _missing("longrope", key)
    spec = spec.replace(
        original_max_position_embeddings=_trained_length(spec, max_position_embeddings)
    )
    if spec.attention_factor is None:  # derived from factor, which may be derived itself
        spec = spec.replace(factor=_derived_factor(spec, max_position_embeddings))
        if spec.factor > 1 and spec.original_max_position_embeddings < 2:
            raise ValueError(
                "scaling['original_max_position_embeddings'] must be >= 2 for rope_type "
                "'longrope' without an attention_factor (it divides by its logarithm), got "
                f"{spec.original_max_position_embeddings}"
            )
    return spec


def _llama3(dim, base, spec, seq_len, device):
    factor, original = spec.factor, spec.original_max_position_embeddings
    low_freq_factor, high_freq_factor = spec.low_freq_factor, spec.high_freq_factor
    inv_freq = _inv_freq(dim, base, device)
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


def _prepare_llama3(spec, max_position_embeddings):
    for key in ("factor", "low_freq_factor", "high_freq_factor"):
        if getattr(spec, key) is None:
            raise _missing("llama3", key)
    if not spec.high_freq_factor > spec.low_freq_factor:
        raise ValueError(
            f"scaling['high_freq_factor'] must be > scaling['low_freq_factor'] "
            f"({spec.low_freq_factor}), got {spec.high_freq_factor}"
        )
    return spec.replace(
        original_max_position_embeddings=_trained_length(spec, max_position_embeddings)
    )


def _proportional(dim, base, spec, seq_len, device):
    # p-RoPE (Gemma 4): only the first p·d/2 frequencies turn, with exponents over the whole
    # head (2i/d); the other pairs get θ = 0 and stay as they are.
    proportion = spec.partial_rotary_factor or 1.0
    rope_angles = int(proportion * dim // 2)
    exponent = torch.arange(0, 2 * rope_angles, 2, dtype=torch.int64, device=device).float() / dim
    inv_freq = 1.0 / (base**exponent)
    nope_angles = dim // 2 - rope_angles
    if nope_angles > 0:
        zeros = torch.zeros(nope_angles, dtype=torch.float32, device=device)
        inv_freq = torch.cat((inv_freq, zeros))
    return inv_freq / (spec.factor or 1.0), 1.0


ROPE_SCALING: dict[str, RopeVariant] = {
    "default": RopeVariant(_default, odd_width=True),
    "linear": RopeVariant(_linear, frozenset({"factor"}), prepare=_prepare_linear, odd_width=True),
    "dynamic": RopeVariant(
        _dynamic,
        frozenset({"factor", "original_max_position_embeddings"}),
        prepare=_prepare_dynamic,
        length_dependent=True,
        odd_width=True,
    ),
    "yarn": RopeVariant(
        _yarn,
        frozenset(
            {
                "factor",
                "original_max_position_embeddings",
                "attention_factor",
                "beta_fast",
                "beta_slow",
                "mscale",
                "mscale_all_dim",
                "truncate",
            }
        ),
        prepare=_prepare_yarn,
    ),  # fmt: skip
    "longrope": RopeVariant(
        _longrope,
        frozenset(
            {
                "short_factor",
                "long_factor",
                "original_max_position_embeddings",
                "factor",
                "attention_factor",
            }
        ),
        prepare=_prepare_longrope,
        length_dependent=True,
    ),  # fmt: skip
    "llama3": RopeVariant(
        _llama3,
        frozenset(
            {
                "factor",
                "low_freq_factor",
                "high_freq_factor",
                "original_max_position_embeddings",
            }
        ),
        prepare=_prepare_llama3,
        odd_width=True,
    ),  # fmt: skip
    "proportional": RopeVariant(_proportional, frozenset({"factor"})),
}
"""Registry of RoPE variants by ``rope_type``; add a `RopeVariant` to plug in a new one."""

LENGTH_DEPENDENT = frozenset(name for name, v in ROPE_SCALING.items() if v.length_dependent)
"""The built-in variants whose frequencies depend on the current length ``seq_len``."""


# ── from a head to its frequencies ──────────────────────────────────────────


def resolve_base(base: object, spec: RopeScaling) -> float:
    """``base`` if given, else the dict's ``rope_theta``, else 10000; the two must agree."""
    if base is None:
        return spec.rope_theta if spec.rope_theta is not None else 10000.0
    base = check_base("base", base)
    if spec.rope_theta is not None and spec.rope_theta != base:
        raise ValueError(
            f"base must equal scaling['rope_theta'] ({spec.rope_theta}) when both are given, "
            f"got {base}"
        )
    return base


def frequency_dim(head_dim: object, spec: RopeScaling) -> int:
    r"""The \(d\) of \(\mathrm{base}^{-2i/d}\): ``int(head_dim * partial_rotary_factor)``.

    That is transformers' rule. An odd \(d\) (from a partial factor) gives
    \(\lceil d/2 \rceil\) frequencies, i.e. \(d + 1\) rotated channels, for the variants where
    transformers computes that (`RopeVariant.odd_width`); the others refuse it.
    """
    head_dim = check_int("head_dim", head_dim, minimum=1)
    if spec.rope_type == "proportional":  # the factor zeroes frequencies, the width stays
        return check_even("head_dim", head_dim)
    proportion = spec.partial_rotary_factor
    if proportion is None or proportion == 1:
        return check_even("head_dim", head_dim)
    dim = int(head_dim * proportion)
    if dim < 2:
        raise ValueError(
            f"scaling['partial_rotary_factor'] must leave at least 2 rotated channels of "
            f"head_dim {head_dim}, got {proportion} (int({head_dim} × {proportion}) = {dim})"
        )
    if dim % 2 and not spec.variant.odd_width:
        raise ValueError(
            f"scaling['partial_rotary_factor'] must give an even rotary width for rope_type "
            f"{spec.rope_type!r}, got {proportion} (int({head_dim} × {proportion}) = {dim}); "
            "transformers rounds an odd width up only for 'default', 'linear', 'dynamic' and "
            "'llama3': pass a factor for which head_dim × factor is even"
        )
    return dim


def check_seq_len(seq_len: object) -> int | torch.Tensor | None:
    """None, an int >= 1, or a 0-d integer tensor (a length that stays on its device)."""
    if seq_len is None:
        return None
    if isinstance(seq_len, torch.Tensor):
        check_integer_tensor("seq_len", seq_len, ndim=0)
        return seq_len
    return check_int("seq_len", seq_len, minimum=1)


def rope_inv_freq(
    head_dim: int,
    base: float | None = None,
    *,
    scaling: Mapping[str, Any] | RopeScaling | None = None,
    seq_len: int | torch.Tensor | None = None,
    device: torch.device | str | None = None,
    max_position_embeddings: int | None = None,
    ignore_keys: Iterable[str] = (),
) -> tuple[torch.Tensor, float]:
    r"""RoPE inverse frequencies \(\theta_i\) and the attention factor of a scaling variant.

    Default (``scaling=None``): \(\theta_i = \mathrm{base}^{-2i/d}\). The variants:

    - ``linear`` (position interpolation): \(\theta_i' = \theta_i / s\).
    - ``dynamic`` (dynamic NTK): \(\mathrm{base}' = \mathrm{base}\,(sL/L_0 - (s-1))^{d/(d-2)}\)
      with \(L = \max(\mathrm{seq\_len}, L_0)\).
    - ``yarn``: \(\theta_i' = (1-\gamma_i)\,\theta_i/s + \gamma_i\,\theta_i\), with a linear ramp
      \(\gamma_i\) between the dimensions that turn \(\beta_\mathrm{fast}\) and
      \(\beta_\mathrm{slow}\) times within \(L_0\); attention factor \(0.1 \ln s + 1\).
    - ``longrope``: \(\theta_i' = \theta_i / \lambda_i\) with per-frequency factors \(\lambda\)
      (``long_factor`` once \(\mathrm{seq\_len} > L_0\), else ``short_factor``); attention factor
      \(\sqrt{1 + \ln s / \ln L_0}\).
    - ``llama3``: wavelengths \(2\pi/\theta_i\) longer than \(L_0/\mathrm{low}\) are divided by
      \(s\), shorter than \(L_0/\mathrm{high}\) kept, and smoothly blended in between.
    - ``proportional`` (p-RoPE): the first \(\lfloor p\,d/2 \rfloor\) frequencies
      \(\mathrm{base}^{-2i/d}/s\), the others 0 (those pairs do not turn).

    Here \(s\) = ``factor``, \(L_0\) = ``original_max_position_embeddings`` (the trained length)
    and \(p\) = ``partial_rotary_factor``. Everything is computed in float32, in the same order
    of operations as Hugging Face transformers, so the results agree to the bit.

    Args:
        head_dim: Channels per head. The frequencies cover \(d\) = ``int(head_dim *
            partial_rotary_factor)`` of them (all of them without that key); \(d\) must be even
            when it is the whole head.
        base: \(\mathrm{base}\) (``rope_theta``); default the dict's ``rope_theta``, else 10000.
        scaling: None, a transformers ``rope_parameters`` dict, or a parsed `RopeScaling`
            (see `RopeScaling.from_dict` for the keys and the fallbacks).
        seq_len: Current sequence length, used by ``dynamic`` and ``longrope``: an int, or a
            0-d integer tensor, which is never read on the host (no synchronisation).
        device: Device of the result.
        max_position_embeddings: ``config.max_position_embeddings``; see
            `RopeScaling.from_dict`.
        ignore_keys: Model-specific keys to pass over; see `RopeScaling.from_dict`.

    Returns:
        ``(inv_freq, attention_factor)``: a float32 tensor \((\lceil d/2 \rceil,)\) and a float.

    Raises:
        TypeError: An argument has the wrong type.
        ValueError: An odd whole ``head_dim``, a bad ``base``, or a bad ``scaling`` (see
            `RopeScaling.from_dict`).
    """
    spec = RopeScaling.from_dict(
        scaling, max_position_embeddings=max_position_embeddings, ignore_keys=ignore_keys
    )
    base = resolve_base(base, spec)
    dim = frequency_dim(head_dim, spec)
    seq_len = check_seq_len(seq_len)
    device = check_device("device", device)
    if device is None and isinstance(seq_len, torch.Tensor):
        device = seq_len.device
    return spec.variant.inv_freq(dim, base, spec, seq_len, device)
