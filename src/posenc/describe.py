r"""What a model does with positions, layer by layer, read from its released ``config.json``.

`describe` takes a model config as a dict, exactly as the model's ``config.json`` holds it,
and answers, for every attention layer: which position encoding it uses (RoPE, none, ALiBi,
T5's relative bias, a learned table), and for a RoPE layer its base, its scaling variant and
keys, how many channels rotate, the inverse frequencies and the attention factor, and what
else the model does with positions in that layer: DeepSeek's YaRN also scales the softmax
(``softmax_factor``), Llama 4's NoPE layers scale their queries by position
(``query_temperature``).

It reads the fields the way Hugging Face transformers 5.23 reads them, family by family:

- the RoPE dict is ``rope_parameters``, or the older ``rope_scaling``; ``rope_theta`` and
  ``partial_rotary_factor`` next to it fill the keys it lacks, as transformers'
  ``standardize_rope_params`` does (so does a top-level ``original_max_position_embeddings``,
  Phi-3's, which wins over the dict's);
- ``layer_types`` (or the family's rule for it, e.g. Gemma 2's alternation, Gemma 3's
  ``sliding_window_pattern``, Mistral's and Phi-3's one ``sliding_window`` for every layer),
  ``no_rope_layers`` (Llama 4, SmolLM3: 1 = RoPE, 0 = NoPE), and the families that decide
  NoPE in code (Cohere2: its ``"full_attention"`` layers);
- ``mrope_section`` (Qwen2-VL, Qwen2.5-VL) and ``mrope_interleaved`` (Qwen3-VL);
- ALiBi (BLOOM, MPT's ``attn_config.alibi``, Falcon's ``alibi``), T5's relative bias
  (``relative_attention_num_buckets``, ``relative_attention_max_distance``) and learned tables
  (GPT-2, BERT).

The frequencies come from `rope_inv_freq` and the layer settings from `layer_rope_settings`,
so they equal transformers' bit for bit (``tests/lib/test_describe.py`` checks every
config in ``posenc/configs/`` against transformers' own rotary modules).

The folder ``posenc/configs/`` ships the position fields of released configs, each with the
link it was read from (`released_configs`, `released_config`).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any

import torch

from ._checks import _given, check_int
from .alibi import alibi_slope_values
from .layer_types import layer_rope_settings
from .rope_axes import mrope_axes
from .rope_scaling import RopeScaling, rope_inv_freq, yarn_mscale

# ── what describe returns ───────────────────────────────────────────────────

KINDS = ("rope", "none", "alibi", "t5-bias", "learned")
"""The encodings a layer can have: ``"none"`` is a NoPE layer (only the causal mask)."""


@dataclass(frozen=True, kw_only=True)
class LayerPositions:
    r"""The position encoding of one attention layer.

    Attributes:
        index: The layer's index (for T5: within its stack).
        kind: One of `KINDS`.
        layer_type: transformers' ``layer_types`` entry (``"full_attention"``,
            ``"sliding_attention"``, ``"chunked_attention"``), None for a family without it.
        window: The attention span of a local layer (sliding window or chunk), None when the
            layer attends to the whole context.
        stack: ``"encoder"`` or ``"decoder"`` for an encoder-decoder (T5), else None.
        scaling: The parsed RoPE dict (`RopeScaling`) of a RoPE layer, else None.
        rope_theta: The base \(\mathrm{base}\) of a RoPE layer's frequencies.
        rotary_dim: Channels per head that rotate (\(2 \times\) the number of frequencies).
        head_dim: Channels per head (for MLA models: the rotated part of a query).
        inv_freq: The frequencies \(\theta_i\), float32, ``(rotary_dim / 2,)``.
        attention_factor: The factor on \(\cos\) and \(\sin\) (YaRN, LongRoPE), 1 otherwise.
        softmax_factor: The factor on the attention's softmax scale \(1/\sqrt{d}\) that the
            RoPE scaling brings in a RoPE layer: DeepSeek-V2/V3 multiply the scale by
            ``yarn_mscale(factor, mscale_all_dim) ** 2`` when their dict is scaled and
            ``mscale_all_dim`` is not 0; 1 in every other RoPE layer.
        query_temperature: Llama 4's NoPE layers (``attn_temperature_tuning``):
            ``(floor_scale, attn_scale)``; the query at position \(p\) is multiplied by
            \(\ln(1 + \lfloor (p + 1) / \text{floor\_scale} \rfloor) \cdot
            \text{attn\_scale} + 1\), so these layers see positions through a temperature.
            None for every other layer.
        mrope_axes: For M-RoPE, the axis (0 = t, 1 = h, 2 = w) of every frequency pair.
        alibi_slopes: The per-head slopes of an ALiBi layer.
        num_buckets, max_distance: T5's bucket count and the distance of the last bucket.
        has_bias_table: T5: whether this layer holds the stack's bias table (the first layer
            of each stack does; the others reuse its bias).
        bidirectional: T5: whether the buckets tell keys after the query from keys before it.
        max_positions: Rows of a learned position table.
    """

    index: int
    kind: str
    layer_type: str | None = None
    window: int | None = None
    stack: str | None = None
    scaling: RopeScaling | None = None
    rope_theta: float | None = None
    rotary_dim: int | None = None
    head_dim: int | None = None
    inv_freq: torch.Tensor | None = None
    attention_factor: float | None = None
    softmax_factor: float | None = None
    query_temperature: tuple[int, float] | None = None
    mrope_axes: tuple[int, ...] | None = None
    alibi_slopes: tuple[float, ...] | None = None
    num_buckets: int | None = None
    max_distance: int | None = None
    has_bias_table: bool | None = None
    bidirectional: bool | None = None
    max_positions: int | None = None

    @property
    def rope_type(self) -> str | None:
        """The scaling variant (``"default"``, ``"yarn"``, ...) of a RoPE layer, else None."""
        return None if self.scaling is None else self.scaling.rope_type


@dataclass(frozen=True)
class ModelPositions:
    """What `describe` returns: the model's family, its context length and every layer.

    Attributes:
        model_type: transformers' ``model_type`` of the part described (a multimodal model's
            text model: ``config["text_config"]`` when the file nests it).
        max_position_embeddings: The context length the config states (``n_positions`` for
            GPT-2 and T5, ``max_seq_len`` for MPT), None when it states none.
        layers: One `LayerPositions` per attention layer, in order (T5: encoder, then decoder).
    """

    model_type: str
    max_position_embeddings: int | None
    layers: tuple[LayerPositions, ...]

    def kinds(self) -> tuple[str, ...]:
        """The distinct encodings of the layers, in the order they first appear."""
        return tuple(dict.fromkeys(layer.kind for layer in self.layers))


# ── reading fields ──────────────────────────────────────────────────────────


def _field(config: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    """The first of ``names`` the config holds with a value that is not None."""
    for name in names:
        if config.get(name) is not None:
            return config[name]
    return default


def _int_field(config: Mapping[str, Any], *names: str, default: int | None = None) -> int:
    value = _field(config, *names, default=default)
    if value is None:
        raise ValueError(f"config[{names[0]!r}] must be given for this model, got none")
    return check_int(f"config[{names[0]!r}]", value, minimum=1)


def _number_field(config: Mapping[str, Any], name: str, default: float) -> float:
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"config[{name!r}] must be a number, got {_given(value)}")
    return float(value)


def _head_dim(config: Mapping[str, Any]) -> int:
    heads = _int_field(config, "num_attention_heads")
    explicit = config.get("head_dim")
    if explicit is not None:
        return check_int("config['head_dim']", explicit, minimum=1)
    hidden = _int_field(config, "hidden_size")
    if hidden % heads:
        raise ValueError(
            f"config['hidden_size'] must be a multiple of num_attention_heads ({heads}) when "
            f"head_dim is not given, got {hidden}"
        )
    return hidden // heads


# ── RoPE families ───────────────────────────────────────────────────────────


@dataclass(frozen=True)
class _RopeFamily:
    """How transformers 5.23 reads one RoPE family's config.

    ``default_theta``: the base when the file states none (the config class's
    ``default_theta``); ``layer_types``: its rule when the file has no ``layer_types``;
    ``nope_types``: layer types it never rotates; ``no_rope_layers``: it reads
    ``no_rope_layers`` / ``no_rope_layer_interval``; ``defaults``: class defaults of fields a
    released file may leave out.
    """

    default_theta: float = 10000.0
    layer_types: str = "full"
    nope_types: tuple[str, ...] = ()
    no_rope_layers: bool = False
    defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _full(config: Mapping[str, Any], layers: int) -> list[str]:
    return ["full_attention"] * layers


def _alternating(config: Mapping[str, Any], layers: int) -> list[str]:
    # Gemma 2: layer 0 slides, layer 1 is global, and so on ((i + 1) % 2).
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(layers)]


def _pattern(default: int):
    def rule(config: Mapping[str, Any], layers: int) -> list[str]:
        # Gemma 3 (6), Cohere2 (4): every pattern-th layer is global, the others slide.
        pattern = _int_field(config, "sliding_window_pattern", default=default)
        return [
            "sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(layers)
        ]

    return rule


def _qwen(config: Mapping[str, Any], layers: int) -> list[str]:
    # Qwen2/3: the layers from max_window_layers on slide, if use_sliding_window is on.
    if not config.get("use_sliding_window") or config.get("sliding_window") is None:
        return _full(config, layers)
    first = _int_field(config, "max_window_layers", default=layers)
    return ["sliding_attention" if i >= first else "full_attention" for i in range(layers)]


def _window(config: Mapping[str, Any], layers: int) -> list[str]:
    # Mistral, Phi-3: no layer_types; the attention passes config.sliding_window to every layer
    kind = "full_attention" if config.get("sliding_window") is None else "sliding_attention"
    return [kind] * layers


def _chunked(config: Mapping[str, Any], layers: int, uses_rope: Sequence[bool]) -> list[str]:
    # Llama 4: RoPE layers attend within chunks, NoPE layers to everything.
    return ["chunked_attention" if rope else "full_attention" for rope in uses_rope]


_LAYER_TYPE_RULES = {
    "full": _full,
    "alternating": _alternating,
    "gemma3": _pattern(6),
    "cohere2": _pattern(4),
    "qwen": _qwen,
    "window": _window,
}

_ROPE_FAMILIES: dict[str, _RopeFamily] = {
    "llama": _RopeFamily(),
    "mistral": _RopeFamily(layer_types="window", defaults={"sliding_window": 4096}),
    "qwen2": _RopeFamily(layer_types="qwen"),
    "qwen3": _RopeFamily(layer_types="qwen"),
    "qwen2_vl": _RopeFamily(default_theta=1000000.0, layer_types="qwen"),
    "qwen2_vl_text": _RopeFamily(default_theta=1000000.0, layer_types="qwen"),
    "qwen2_5_vl": _RopeFamily(default_theta=1000000.0, layer_types="qwen"),
    "qwen2_5_vl_text": _RopeFamily(default_theta=1000000.0, layer_types="qwen"),
    "qwen3_vl_text": _RopeFamily(default_theta=5000000.0),
    "gemma2": _RopeFamily(layer_types="alternating"),
    "gemma3_text": _RopeFamily(default_theta=1000000.0, layer_types="gemma3"),
    "cohere2": _RopeFamily(layer_types="cohere2", nope_types=("full_attention",)),
    "gpt_oss": _RopeFamily(default_theta=150000.0),
    "smollm3": _RopeFamily(default_theta=2000000.0, no_rope_layers=True),
    "llama4_text": _RopeFamily(default_theta=500000.0, layer_types="chunked", no_rope_layers=True),
    "phi3": _RopeFamily(layer_types="window"),
    "gpt_neox": _RopeFamily(),
    "falcon": _RopeFamily(defaults={"num_hidden_layers": 32}),
    "deepseek_v2": _RopeFamily(),
    "deepseek_v3": _RopeFamily(),
}

# Keys a model keeps in its RoPE dict for itself (transformers' ignore_keys_at_rope_validation).
_MODEL_KEYS = frozenset({"mrope_section", "mrope_interleaved"})


def _rope_dict(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The config's RoPE dict as written: rope_parameters, else the older rope_scaling."""
    for name in ("rope_parameters", "rope_scaling"):
        value = config.get(name)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"config[{name!r}] must be a dict or null, got {_given(value)}")
        return {key: (dict(v) if isinstance(v, Mapping) else v) for key, v in value.items()}
    return None


