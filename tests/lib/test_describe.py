"""posenc.describe against transformers 5.23's own config classes and rotary modules.

For every released config in posenc/configs/, transformers builds its config object from the
same dict (no download, no weights) and its model's rotary-embedding module from that: the
inverse frequencies and the attention scaling must equal describe's bit for bit, and the
layer types and NoPE layers must be the ones transformers' config computes (Llama 4 Scout's
released file has NoPE layers). Models whose released file could not be read here (SmolLM3,
Cohere2) are checked with configs built the same way, so their NoPE rules are tested too.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math

import pytest
import torch

import posenc
from posenc.describe import released_config, released_configs

transformers = pytest.importorskip("transformers")
from transformers import AutoConfig  # noqa: E402

NAMES = released_configs()


def _text_config(config: dict):
    built = AutoConfig.for_model(**copy.deepcopy(config))
    return built.get_text_config() if hasattr(built, "get_text_config") else built


def _rotary_module(text_config):
    """The model's own rotary-embedding module, built from the config (no weights)."""
    family = type(text_config).__module__.split(".")[-2]
    modeling = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    classes = [
        cls
        for name, cls in inspect.getmembers(modeling, inspect.isclass)
        if name.endswith("RotaryEmbedding")
        and "Vision" not in name
        and cls.__module__ == modeling.__name__
    ]
    assert len(classes) == 1, classes
    return classes[0](text_config)


def _reference(module, layer_type: str):
    """(inv_freq, attention_scaling) of a layer type; per-type buffers where the model has them."""
    if hasattr(module, f"{layer_type}_inv_freq"):
        return getattr(module, f"{layer_type}_inv_freq"), getattr(
            module, f"{layer_type}_attention_scaling"
        )
    return module.inv_freq, module.attention_scaling


def _rotates(text_config) -> list[bool]:
    """Which layers transformers rotates: its config's no_rope_layers (1 = RoPE, read by the
    attention modules of Llama 4 and SmolLM3 as use_rope), else every layer."""
    flags = getattr(text_config, "no_rope_layers", None)
    if flags is None:
        return [True] * text_config.num_hidden_layers
    return [bool(flag) for flag in flags]


def test_at_least_fifteen_released_configs_each_with_its_source():
    assert len(NAMES) >= 15
    for name in NAMES:
        entry = released_config(name)
        assert set(entry) == {"model", "hub", "read", "revision", "note", "config"}, name
        assert entry["read"].startswith("https://"), name
        assert entry["revision"], name
        assert "model_type" in entry["config"], name


@pytest.mark.parametrize("name", NAMES)
def test_transformers_accepts_what_posenc_describes(name):
    config = released_config(name)["config"]
    described = posenc.describe(config)
    assert described.layers
    _text_config(config)  # raises if transformers refuses the file


@pytest.mark.parametrize(
    "name", [n for n in NAMES if posenc.describe(released_config(n)["config"]).kinds() != ("alibi",)
             and "rope" in posenc.describe(released_config(n)["config"]).kinds()]
)  # fmt: skip
def test_rope_layers_equal_transformers_bit_for_bit(name):
    config = released_config(name)["config"]
    described = posenc.describe(config)
    text = _text_config(config)
    module = _rotary_module(text)
    types = getattr(text, "layer_types", None)
    if types is not None:
        assert [layer.layer_type for layer in described.layers] == list(types)
    assert len(described.layers) == text.num_hidden_layers
    assert [layer.kind == "rope" for layer in described.layers] == _rotates(text)
    for layer in described.layers:
        if layer.kind == "none":
            continue
        assert layer.kind == "rope"
        inv_freq, scaling = _reference(module, layer.layer_type or "full_attention")
        assert torch.equal(layer.inv_freq, inv_freq), (name, layer.index)
        assert layer.attention_factor == scaling, (name, layer.index)


def test_the_configs_cover_every_kind_but_learned():
    kinds = {kind for n in NAMES for kind in posenc.describe(released_config(n)["config"]).kinds()}
    assert kinds == {"rope", "none", "alibi", "t5-bias"}


def test_gemma3_local_and_global_layers_differ_as_transformers_builds_them():
    described = posenc.describe(released_config("gemma-3-12b")["config"])
    local = [layer for layer in described.layers if layer.layer_type == "sliding_attention"]
    glob = [layer for layer in described.layers if layer.layer_type == "full_attention"]
    assert len(glob) == 8 and len(local) == 40  # every 6th of 48
    assert {layer.rope_theta for layer in local} == {10000.0}
    assert {layer.rope_theta for layer in glob} == {1e6}
    assert glob[0].rope_type == "linear" and glob[0].scaling.factor == 8.0
    assert local[0].window == 1024 and glob[0].window is None


