"""layer_types: one RoPE setting per layer, checked against transformers' own models.

Tiny models of every family that mixes layer types (Gemma 2, Gemma 3, Llama 4 text, SmolLM3,
Cohere2, gpt-oss), built from their config classes with random weights (nothing downloaded),
run twice: as transformers runs them, and with every rotation done by posenc from the setting
`layer_rope_settings` gives that layer. The model's rotary module is replaced by one that hands
the position ids on, so transformers computes no angle at all; the logits must agree, and posenc
must rotate exactly the layers transformers rotates (None exactly where transformers does not).
"""

# ruff: noqa: E501  (the bad-input cases, one per line, read best as a table)

from __future__ import annotations

import importlib
import re
from contextlib import contextmanager
from typing import Any, NamedTuple

import pytest
import torch
import transformers

import posenc
from posenc import RopeScaling, layer_rope_settings
from tests.lib.families import quietly

SMALL = dict(vocab_size=97, hidden_size=64, intermediate_size=64, num_attention_heads=4,
             num_key_value_heads=2, pad_token_id=0, bos_token_id=1, eos_token_id=2)  # fmt: skip
SEQ = 24
ATOL = 2e-6


class Family(NamedTuple):
    name: str
    package: str  # transformers.models.<package>
    config_class: str
    model_class: str
    arguments: dict[str, Any]
    layout: str = "half"  # the model's pairing of channels
    apply: str = "apply_rotary_pos_emb"  # the module-level function the attention calls
    nope_types: tuple[str, ...] = ()  # layer types the model's code leaves without RoPE
    seq_first: bool = False  # the apply function gets (batch, seq, heads, dim)

    def config(self):
        cls = getattr(transformers, self.config_class)
        return quietly(lambda: cls(**{**SMALL, **self.arguments}))


FAMILIES = [
    Family("gemma2", "gemma2", "Gemma2Config", "Gemma2ForCausalLM", {
        "num_hidden_layers": 4, "head_dim": 16, "sliding_window": 8,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e4}}),
    # one dict per layer type: base 1e4 locally, 1e6 with linear scaling by 8 globally
    Family("gemma3", "gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM", {
        "num_hidden_layers": 7, "head_dim": 16, "sliding_window": 8, "sliding_window_pattern": 3,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}),
    # the legacy keys of a released Gemma 3 config.json, converted by the config class
    Family("gemma3-legacy-keys", "gemma3", "Gemma3TextConfig", "Gemma3ForCausalLM", {
        "num_hidden_layers": 6, "head_dim": 16, "sliding_window": 8,
        "rope_theta": 1e6, "rope_local_base_freq": 1e4,
        "rope_scaling": {"rope_type": "linear", "factor": 8.0}}),
    # NoPE every 3rd layer (interval 3, not the default 4), chunks of 8, llama3 scaling,
    # temperature tuning in the NoPE layers from position 7 on (floor_scale 8)
    Family("llama4", "llama4", "Llama4TextConfig", "Llama4ForCausalLM", {
        "num_hidden_layers": 6, "head_dim": 16, "no_rope_layer_interval": 3,
        "attention_chunk_size": 8, "floor_scale": 8, "num_local_experts": 2,
        "intermediate_size_mlp": 64, "interleave_moe_layer_step": 2,
        "rope_parameters": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 16,
                            "rope_theta": 5e5}},
        layout="interleaved", apply="apply_rotary_emb", seq_first=True),
    # an irregular list: NoPE layers 1 and 4 (1 = RoPE, 0 = NoPE)
    Family("smollm3", "smollm3", "SmolLM3Config", "SmolLM3ForCausalLM", {
        "num_hidden_layers": 6, "no_rope_layers": [1, 0, 1, 1, 0, 1],
        "rope_parameters": {"rope_type": "default", "rope_theta": 2e6}}),
    Family("smollm3-interval", "smollm3", "SmolLM3Config", "SmolLM3ForCausalLM", {
        "num_hidden_layers": 8, "rope_parameters": {"rope_type": "default", "rope_theta": 5e6}}),
    # RoPE (interleaved pairs) only in the sliding layers; full layers are NoPE in its code
    Family("cohere2", "cohere2", "Cohere2Config", "Cohere2ForCausalLM", {
        "num_hidden_layers": 8, "sliding_window": 8, "sliding_window_pattern": 4,
        "rope_parameters": {"rope_type": "default", "rope_theta": 5e4}},
        layout="interleaved", nope_types=("full_attention",)),
    # YaRN (truncate False) in every layer, windows of 8 every other layer
    Family("gpt-oss", "gpt_oss", "GptOssConfig", "GptOssForCausalLM", {
        "num_hidden_layers": 4, "head_dim": 16, "num_local_experts": 4, "sliding_window": 8,
        "rope_parameters": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                            "beta_slow": 1.0, "truncate": False,
                            "original_max_position_embeddings": 8, "rope_theta": 150000.0}}),
]  # fmt: skip