def _gemma3_legacy(config: Mapping[str, Any], theta: float) -> dict[str, Any]:
    # transformers' Gemma3TextConfig.convert_rope_params_to_dict: the old flat fields become one
    # dict per layer type: rope_scaling (if any) + rope_theta for the global layers,
    # rope_local_base_freq (default 10000) for the sliding ones.
    scaling = _rope_dict(config) or {}
    return {
        "full_attention": {"rope_type": "default", **scaling, "rope_theta": theta},
        "sliding_attention": {
            "rope_type": "default",
            "rope_theta": _number_field(config, "rope_local_base_freq", 10000.0),
        },
    }


def _standardize(
    entry: dict[str, Any] | None, config: Mapping[str, Any], theta: float, partial: float | None
) -> dict[str, Any] | None:
    """One dict filled in as transformers' standardize_rope_params fills it."""
    if entry is None:
        return None
    entry.setdefault("rope_theta", theta)
    if partial is not None:
        entry.setdefault("partial_rotary_factor", partial)
    rope_type = entry.get("rope_type", entry.get("type", "default"))
    if rope_type in ("llama3", "yarn", "longrope"):
        if config.get("original_max_position_embeddings") is not None:
            # Phi-3 keeps the trained length next to the dict; transformers lets it win.
            entry["original_max_position_embeddings"] = config["original_max_position_embeddings"]
        elif config.get("max_position_embeddings") is not None:
            entry.setdefault("original_max_position_embeddings", config["max_position_embeddings"])
    return entry