def test_gpt_neox_rotates_a_quarter_of_each_head():
    layer = posenc.describe(released_config("gpt-neox-20b")["config"]).layers[0]
    assert (layer.head_dim, layer.rotary_dim, layer.rope_theta) == (96, 24, 10000.0)


@pytest.mark.parametrize("name", ["qwen2-vl-7b", "qwen2.5-vl-7b"])
def test_mrope_sections_follow_the_pairs_in_order(name):
    layer = posenc.describe(released_config(name)["config"]).layers[0]
    assert layer.mrope_axes == (0,) * 16 + (1,) * 24 + (2,) * 24


def test_gpt_oss_yarn_factor_and_window():
    described = posenc.describe(released_config("gpt-oss-20b")["config"])
    first = described.layers[0]
    assert first.rope_type == "yarn" and first.window == 128 and described.layers[1].window is None
    assert first.attention_factor == pytest.approx(0.1 * math.log(32) + 1)


# ── ALiBi and T5 against transformers' own tensors ──────────────────────────


def _slopes_close(slopes, reference):
    # posenc keeps the exact slopes (float64); BLOOM and MPT raise float32 bases to powers, so
    # float32 rounding accumulates (tests/lib/test_alibi.py allows the same 1e-5)
    torch.testing.assert_close(torch.tensor(slopes, dtype=torch.float64), reference.double(),
                               rtol=1e-5, atol=0)  # fmt: skip


def test_bloom_slopes_equal_transformers():
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    described = posenc.describe(released_config("bloom-560m")["config"])
    assert len(described.layers) == 24 and described.kinds() == ("alibi",)
    reference = build_alibi_tensor(torch.ones(1, 2), 16, torch.float32)[:, 0, 1]  # slope · 1
    _slopes_close(described.layers[0].alibi_slopes, reference)


@pytest.mark.parametrize("heads", [32, 12])
def test_mpt_slopes_equal_transformers(heads):
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    config = {**released_config("mpt-7b")["config"], "n_heads": heads}
    slopes = posenc.describe(config).layers[0].alibi_slopes
    reference = -build_mpt_alibi_tensor(heads, 2, alibi_bias_max=8)[:, 0, 0]  # slope · (0 − 1)
    _slopes_close(slopes, reference)
    assert len(set(slopes)) == heads  # each head its own slope (12: not a power of two)


def test_t5_bias_table_only_in_the_first_layer_of_each_stack():
    from transformers import T5Config, T5Model

    config = released_config("t5-base")["config"]
    described = posenc.describe(config)
    tiny = {"d_model": 16, "d_kv": 4, "num_heads": 2, "d_ff": 8, "vocab_size": 8, "num_layers": 3}
    small = T5Config(**{**config, **tiny})
    model = T5Model(small)
    stacks = {"encoder": model.encoder, "decoder": model.decoder}
    assert [layer.stack for layer in described.layers] == ["encoder"] * 12 + ["decoder"] * 12
    small_described = posenc.describe({**config, "num_layers": 3})
    for layer in small_described.layers:
        attention = stacks[layer.stack].block[layer.index].layer[0].SelfAttention
        assert attention.has_relative_attention_bias == layer.has_bias_table
        assert attention.relative_attention_num_buckets == layer.num_buckets
        assert attention.relative_attention_max_distance == layer.max_distance
        assert (not attention.is_decoder) == layer.bidirectional


# ── NoPE: which layers rotate, against transformers' attention modules ──────


def _tiny(model_type: str, **fields):
    base = {"model_type": model_type, "hidden_size": 64, "num_attention_heads": 4,
            "num_key_value_heads": 2, "num_hidden_layers": 8, "intermediate_size": 32,
            "vocab_size": 16, "max_position_embeddings": 256, "pad_token_id": 0}  # fmt: skip
    return {**base, **fields}


