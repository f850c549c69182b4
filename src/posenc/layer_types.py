r"""RoPE settings per layer: models that mix layer types (local and global, RoPE and NoPE).

Many recent decoders do not give every layer the same position encoding. A layer may rotate
its queries and keys with RoPE, with settings of its own type, or not rotate them at all
(NoPE: no position encoding, only the causal mask). transformers describes this with three
fields of a model config, which this module reads as they are:

- ``layer_types``: one string per layer, e.g. ``"sliding_attention"`` (a local window),
  ``"full_attention"`` (global) or ``"chunked_attention"`` (Llama 4's local chunks).
- ``rope_parameters``: one dict for every layer (Gemma 2, gpt-oss, Llama 4, SmolLM3,
  Cohere2), or one dict *per layer type*, keyed by the strings of ``layer_types`` (Gemma 3:
  base 10000 on ``"sliding_attention"``, base \(10^6\) with linear scaling on
  ``"full_attention"``). A type whose entry is None has no RoPE.
- ``no_rope_layers`` (Llama 4, SmolLM3): one int per layer, **1 for a RoPE layer and 0 for a
  NoPE layer** (the name reads the other way round; the config classes document it so).

Some models decide NoPE in their code instead: Cohere2 (Command R7B) rotates only in
its ``"sliding_attention"`` layers, so its ``"full_attention"`` layers are NoPE; say so with
``nope_types=("full_attention",)``.

`layer_rope_settings` turns these fields into one setting per layer: a parsed `RopeScaling`
(base, scaling variant and its keys; give it to `RotaryEmbedding` as ``scaling=``) or None for
a NoPE layer. It is pure: it reads no tensor and builds no table, so it never synchronises
with a device; each distinct dict is parsed (and checked) once.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._checks import _given
from .rope_scaling import RopeScaling

RopeSetting = RopeScaling | None
"""One layer's RoPE: a parsed `RopeScaling`, or None for a NoPE layer."""


def _check_layer_types(layer_types: object) -> tuple[str, ...]:
    if isinstance(layer_types, str | bytes) or not isinstance(layer_types, Sequence):
        raise TypeError(
            f"layer_types must be a list of strings, one per layer, got {_given(layer_types)}"
        )
    if not layer_types:
        raise ValueError("layer_types must name at least one layer, got an empty list")
    for i, layer_type in enumerate(layer_types):
        if not isinstance(layer_type, str):
            raise TypeError(f"layer_types[{i}] must be a string, got {_given(layer_type)}")
    return tuple(layer_types)


def _check_no_rope_layers(no_rope_layers: object, layers: int) -> tuple[bool, ...]:
    """transformers' list: 1 = the layer uses RoPE, 0 = NoPE; at least one entry per layer."""
    if no_rope_layers is None:
        return (True,) * layers
    if isinstance(no_rope_layers, str | bytes) or not isinstance(no_rope_layers, Sequence):
        raise TypeError(
            "no_rope_layers must be a list of 0 and 1 (1 = RoPE, 0 = NoPE) or None, "
            f"got {_given(no_rope_layers)}"
        )
    if len(no_rope_layers) < layers:
        raise ValueError(
            f"no_rope_layers must have an entry for each of the {layers} layers of "
            f"layer_types, got {len(no_rope_layers)}"
        )
    uses_rope = []
    for i, flag in enumerate(no_rope_layers[:layers]):
        if not isinstance(flag, numbers.Integral):  # bool is an Integral too
            raise TypeError(f"no_rope_layers[{i}] must be 0 or 1, got {_given(flag)}")
        if flag not in (0, 1):
            raise ValueError(
                f"no_rope_layers[{i}] must be 0 or 1 (1 = RoPE, 0 = NoPE), got {flag!r}"
            )
        uses_rope.append(bool(flag))
    return tuple(uses_rope)


def _check_nope_types(nope_types: object) -> frozenset[str]:
    if isinstance(nope_types, str | bytes) or not isinstance(nope_types, Iterable):
        raise TypeError(
            "nope_types must be a collection of layer type names, e.g. ('full_attention',), "
            f"got {_given(nope_types)}"
        )
    names = tuple(nope_types)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"nope_types must hold strings, got {_given(name)}")
    return frozenset(names)


def _per_type(rope_parameters: Mapping[str, Any], layer_types: tuple[str, ...]) -> bool:
    """Whether a dict holds one entry per layer type (transformers' nested form).

    transformers looks for keys that are layer types; an entry that is a dict or None also
    marks the nested form (no flat key holds a dict).
    """
    return any(
        key in layer_types or value is None or isinstance(value, Mapping | RopeScaling)
        for key, value in rope_parameters.items()
    )