def _parse(entry: Mapping[str, Any], max_positions: int | None) -> RopeScaling:
    """`RopeScaling.from_dict`, plus the one dict transformers computes and posenc refuses.

    Llama 4 Scout's ``llama3`` dict sets ``low_freq_factor`` equal to ``high_freq_factor``.
    `RopeScaling.from_dict` refuses it (its smooth band has zero width), transformers only warns
    and computes it: no frequency falls in the empty band, so each is either kept or divided
    by ``factor``, a step. The dict is checked with a band of width 1, then given back its own
    value; the llama3 formula then computes the same step as transformers.
    """
    rope_type = entry.get("rope_type", entry.get("type"))
    low, high = entry.get("low_freq_factor"), entry.get("high_freq_factor")
    if rope_type == "llama3" and low is not None and high is not None and low == high:
        spec = RopeScaling.from_dict(
            {**entry, "high_freq_factor": low + 1},
            max_position_embeddings=max_positions,
            ignore_keys=_MODEL_KEYS,
        )
        return spec.replace(high_freq_factor=spec.low_freq_factor)
    return RopeScaling.from_dict(
        entry, max_position_embeddings=max_positions, ignore_keys=_MODEL_KEYS
    )


def _uses_rope(config: Mapping[str, Any], layers: int, family: _RopeFamily) -> list[bool] | None:
    """Llama 4 / SmolLM3: ``no_rope_layers`` (1 = RoPE), or one NoPE layer per interval."""
    if not family.no_rope_layers:
        return None
    flags = config.get("no_rope_layers")
    if not flags:  # transformers: None or [] means "derive it from the interval"
        interval = _int_field(config, "no_rope_layer_interval", default=4)
        return [bool((i + 1) % interval) for i in range(layers)]
    return _per_layer("no_rope_layers", flags, layers, "a list of 0 and 1")