@pytest.mark.parametrize(
    "config",
    [
        _tiny("smollm3", rope_theta=5000000.0),
        _tiny("smollm3", no_rope_layers=[1, 0, 1, 1, 0, 1, 1, 1]),
        _tiny("llama4_text", head_dim=16, intermediate_size_mlp=32, num_local_experts=2,
              attention_chunk_size=64, rope_theta=500000.0,
              rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 1.0, "original_max_position_embeddings": 64}),
        _tiny("llama4_text", head_dim=16, intermediate_size_mlp=32, num_local_experts=2,
              no_rope_layers=[1, 1, 0, 1, 1, 0, 1, 1], attn_temperature_tuning=False),
        _tiny("llama4_text", head_dim=16, intermediate_size_mlp=32, num_local_experts=2,
              floor_scale=64, attn_scale=0.25),
    ],
    ids=["smollm3-interval", "smollm3-list", "llama4-scout-shaped", "llama4-no-temperature",
         "llama4-temperature"],
)  # fmt: skip
def test_nope_layers_are_the_ones_transformers_skips(config):
    from transformers import AutoModelForCausalLM

    described = posenc.describe(config)
    built = AutoConfig.for_model(**copy.deepcopy(config))
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(built)
    rotates = [bool(layer.self_attn.use_rope) for layer in model.model.layers]
    assert [layer.kind == "rope" for layer in described.layers] == rotates
    # Llama 4's NoPE layers scale their queries by position (temperature tuning)
    attentions = [layer.self_attn for layer in model.model.layers]
    tuned = [
        (a.floor_scale, a.attn_scale)
        if getattr(a, "attn_temperature_tuning", False) and not a.use_rope
        else None
        for a in attentions
    ]
    assert [layer.query_temperature for layer in described.layers] == tuned
    assert [layer.layer_type for layer in described.layers] == list(built.layer_types)
    assert not all(rotates)  # the config must have NoPE layers, or this proves nothing
    module = _rotary_module(built)
    rope = next(layer for layer in described.layers if layer.kind == "rope")
    assert torch.equal(rope.inv_freq, module.inv_freq)
    assert rope.attention_factor == module.attention_scaling


def test_llama4_equal_factors_give_transformers_step():
    """low_freq_factor = high_freq_factor (Scout's dict): posenc's RopeScaling refuses it,
    describe computes what transformers computes, a step with no smooth band."""
    scaling = {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
               "high_freq_factor": 1.0, "original_max_position_embeddings": 64}  # fmt: skip
    config = _tiny("llama4_text", head_dim=16, rope_theta=500000.0, rope_scaling=scaling)
    with pytest.raises(ValueError, match="high_freq_factor"):
        posenc.RopeScaling.from_dict(config["rope_scaling"])
    layer = next(layer for layer in posenc.describe(config).layers if layer.kind == "rope")
    plain = posenc.rope_inv_freq(16, 500000.0)[0]
    wavelength = 2 * math.pi / plain
    assert torch.equal(layer.inv_freq, torch.where(wavelength > 64, plain / 16, plain))


@pytest.mark.parametrize("model_type", ["mistral", "phi3"])
def test_one_window_for_every_layer_where_the_family_has_no_layer_types(model_type):
    """Mistral and Phi-3 pass config.sliding_window to every layer's attention (MistralConfig's
    default is 4096): one layer with a window of 2 never lets the last token see the first."""
    from transformers import AutoModelForCausalLM

    config = _tiny(model_type, num_hidden_layers=1, sliding_window=2)
    described = posenc.describe(config)
    assert [(layer.layer_type, layer.window) for layer in described.layers] == [
        ("sliding_attention", 2)
    ]
    unset = {key: value for key, value in config.items() if key != "sliding_window"}
    default = {"mistral": 4096, "phi3": None}[model_type]
    assert posenc.describe(unset).layers[0].window == default
    assert AutoConfig.for_model(**unset).sliding_window == default
    ids = torch.tensor([[1, 2, 3, 4, 5, 6]])
    other = ids.clone()
    other[0, 0] = 7
    for window, sees_first in ((2, False), (None, True)):
        torch.manual_seed(0)
        built = AutoConfig.for_model(**{**config, "sliding_window": window})
        model = AutoModelForCausalLM.from_config(built, attn_implementation="eager").eval()
        with torch.no_grad():
            last = [model(x).logits[0, -1] for x in (ids, other)]
        assert (not torch.equal(*last)) == sees_first
        assert posenc.describe({**config, "sliding_window": window}).layers[0].window == window


def _deepseek_small(**rope):
    """DeepSeek-V3's released RoPE fields on small projections (the softmax scale depends
    only on the head's q·k width and the RoPE dict)."""
    config = {**released_config("deepseek-v3")["config"], "hidden_size": 64,
              "num_attention_heads": 2, "num_key_value_heads": 2, "q_lora_rank": 16,
              "kv_lora_rank": 16, "qk_nope_head_dim": 8, "v_head_dim": 8,
              "num_hidden_layers": 2, "vocab_size": 16}  # fmt: skip
    if rope:
        config["rope_scaling"] = {**config["rope_scaling"], **rope}
    return config