def tiny_model(family: Family, seed: int = 0):
    torch.manual_seed(seed)
    config = family.config()
    config._attn_implementation = "eager"
    return quietly(lambda: getattr(transformers, family.model_class)(config).eval())


def settings_of(family: Family, config) -> tuple[posenc.RopeSetting, ...]:
    """posenc's settings from the config's fields, passed unchanged."""
    return layer_rope_settings(
        config.layer_types,
        config.rope_parameters,
        no_rope_layers=getattr(config, "no_rope_layers", None),
        nope_types=family.nope_types,
        max_position_embeddings=config.max_position_embeddings,
        ignore_keys=config.ignore_keys_at_rope_validation,
    )


class _PositionIds(torch.nn.Module):
    """Stands in for the model's rotary module: hands the position ids on, no angles."""

    def __init__(self, as_tuple: bool) -> None:
        super().__init__()
        self.as_tuple = as_tuple

    def forward(self, x, position_ids, layer_type=None):
        return (position_ids, position_ids) if self.as_tuple else position_ids


@contextmanager
def posenc_rotates(model, family: Family, settings, head_dim: int):
    """Every rotation by posenc, from the setting of the layer being run; records which layers
    the model asked to rotate."""
    module = importlib.import_module(
        f"transformers.models.{family.package}.modeling_{family.package}"
    )
    ropes = [
        None
        if s is None
        else posenc.RotaryEmbedding(
            head_dim,
            scaling=s,
            layout=family.layout,
        )
        for s in settings
    ]
    state = {"layer": None, "rotated": []}
    hooks = [
        layer.self_attn.register_forward_pre_hook(lambda m, a, i=i: state.update(layer=i))
        for i, layer in enumerate(model.model.layers)
    ]

    def apply(q, k, positions, *args, **kwargs):
        if isinstance(positions, tuple):
            positions = positions[0]
        state["rotated"].append(state["layer"])
        rope = ropes[state["layer"]]
        if rope is None:  # posenc says NoPE where the model rotates: leave q, k as they are
            return q, k
        if family.seq_first:  # Llama 4 rotates (batch, seq, heads, dim)
            q, k = rope(q.transpose(1, 2), k.transpose(1, 2), positions)
            return q.transpose(1, 2), k.transpose(1, 2)
        return rope(q, k, positions)

    original_rotary = model.model.rotary_emb
    model.model.rotary_emb = _PositionIds(as_tuple=not family.seq_first)
    original_apply = getattr(module, family.apply)
    setattr(module, family.apply, apply)
    try:
        yield state
    finally:
        setattr(module, family.apply, original_apply)
        model.model.rotary_emb = original_rotary
        for hook in hooks:
            hook.remove()


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_posenc_settings_give_transformers_logits(family):
    model = tiny_model(family)
    config = model.config
    settings = settings_of(family, config)
    assert len(settings) == config.num_hidden_layers
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    ids = torch.randint(3, 97, (2, SEQ), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(ids).logits
        with posenc_rotates(model, family, settings, head_dim) as state:
            actual = model(ids).logits
    # posenc rotates exactly the layers transformers rotates, once per forward
    assert state["rotated"] == [i for i, s in enumerate(settings) if s is not None]
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


def test_the_demo_can_fail_wrong_settings_change_the_logits():
    # Gemma 3 with the global dict on every layer, and SmolLM3 with RoPE on every layer:
    # the comparison above would catch either mistake.
    (gemma3,) = [f for f in FAMILIES if f.name == "gemma3"]
    model = tiny_model(gemma3)
    global_everywhere = tuple(
        RopeScaling.from_dict(model.config.rope_parameters["full_attention"])
        for _ in model.config.layer_types
    )
    ids = torch.randint(3, 97, (1, SEQ), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(ids).logits
        with posenc_rotates(model, gemma3, global_everywhere, 16):
            wrong = model(ids).logits
    assert (wrong - expected).abs().max() > 1e-3


def test_patterns_of_the_families():
    # which layers rotate, layer by layer: R = RoPE, N = NoPE
    def pattern(name):
        (family,) = [f for f in FAMILIES if f.name == name]
        settings = settings_of(family, family.config())
        return "".join("N" if s is None else "R" for s in settings)

    assert pattern("gemma3") == "RRRRRRR"
    assert pattern("llama4") == "RRNRRN"
    assert pattern("smollm3") == "RNRRNR"
    assert pattern("smollm3-interval") == "RRRNRRRN"
    assert pattern("cohere2") == "RRRNRRRN"
    assert pattern("gpt-oss") == "RRRR"


def test_per_type_dicts_are_parsed_once_and_shared():
    settings = layer_rope_settings(
        ["sliding_attention"] * 5 + ["full_attention"],
        {
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
        },
    )
    assert all(s is settings[0] for s in settings[:5])
    assert (settings[0].rope_theta, settings[5].rope_theta) == (1e4, 1e6)
    assert (settings[5].rope_type, settings[5].factor) == ("linear", 8.0)


def test_none_for_a_type_is_nope_and_extra_types_are_allowed():
    settings = layer_rope_settings(
        ["sliding_attention", "full_attention"],
        {"sliding_attention": {"rope_theta": 1e4}, "full_attention": None, "unused": None},
    )
    assert settings[1] is None and settings[0].rope_theta == 1e4


def test_nope_from_every_source_combines():
    settings = layer_rope_settings(
        ["a", "b", "a", "b"], None, no_rope_layers=[1, 1, 0, 1], nope_types=["b"]
    )
    assert [s is None for s in settings] == [False, True, True, True]


def test_longer_no_rope_layers_is_read_only_as_far_as_the_layers():
    # transformers documents "at least the same length as the number of layers"
    settings = layer_rope_settings(["a", "a"], None, no_rope_layers=[1, 0, 0, 0])
    assert [s is None for s in settings] == [False, True]


def test_a_parsed_setting_is_used_as_it_is():
    spec = RopeScaling.from_dict({"rope_type": "yarn", "factor": 4.0}, max_position_embeddings=64)
    assert layer_rope_settings(["a", "b"], spec) == (spec, spec)
    nested = layer_rope_settings(["a", "b"], {"a": spec, "b": {"rope_theta": 1e4}})
    assert nested[0] is spec


def test_max_position_embeddings_reaches_every_dict():
    # yarn without original_max_position_embeddings falls back to max_position_embeddings
    settings = layer_rope_settings(
        ["a", "b"],
        {"a": {"rope_type": "yarn", "factor": 4.0}, "b": {"rope_type": "default"}},
        max_position_embeddings=4096,
    )
    assert settings[0].original_max_position_embeddings == 4096


# (what, call, exception, the argument the message starts with, as a regex)
CASES = [
    ("layer_types a string", lambda: layer_rope_settings("full_attention"), TypeError, "layer_types"),
    ("layer_types empty", lambda: layer_rope_settings([]), ValueError, "layer_types"),
    ("layer_types holds a number", lambda: layer_rope_settings(["a", 1]), TypeError, re.escape("layer_types[1]")),
    ("rope_parameters a list", lambda: layer_rope_settings(["a"], [1e4]), TypeError, "rope_parameters"),
    ("per-type dict without a used type", lambda: layer_rope_settings(["a", "b"], {"a": {}}), ValueError, "rope_parameters"),
    ("per-type dict next to flat keys", lambda: layer_rope_settings(["a"], {"a": {}, "rope_theta": 1e4}), ValueError, "rope_parameters"),
    ("per-type entry a number", lambda: layer_rope_settings(["a"], {"a": 1e4}), TypeError, re.escape("rope_parameters['a']")),
    ("no_rope_layers too short", lambda: layer_rope_settings(["a", "a"], None, no_rope_layers=[1]), ValueError, "no_rope_layers"),
    ("no_rope_layers a 2", lambda: layer_rope_settings(["a"], None, no_rope_layers=[2]), ValueError, re.escape("no_rope_layers[0]")),
    ("no_rope_layers floats", lambda: layer_rope_settings(["a"], None, no_rope_layers=[1.0]), TypeError, re.escape("no_rope_layers[0]")),
    ("no_rope_layers an int", lambda: layer_rope_settings(["a"], None, no_rope_layers=4), TypeError, "no_rope_layers"),
    ("nope_types a single string", lambda: layer_rope_settings(["a"], None, nope_types="full_attention"), TypeError, "nope_types"),
    ("nope_types holds a number", lambda: layer_rope_settings(["a"], None, nope_types=[3]), TypeError, "nope_types"),
    ("bad scaling dict in a type", lambda: layer_rope_settings(["a"], {"a": {"rope_type": "linear"}}), ValueError, re.escape("scaling['factor']")),
    ("unknown rope_type", lambda: layer_rope_settings(["a"], {"rope_type": "ntk"}), ValueError, re.escape("scaling['rope_type']")),
    ("max_position_embeddings not an int", lambda: layer_rope_settings(["a"], {}, max_position_embeddings=4096.0), TypeError, "max_position_embeddings"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "call", "error", "argument"), CASES, ids=[c[0] for c in CASES])
def test_bad_input(what, call, error, argument):
    with pytest.raises(error, match=f"^{argument}"):
        call()