def _per_layer(key: str, value: object, layers: int, kind: str) -> list:
    """``config[key]`` as a list with one entry per layer: refused, not truncated, otherwise."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"config['{key}'] must be {kind}, got {_given(value)}")
    if len(value) != layers:
        raise ValueError(
            f"config['{key}'] must have one entry per layer ({layers}, num_hidden_layers), "
            f"got {len(value)}"
        )
    return list(value)


def _layer_types(
    config: Mapping[str, Any], layers: int, family: _RopeFamily, uses_rope: Sequence | None
) -> list[str]:
    given = config.get("layer_types")
    if given is not None:
        return _per_layer("layer_types", given, layers, "a list of strings")
    if family.layer_types == "chunked":
        return _chunked(config, layers, [bool(flag) for flag in uses_rope])
    return _LAYER_TYPE_RULES[family.layer_types](config, layers)


def _span(config: Mapping[str, Any], layer_type: str) -> int | None:
    if layer_type == "sliding_attention":
        return config.get("sliding_window")
    if layer_type == "chunked_attention":
        return config.get("attention_chunk_size")
    return None


def _mrope(raw: Mapping[str, Any] | None, pairs: int) -> tuple[int, ...] | None:
    if raw is None or raw.get("mrope_section") is None:
        return None
    axes = mrope_axes(raw["mrope_section"], interleaved=bool(raw.get("mrope_interleaved", False)))
    if len(axes) != pairs:
        raise ValueError(
            f"config's mrope_section must count the {pairs} frequency pairs of a head, got "
            f"{list(raw['mrope_section'])} ({len(axes)} pairs)"
        )
    return axes


def _softmax_factor(model_type: str, spec: RopeScaling) -> float:
    """transformers' ``yarn_apply_mscale`` (DeepSeek-V2/V3 attention): a scaled dict with a
    non-zero ``mscale_all_dim`` multiplies the softmax scale by its temperature squared."""
    if model_type not in ("deepseek_v2", "deepseek_v3") or spec.rope_type == "default":
        return 1.0
    if not spec.mscale_all_dim:
        return 1.0
    temperature = yarn_mscale(spec.factor, spec.mscale_all_dim)
    return temperature * temperature


def _query_temperature(config: Mapping[str, Any], model_type: str) -> tuple[int, float] | None:
    """Llama 4's NoPE layers scale the queries by position when attn_temperature_tuning is on
    (Llama4TextConfig's defaults: on, floor_scale 8192, attn_scale 0.1)."""
    if model_type != "llama4_text" or not config.get("attn_temperature_tuning", True):
        return None
    floor_scale = _int_field(config, "floor_scale", default=8192)
    return floor_scale, _number_field(config, "attn_scale", 0.1)


def _describe_rope(
    config: Mapping[str, Any], model_type: str, seq_len: int | None
) -> ModelPositions:
    family = _ROPE_FAMILIES[model_type]
    config = {**family.defaults, **config}
    layers = _int_field(config, "num_hidden_layers")
    max_positions = config.get("max_position_embeddings")
    if max_positions is not None:
        max_positions = check_int("config['max_position_embeddings']", max_positions, minimum=1)
    # GPT-NeoX names the base and the partial factor its own way.
    theta = _number_field(
        config, "rope_theta", _number_field(config, "rotary_emb_base", family.default_theta)
    )
    partial = _field(config, "partial_rotary_factor", "rotary_pct")
    if model_type in ("deepseek_v2", "deepseek_v3"):
        head_dim = _int_field(config, "qk_rope_head_dim")  # MLA rotates only this part
    else:
        head_dim = _head_dim(config)

    uses_rope = _uses_rope(config, layers, family)
    layer_types = _layer_types(config, layers, family, uses_rope)
    raw = _rope_dict(config)
    if model_type == "gemma3_text" and not (raw and set(raw) & set(layer_types)):
        raw = _gemma3_legacy(config, theta)
    per_type = raw is not None and any(key in layer_types for key in raw)
    if per_type:
        raws = {t: _standardize(raw.get(t), config, theta, partial) for t in set(layer_types)}
        parsed = {t: None if e is None else _parse(e, max_positions) for t, e in raws.items()}
    else:
        entry = _standardize(dict(raw or {}), config, theta, partial)
        raws = dict.fromkeys(layer_types, entry)
        parsed = _parse(entry, max_positions)

    settings = layer_rope_settings(
        layer_types, parsed, no_rope_layers=uses_rope, nope_types=family.nope_types
    )
    described = []
    for index, (layer_type, spec) in enumerate(zip(layer_types, settings, strict=True)):
        common = {"index": index, "layer_type": layer_type, "window": _span(config, layer_type)}
        if spec is None:
            temperature = _query_temperature(config, model_type)
            described.append(LayerPositions(kind="none", query_temperature=temperature, **common))
            continue
        inv_freq, factor = rope_inv_freq(head_dim, scaling=spec, seq_len=seq_len)
        described.append(
            LayerPositions(
                kind="rope",
                scaling=spec,
                rope_theta=spec.rope_theta,
                rotary_dim=2 * inv_freq.numel(),
                head_dim=head_dim,
                inv_freq=inv_freq,
                attention_factor=factor,
                softmax_factor=_softmax_factor(model_type, spec),
                mrope_axes=_mrope(raws[layer_type], inv_freq.numel()),
                **common,
            )
        )
    return ModelPositions(model_type, max_positions, tuple(described))


# ── ALiBi, T5 and learned families ──────────────────────────────────────────


def _alibi_layers(heads: int, layers: int) -> tuple[LayerPositions, ...]:
    slopes = tuple(alibi_slope_values(heads))
    return tuple(LayerPositions(index=i, kind="alibi", alibi_slopes=slopes) for i in range(layers))


def _mpt_slopes(heads: int, alibi_bias_max: float) -> tuple[float, ...]:
    # transformers' build_mpt_alibi_tensor: 1 / 2^(bias_max·h/p) for the next power of two p,
    # and for p > heads the odd-indexed then even-indexed ones, cut to `heads`.
    power = 2 ** math.ceil(math.log2(heads))
    slopes = [1.0 / 2 ** (alibi_bias_max * h / power) for h in range(1, power + 1)]
    if power != heads:
        slopes = (slopes[1::2] + slopes[::2])[:heads]
    return tuple(slopes)


def _describe_bloom(config: Mapping[str, Any]) -> ModelPositions:
    heads = _int_field(config, "n_head", "num_attention_heads", default=8)
    layers = _int_field(config, "n_layer", "num_hidden_layers", default=2)
    return ModelPositions("bloom", None, _alibi_layers(heads, layers))


def _describe_mpt(config: Mapping[str, Any]) -> ModelPositions:
    attn = config.get("attn_config") or {}
    if not isinstance(attn, Mapping):
        raise TypeError(f"config['attn_config'] must be a dict, got {_given(attn)}")
    heads = _int_field(config, "n_heads", default=16)
    layers = _int_field(config, "n_layers", default=24)
    max_positions = _int_field(config, "max_seq_len", default=2048)
    if attn.get("alibi", True) is not True:
        raise ValueError(
            "config['attn_config']['alibi'] must be true: transformers' MptModel always adds "
            f"ALiBi, got {attn.get('alibi')!r}"
        )
    bias_max = _number_field(attn, "alibi_bias_max", 8.0)
    slopes = _mpt_slopes(heads, bias_max)
    layer_list = tuple(
        LayerPositions(index=i, kind="alibi", alibi_slopes=slopes) for i in range(layers)
    )
    return ModelPositions("mpt", max_positions, layer_list)


def _describe_falcon(config: Mapping[str, Any], seq_len: int | None) -> ModelPositions:
    alibi = config.get("alibi", False)
    if not isinstance(alibi, bool):
        raise TypeError(f"config['alibi'] must be true or false, got {_given(alibi)}")
    if not alibi:
        return _describe_rope(config, "falcon", seq_len)
    heads = _int_field(config, "num_attention_heads", "n_head", default=71)
    layers = _int_field(config, "num_hidden_layers", "n_layer", default=32)
    return ModelPositions(
        "falcon", config.get("max_position_embeddings"), _alibi_layers(heads, layers)
    )


def _describe_t5(config: Mapping[str, Any]) -> ModelPositions:
    buckets = _int_field(config, "relative_attention_num_buckets", default=32)
    distance = _int_field(config, "relative_attention_max_distance", default=128)
    encoder = _int_field(config, "num_layers", default=6)
    decoder = _int_field(config, "num_decoder_layers", "num_layers", default=6)
    layers = []
    for stack, count, bidirectional in (("encoder", encoder, True), ("decoder", decoder, False)):
        for i in range(count):
            layers.append(
                LayerPositions(
                    index=i,
                    kind="t5-bias",
                    stack=stack,
                    num_buckets=buckets,
                    max_distance=distance,
                    has_bias_table=i == 0,  # transformers: has_relative_attention_bias=bool(i == 0)
                    bidirectional=bidirectional,
                )
            )
    return ModelPositions("t5", config.get("n_positions"), tuple(layers))


def _describe_learned(config: Mapping[str, Any], model_type: str) -> ModelPositions:
    if model_type == "gpt2":
        rows = _int_field(config, "n_positions", default=1024)
        layers = _int_field(config, "n_layer", default=12)
    else:
        rows = _int_field(config, "max_position_embeddings", default=512)
        layers = _int_field(config, "num_hidden_layers", default=12)
    # The table is added once to the input; every layer then sees positions only through it.
    described = tuple(
        LayerPositions(index=i, kind="learned", max_positions=rows) for i in range(layers)
    )
    return ModelPositions(model_type, rows, described)


# ── the entry point ─────────────────────────────────────────────────────────

_OTHER_FAMILIES = ("bloom", "mpt", "falcon", "t5", "gpt2", "bert")
SUPPORTED_MODEL_TYPES = tuple(sorted({*_ROPE_FAMILIES, *_OTHER_FAMILIES}))
"""The ``model_type`` values `describe` reads (multimodal parents are read through their text
model's ``model_type``)."""

# Multimodal configs that may nest their text model, and the text model's model_type.
_PARENTS = {
    "llama4": "llama4_text",
    "gemma3": "gemma3_text",
    "qwen3_vl": "qwen3_vl_text",
    "qwen2_vl": "qwen2_vl_text",
    "qwen2_5_vl": "qwen2_5_vl_text",
}


def _text_part(config: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """A multimodal config's text model (``text_config``), else the config itself."""
    model_type = config.get("model_type")
    if model_type is None:
        raise ValueError(
            "config['model_type'] must name the model family (it is in every transformers "
            "config.json), got none"
        )
    if not isinstance(model_type, str):
        raise TypeError(f"config['model_type'] must be a string, got {_given(model_type)}")
    text = config.get("text_config")
    if isinstance(text, Mapping) and model_type in _PARENTS:
        return text, text.get("model_type") or _PARENTS[model_type]
    return config, model_type


def describe(config: Mapping[str, Any], *, seq_len: int | None = None) -> ModelPositions:
    r"""Every layer's position encoding, from a model's ``config.json`` as released.

    Example::

        import json, posenc
        model = posenc.describe(json.load(open("config.json")))
        for layer in model.layers:
            print(layer.index, layer.kind, layer.layer_type, layer.rope_theta, layer.rotary_dim)

    Args:
        config: The parsed ``config.json``: a dict with ``model_type`` and the family's fields
            (see the module docstring). A multimodal model with a ``text_config`` is described
            by its text model.
        seq_len: The current length, for the variants whose frequencies depend on it
            (``dynamic``, ``longrope``); None gives the frequencies at the trained length.

    Returns:
        A `ModelPositions`: the family, its context length and one `LayerPositions` per layer.

    Raises:
        TypeError: ``config`` is not a dict, or a field has the wrong type.
        ValueError: No or an unknown ``model_type``; a field out of range; ``layer_types`` or
            ``no_rope_layers`` with a length other than ``num_hidden_layers``; a RoPE dict
            that `RopeScaling.from_dict` refuses (the message names the key); an
            ``mrope_section`` that does not count the head's frequency pairs.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict (a parsed config.json), got {_given(config)}")
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, minimum=1)
    config, model_type = _text_part(config)
    # A flat multimodal file (Qwen2-VL's) keeps the text fields at the top.
    model_type = _PARENTS.get(model_type, model_type)
    if model_type in _ROPE_FAMILIES:
        return _describe_rope(config, model_type, seq_len)
    if model_type == "bloom":
        return _describe_bloom(config)
    if model_type == "mpt":
        return _describe_mpt(config)
    if model_type == "falcon":
        return _describe_falcon(config, seq_len)
    if model_type == "t5":
        return _describe_t5(config)
    if model_type in ("gpt2", "bert"):
        return _describe_learned(config, model_type)
    raise ValueError(
        f"config['model_type'] must be one posenc knows ({', '.join(SUPPORTED_MODEL_TYPES)}), "
        f"got {model_type!r}"
    )


# ── the released configs shipped with posenc ────────────────────────────────


def released_configs() -> tuple[str, ...]:
    """The names of the released configs in ``posenc/configs/`` (file names without .json)."""
    folder = resources.files(__package__).joinpath("configs")
    return tuple(
        sorted(p.name[: -len(".json")] for p in folder.iterdir() if p.name.endswith(".json"))
    )


def released_config(name: str) -> dict[str, Any]:
    """One file of ``posenc/configs/``: its source and the position fields of the config.

    Args:
        name: One of `released_configs`, e.g. ``"llama-3.1-8b"``.

    Returns:
        ``{"model", "hub", "read", "revision", "note", "config"}``: the model's name, its Hub
        repository, the link the fields were read from and at which revision, how, and the
        fields (pass ``["config"]`` to `describe`).

    Raises:
        ValueError: An unknown name.
    """
    names = released_configs()
    if name not in names:
        raise ValueError(f"name must be one of {', '.join(names)}, got {name!r}")
    text = resources.files(__package__).joinpath("configs", f"{name}.json").read_text("utf-8")
    return json.loads(text)