@pytest.mark.parametrize(
    "config",
    [_deepseek_small(), _deepseek_small(mscale_all_dim=0.707), _deepseek_small(mscale_all_dim=0),
     {**_deepseek_small(), "rope_scaling": None}],
    ids=["released", "mscale_all_dim-0.707", "mscale_all_dim-0", "no-scaling"],
)  # fmt: skip
def test_deepseek_softmax_factor_is_transformers_scaling(config):
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention

    layer = posenc.describe(config).layers[0]
    attention = DeepseekV3Attention(_text_config(config), layer_idx=0)
    qk_head_dim = config["qk_nope_head_dim"] + config["qk_rope_head_dim"]
    assert attention.scaling == pytest.approx(qk_head_dim**-0.5 * layer.softmax_factor, rel=1e-15)
    scaled = (config["rope_scaling"] or {}).get("mscale_all_dim")
    assert (layer.softmax_factor != 1.0) == bool(scaled)  # the released dict: about 1.874


def test_cohere2_global_layers_have_no_rope():
    described = posenc.describe(_tiny("cohere2", rope_theta=50000.0, sliding_window=32))
    assert [layer.kind for layer in described.layers] == ["rope", "rope", "rope", "none"] * 2
    built = AutoConfig.for_model(**_tiny("cohere2", rope_theta=50000.0, sliding_window=32))
    assert [layer.layer_type for layer in described.layers] == list(built.layer_types)


# ── the older and newer forms of the same config ────────────────────────────


def test_rope_parameters_and_rope_scaling_forms_agree():
    old = released_config("llama-3.1-8b")["config"]
    new = {key: value for key, value in old.items() if key not in ("rope_scaling", "rope_theta")}
    new["rope_parameters"] = {**old["rope_scaling"], "rope_theta": old["rope_theta"]}
    a, b = posenc.describe(old).layers[0], posenc.describe(new).layers[0]
    assert torch.equal(a.inv_freq, b.inv_freq) and a.scaling == b.scaling


def test_phi3_top_level_trained_length_wins_as_in_transformers():
    factors = [1.0] * 48
    config = {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
              "num_hidden_layers": 2, "max_position_embeddings": 131072,
              "original_max_position_embeddings": 4096,
              "rope_scaling": {"type": "longrope", "short_factor": factors, "long_factor": factors,
                               "original_max_position_embeddings": 8192}}  # fmt: skip
    layer = posenc.describe(config).layers[0]
    assert layer.scaling.original_max_position_embeddings == 4096
    module = _rotary_module(_text_config(config))
    assert layer.attention_factor == module.attention_scaling


# ── malformed configs: clear errors naming the field ────────────────────────

BAD = [
    ([], TypeError, "config must be a dict"),
    ({}, ValueError, r"config\['model_type'\]"),
    ({"model_type": "no-such-model"}, ValueError, r"config\['model_type'\] must be one"),
    ({**released_config("gpt-oss-20b")["config"], "layer_types": ["full_attention"] * 23},
     ValueError, r"config\['layer_types'\] must have one entry per layer \(24"),
    (_tiny("smollm3", no_rope_layers=[1] * 9), ValueError, "no_rope_layers'] must have one"),
    (_tiny("smollm3", no_rope_layers=[1] * 7), ValueError, "no_rope_layers'] must have one"),
    ({**released_config("llama-2-7b")["config"], "rope_scaling": {"rope_type": "bogus"}},
     ValueError, r"scaling\['rope_type'\]"),
    ({**released_config("llama-2-7b")["config"], "rope_scaling": {"rope_type": "linear"}},
     ValueError, r"scaling\['factor'\]"),
    ({**released_config("llama-2-7b")["config"], "num_attention_heads": "32"}, TypeError,
     r"config\['num_attention_heads'\]"),
    ({**released_config("qwen2-vl-7b")["config"],
      "rope_scaling": {"mrope_section": [16, 24, 16], "rope_type": "default"}},
     ValueError, "mrope_section must count the 64"),
    ({**released_config("mpt-7b")["config"], "attn_config": {"alibi": False}}, ValueError,
     r"config\['attn_config'\]\['alibi'\]"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "error", "match"), BAD, ids=[m for _, _, m in BAD])
def test_malformed_configs_are_refused_naming_the_field(config, error, match):
    with pytest.raises(error, match=match):
        posenc.describe(config)


def test_released_config_refuses_an_unknown_name():
    with pytest.raises(ValueError, match="name must be one of"):
        released_config("gpt-5")