def layer_rope_settings(
    layer_types: Sequence[str],
    rope_parameters: Mapping[str, Any] | RopeScaling | None = None,
    *,
    no_rope_layers: Sequence[int] | None = None,
    nope_types: Iterable[str] = (),
    max_position_embeddings: int | None = None,
    ignore_keys: Iterable[str] = (),
) -> tuple[RopeSetting, ...]:
    r"""One RoPE setting per layer, from a config's ``layer_types`` and ``rope_parameters``.

    A transformers config plugs in unchanged::

        layer_rope_settings(config.layer_types, config.rope_parameters,
                            no_rope_layers=getattr(config, "no_rope_layers", None),
                            max_position_embeddings=config.max_position_embeddings)

    Layer \(i\) is NoPE (None) when ``no_rope_layers[i]`` is 0, when its type is in
    ``nope_types``, or when ``rope_parameters`` holds None for its type. Every other layer gets
    the `RopeScaling` of its type: ``rope_parameters[layer_types[i]]`` for a per-type dict, the
    dict itself otherwise. Layers of the same type share one parsed object.

    Args:
        layer_types: One string per layer (``config.layer_types``); its length is the number
            of layers.
        rope_parameters: One transformers ``rope_parameters`` dict for all layers; a dict of
            them keyed by layer type (each a dict, a `RopeScaling`, or None for a type without
            RoPE), which must hold every type that ``layer_types`` names and may hold others;
            a parsed `RopeScaling`; or None (default RoPE, base 10000, for every RoPE layer).
        no_rope_layers: transformers' ``config.no_rope_layers``: at least one entry per layer,
            **1 for RoPE, 0 for NoPE**; entries after the last layer are not read. None: no
            layer is NoPE by this list.
        nope_types: Layer types that have no RoPE whatever the dict says (Cohere2:
            ``("full_attention",)``).
        max_position_embeddings: ``config.max_position_embeddings``, for the scaling variants
            that fall back to it (see `RopeScaling.from_dict`).
        ignore_keys: Keys a model keeps in its dicts for itself (see `RopeScaling.from_dict`).

    Returns:
        A tuple with one entry per layer: a `RopeScaling`, or None for a NoPE layer.

    Raises:
        TypeError: ``layer_types`` not a list of strings; ``rope_parameters`` not a dict, a
            `RopeScaling` or None; ``no_rope_layers`` not a list of ints; ``nope_types`` a
            single string or not strings; a value of the wrong type in a dict.
        ValueError: No layers; a per-type dict without an entry for a type that
            ``layer_types`` names; a per-type dict that mixes per-type entries with flat keys;
            ``no_rope_layers`` shorter than ``layer_types`` or with an entry other than 0 and 1;
            a bad scaling dict (see `RopeScaling.from_dict`).
    """
    layer_types = _check_layer_types(layer_types)
    uses_rope = _check_no_rope_layers(no_rope_layers, len(layer_types))
    nope_types = _check_nope_types(nope_types)
    parse_options = {"max_position_embeddings": max_position_embeddings, "ignore_keys": ignore_keys}

    if rope_parameters is None or isinstance(rope_parameters, RopeScaling):
        shared = RopeScaling.from_dict(rope_parameters, **parse_options)
        by_type = dict.fromkeys(layer_types, shared)
    elif not isinstance(rope_parameters, Mapping):
        raise TypeError(
            "rope_parameters must be a dict (one for all layers, or one per layer type), a "
            f"RopeScaling or None, got {_given(rope_parameters)}"
        )
    elif _per_type(rope_parameters, layer_types):
        for key in sorted(set(layer_types) & set(rope_parameters)):
            value = rope_parameters[key]
            if value is not None and not isinstance(value, Mapping | RopeScaling):
                raise TypeError(
                    f"rope_parameters[{key!r}] must be a dict, a RopeScaling or None (no RoPE "
                    f"for that layer type), got {_given(value)}"
                )
        flat = sorted(
            key
            for key, value in rope_parameters.items()
            if value is not None and not isinstance(value, Mapping | RopeScaling)
        )
        if flat:
            raise ValueError(
                "rope_parameters must be either one dict for all layers or one entry per layer "
                f"type, got per-type entries next to flat keys {flat}"
            )
        missing = sorted(set(layer_types) - set(rope_parameters))
        if missing:
            raise ValueError(
                f"rope_parameters must hold an entry for every layer type of layer_types "
                f"(None for a type without RoPE), got none for {missing}; it has "
                f"{sorted(rope_parameters)}"
            )
        by_type = {}
        for layer_type in set(layer_types):
            entry = rope_parameters[layer_type]
            if isinstance(entry, Mapping):  # a RopeScaling is already parsed; None is NoPE
                entry = RopeScaling.from_dict(entry, **parse_options)
            by_type[layer_type] = entry
    else:
        shared = RopeScaling.from_dict(rope_parameters, **parse_options)
        by_type = dict.fromkeys(layer_types, shared)

    return tuple(
        by_type[layer_type] if rope and layer_type not in nope_types else None
        for layer_type, rope in zip(layer_types, uses_rope, strict=True)
    )
