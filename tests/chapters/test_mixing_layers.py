"""Claims of chapter 11 "Mixing layers: NoPE, local and global" beyond its printed output.

The references are transformers 5.23 (the version requirements.lock pins): its config classes
built from the fields of the released config.json files, its masks, caches and attention
code. The Llama 4 temperature is read back from what transformers' attention actually does to
the queries, not from a formula.
"""

from __future__ import annotations

import math
import runpy

import pytest
import torch
import transformers
from transformers import masking_utils
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.cohere2 import modeling_cohere2
from transformers.models.gpt_oss import modeling_gpt_oss
from transformers.models.llama4 import modeling_llama4

import posenc
from tests.lib.families import quietly
from tools import layout

CHAPTER = layout.find_chapter("mixing-layers")


def snippet(name: str) -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / name), run_name="snippet")


@pytest.fixture(scope="module")
def layers() -> dict:
    return snippet("layers.py")


@pytest.fixture(scope="module")
def long_context() -> dict:
    return snippet("long_context.py")


# The fields of each released config.json that decide the layer pattern, passed to the model's
# config class as from_pretrained would (sources: audit/chapters/11-mixing-layers.toml).
RELEASED = {
    # google/gemma-2-9b-it (copied in derivative repos; google-deepmind/gemma _gemma.py: 42 layers)
    "Gemma 2 9B": ("Gemma2Config", {"num_hidden_layers": 42, "sliding_window": 4096,
                                    "rope_theta": 10000.0}),
    # google/gemma-3-27b-it text_config (transformers' convert_gemma3_weights.py, _gemma.py)
    "Gemma 3 27B": ("Gemma3TextConfig", {
        "num_hidden_layers": 62, "sliding_window": 1024, "sliding_window_pattern": 6,
        "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}),
    # openai/gpt-oss-120b (reference code gpt_oss/torch/model.py ModelConfig)
    "gpt-oss-120b": ("GptOssConfig", {
        "num_hidden_layers": 36, "sliding_window": 128, "rope_theta": 150000.0,
        "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                         "beta_slow": 1.0, "truncate": False,
                         "original_max_position_embeddings": 4096}}),
    # CohereForAI/c4ai-command-r7b-12-2024
    "Command R7B": ("Cohere2Config", {"num_hidden_layers": 32, "sliding_window": 4096,
                                      "sliding_window_pattern": 4, "rope_theta": 50000}),
    # transformers' Llama4TextConfig defaults (documented for meta-llama/Llama-4-Scout-17B-16E)
    "Llama 4 Scout": ("Llama4TextConfig", {}),
    # HuggingFaceTB/SmolLM3-3B
    "SmolLM3-3B": ("SmolLM3Config", {"num_hidden_layers": 36, "no_rope_layer_interval": 4,
                                     "rope_theta": 5000000.0, "max_position_embeddings": 65536}),
}  # fmt: skip


@pytest.mark.parametrize("name", RELEASED)
def test_the_page_shows_the_fields_transformers_builds_from_the_released_configs(layers, name):
    class_name, fields = RELEASED[name]
    config = quietly(lambda: getattr(transformers, class_name)(**fields))
    shown = layers["MODELS"][name]
    assert config.layer_types == shown["layer_types"]
    assert config.rope_parameters == shown["rope_parameters"]
    assert getattr(config, "no_rope_layers", None) == shown.get("no_rope_layers")
    if class_name == "Llama4TextConfig":
        window = config.attention_chunk_size
    elif class_name == "SmolLM3Config":
        window = config.sliding_window if config.use_sliding_window else None
    else:
        window = config.sliding_window
    assert window == shown["window"]


def test_no_rope_layers_one_means_rope():
    # The name reads the other way round: SmolLM3 and Llama 4 rotate where the entry is 1.
    config = transformers.SmolLM3Config(num_hidden_layers=4, no_rope_layers=[1, 0, 1, 1])
    model = quietly(lambda: transformers.SmolLM3ForCausalLM(config))
    assert [layer.self_attn.use_rope for layer in model.model.layers] == [1, 0, 1, 1]
    config = transformers.Llama4TextConfig(num_hidden_layers=8, hidden_size=32,
                                           num_attention_heads=2, head_dim=16)  # fmt: skip
    use_rope = [
        bool(modeling_llama4.Llama4TextAttention(config, layer_idx=i).use_rope) for i in range(8)
    ]
    assert use_rope == [True, True, True, False] * 2  # default interval 4: layers 3 and 7 NoPE
    # and the NoPE layers are the global ones, the RoPE layers the chunked ones
    assert config.layer_types == (["chunked_attention"] * 3 + ["full_attention"]) * 2


def test_cohere2_pairs_adjacent_dimensions():
    # Command R7B rotates (x[2i], x[2i+1]) as one complex number by p * theta_i (the
    # interleaved layout), not (x[i], x[i + d/2]) as Llama does
    config = transformers.Cohere2Config(hidden_size=64, num_attention_heads=4, rope_theta=50000)
    rotary = modeling_cohere2.Cohere2RotaryEmbedding(config)
    torch.manual_seed(0)
    q = torch.randn(1, 1, 5, 16)
    positions = torch.arange(5)[None]
    cos, sin = rotary(q, positions)
    rotated, _ = modeling_cohere2.apply_rotary_pos_emb(q, q, cos, sin)
    theta = 50000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    turn = torch.polar(torch.ones(5, 8, dtype=torch.float64), positions[0, :, None] * theta)
    pairs = torch.view_as_complex(q.double().reshape(1, 1, 5, 8, 2).contiguous())
    expected = torch.view_as_real(pairs * turn).reshape(1, 1, 5, 16)
    torch.testing.assert_close(rotated.double(), expected, rtol=1e-5, atol=1e-5)


def test_cohere2_output_does_not_depend_on_max_position_embeddings():
    # Command R7B's config.json says 8192 for a model documented at 128K: neither the
    # windowed RoPE layers nor the NoPE layers read the number
    def logits(max_positions: int) -> torch.Tensor:
        config = transformers.Cohere2Config(
            vocab_size=64, hidden_size=32, intermediate_size=32, num_attention_heads=2,
            num_hidden_layers=4, sliding_window=4, max_position_embeddings=max_positions,
            pad_token_id=0, bos_token_id=1, eos_token_id=2,
        )  # fmt: skip
        torch.manual_seed(0)
        model = quietly(lambda: transformers.Cohere2ForCausalLM(config).eval())
        with torch.no_grad():
            return model(torch.arange(3, 43)[None] % 60 + 3).logits

    torch.testing.assert_close(logits(8), logits(131072), rtol=0, atol=0)


def test_scout_scaling_is_a_step_at_8192_tokens():
    # llama3 rule with low_freq_factor = high_freq_factor = 1 and original length 8192 (Meta's
    # apply_scaling for Scout): no blended band, slow pairs divided by 16, fast pairs kept
    config = quietly(lambda: transformers.Llama4TextConfig(rope_parameters={
        "rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192, "rope_theta": 500000.0}))  # fmt: skip
    scaled, _ = quietly(lambda: ROPE_INIT_FUNCTIONS["llama3"](config, "cpu"))
    plain = 1.0 / 500000.0 ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    slow = 2 * math.pi / plain > 8192
    torch.testing.assert_close(scaled.double()[~slow], plain[~slow], rtol=1e-6, atol=0)
    torch.testing.assert_close(scaled.double()[slow], plain[slow] / 16, rtol=1e-6, atol=0)
    assert 0 < int(slow.sum()) < 64


def transformers_mask(kind: str, n: int, size: int) -> torch.Tensor:
    overlay = {
        "full": masking_utils.causal_mask_function,
        "sliding": masking_utils.sliding_window_causal_mask_function(size),
        "chunked": masking_utils.chunked_causal_mask_function(size, torch.zeros(1, dtype=int)),
    }[kind]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return overlay(torch.tensor(0), torch.tensor(0), i, j).expand(n, n)


@pytest.mark.parametrize("kind", ["full", "sliding", "chunked"])
def test_masks_match_transformers(layers, kind):
    for size in (3, 4, 8):
        assert torch.equal(layers["visible"](20, kind, size), transformers_mask(kind, 20, size))


def test_chunked_is_not_a_sliding_window():
    # Llama 4 with chunks of 8192: the first token of a chunk sees only itself
    chunked = masking_utils.chunked_causal_mask_function(8192, torch.zeros(1, dtype=int))
    sliding = masking_utils.sliding_window_causal_mask_function(8192)
    keys, zero = torch.arange(8192 * 2), torch.tensor(0)
    assert chunked(zero, zero, torch.tensor(8192), keys).sum() == 1
    assert sliding(zero, zero, torch.tensor(8192), keys).sum() == 8192


def query_scale_of_llama4_nope_layer(positions_from: int, length: int) -> torch.Tensor:
    """What transformers' Llama 4 attention multiplies the queries of a NoPE layer by."""
    config = transformers.Llama4TextConfig(
        hidden_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
        num_hidden_layers=1, no_rope_layers=[0], intermediate_size=32,
        intermediate_size_mlp=32, num_local_experts=2, vocab_size=16,
    )  # fmt: skip
    config._attn_implementation = "eager"
    attention = modeling_llama4.Llama4TextAttention(config, layer_idx=0)
    torch.manual_seed(0)
    hidden = torch.randn(1, length, 32)
    seen = {}

    def capture(module, query, key, value, *args, **kwargs):
        seen["query"] = query
        return torch.zeros(1, length, 2, 16), None

    cache = transformers.DynamicCache()
    if positions_from:  # fill the cache so that the queries sit at positions_from ..
        cache.update(
            torch.zeros(1, 1, positions_from, 16), torch.zeros(1, 1, positions_from, 16), 0
        )
    original = modeling_llama4.eager_attention_forward
    modeling_llama4.eager_attention_forward = capture
    try:
        attention(hidden, None, None, past_key_values=cache)
    finally:
        modeling_llama4.eager_attention_forward = original
    plain = attention.q_proj(hidden).view(1, length, 2, 16).transpose(1, 2)
    scale = seen["query"] / plain
    assert torch.allclose(scale, scale[..., :1], rtol=1e-5)  # one factor per position
    return scale[0, 0, :, 0]


@pytest.mark.parametrize("start", [0, 8185, 131065, 1048570])
def test_llama4_temperature_is_what_transformers_applies(long_context, start):
    measured = query_scale_of_llama4_nope_layer(start, 12)
    positions = torch.arange(start, start + 12)
    expected = long_context["temperature"](positions).float()
    torch.testing.assert_close(measured, expected, rtol=1e-5, atol=0)


def test_llama4_temperature_only_in_nope_layers():
    config = transformers.Llama4TextConfig(num_hidden_layers=4, hidden_size=32,
                                           num_attention_heads=2, head_dim=16)  # fmt: skip
    attention = modeling_llama4.Llama4TextAttention(config, layer_idx=0)  # a RoPE layer
    assert attention.use_rope and attention.attn_temperature_tuning
    # transformers' condition: `if self.attn_temperature_tuning and not self.use_rope`
    source = __import__("inspect").getsource(modeling_llama4.Llama4TextAttention.forward)
    assert "if self.attn_temperature_tuning and not self.use_rope:" in source


def rotated_layers(family_model, config, package: str) -> list[int]:
    """The layers in which transformers calls its rotation, for one forward pass."""
    module = {"cohere2": modeling_cohere2, "gpt_oss": modeling_gpt_oss}[package]
    model = quietly(lambda: family_model(config).eval())
    calls, current = [], {}
    for i, layer in enumerate(model.model.layers):
        layer.self_attn.register_forward_pre_hook(lambda m, a, i=i: current.update(i=i))
    original = module.apply_rotary_pos_emb

    def spy(q, k, *args, **kwargs):
        calls.append(current["i"])
        return original(q, k, *args, **kwargs)

    module.apply_rotary_pos_emb = spy
    try:
        with torch.no_grad():
            model(torch.randint(3, 50, (1, 12)))
    finally:
        module.apply_rotary_pos_emb = original
    return calls


def test_cohere2_rotates_only_in_its_sliding_layers():
    config = transformers.Cohere2Config(
        vocab_size=64, hidden_size=32, intermediate_size=32, num_attention_heads=2,
        num_hidden_layers=8, sliding_window=4, pad_token_id=0, bos_token_id=1, eos_token_id=2,
    )  # fmt: skip
    config._attn_implementation = "eager"
    calls = rotated_layers(transformers.Cohere2ForCausalLM, config, "cohere2")
    assert calls == [i for i, t in enumerate(config.layer_types) if t == "sliding_attention"]
    assert calls == [0, 1, 2, 4, 5, 6]


def test_gpt_oss_rotates_every_layer_with_one_yarn_table():
    config = transformers.GptOssConfig(
        vocab_size=64, hidden_size=32, intermediate_size=32, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, num_hidden_layers=4, num_local_experts=2,
        num_experts_per_tok=2, sliding_window=4,
    )  # fmt: skip
    config._attn_implementation = "eager"
    assert rotated_layers(transformers.GptOssForCausalLM, config, "gpt_oss") == [0, 1, 2, 3]
    rotary = modeling_gpt_oss.GptOssRotaryEmbedding(config)  # one module for the whole model
    assert rotary.attention_scaling == pytest.approx(0.1 * math.log(32) + 1)


def test_gpt_oss_yarn_numbers_on_the_page_match_transformers(long_context):
    config = transformers.GptOssConfig(num_hidden_layers=2)  # head_dim 64, the released values
    rotary = modeling_gpt_oss.GptOssRotaryEmbedding(config)
    plain = 1.0 / 150000.0 ** (torch.arange(0, 64, 2).float() / 64)
    assert torch.isclose(rotary.inv_freq, plain, rtol=1e-6, atol=0).sum() == 9
    assert torch.isclose(rotary.inv_freq, plain / 32, rtol=1e-6, atol=0).sum() == 14
    assert ((plain - rotary.inv_freq) * 127).abs().max() == pytest.approx(0.64, abs=0.005)
    assert long_context["factor"] == pytest.approx(rotary.attention_scaling)


def test_gemma3_rotary_uses_a_base_per_layer_type(long_context):
    # transformers' Gemma 3 keeps one table per layer type; the page's per-type settings
    config = quietly(lambda: transformers.Gemma3TextConfig(**RELEASED["Gemma 3 27B"][1],
                                                           head_dim=128))  # fmt: skip
    rotary = transformers.models.gemma3.modeling_gemma3.Gemma3RotaryEmbedding(config)
    local = posenc.rope_inv_freq(128, scaling=long_context["local_setting"])[0]
    global_ = posenc.rope_inv_freq(128, scaling=long_context["global_setting"])[0]
    assert torch.equal(rotary.sliding_attention_inv_freq, local)
    assert torch.equal(rotary.full_attention_inv_freq, global_)


def test_full_turns_counted_from_the_periods(long_context):
    for theta, factor, span, expected in [
        (1e4, 1, 1024, 36),
        (1e6, 8, 131072, 37),
        (1e6, 8, 1024, 14),
    ]:
        periods = [2 * math.pi * factor * theta ** (2 * i / 128) for i in range(64)]
        assert sum(p <= span for p in periods) == expected


def test_local_layers_keep_at_most_a_window_in_transformers_cache():
    # A tiny Gemma 3 with a window of 8: after 40 tokens the sliding layers hold 7 keys (the
    # next query brings its own: 8 in all), the full layer holds 40.
    config = quietly(lambda: transformers.Gemma3TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=32, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, num_hidden_layers=6, sliding_window=8,
    ))  # fmt: skip
    model = quietly(lambda: transformers.Gemma3ForCausalLM(config).eval())
    with torch.no_grad():
        out = model(torch.randint(3, 60, (1, 40)), use_cache=True)
    lengths = [layer.keys.shape[-2] for layer in out.past_key_values.layers]
    assert lengths == [7, 7, 7, 7, 7, 40]


def test_memory_table_against_a_direct_count(long_context):
    # Gemma 3 27B: 52 local layers of 1024 tokens, 10 global layers, 16 x 128 K and V, bf16
    for tokens in (8192, 32768, 131072):
        local, global_ = long_context["kv_bytes"](tokens)
        assert local == 52 * 1024 * 16 * 128 * 2 * 2
        assert global_ == 10 * tokens * 16 * 128 * 2 * 2
    local, global_ = long_context["kv_bytes"](131072)
    dense = sum(long_context["kv_bytes"](131072, all_global=True))
    assert (local + global_) / dense < 0.17 + 0.005 and dense == 62 * 2**30


def test_order_demo_can_fail_on_its_own_inputs():
    # Without the window the same inputs are told apart by a RoPE layer; with one more global
    # NoPE layer after the first, the causal stack tells them apart too (asserted in the
    # snippet); here: the first NoPE layer's output already differs at the tokens of B.
    order = snippet("order.py")
    kinds = ["local"] * 3 + ["nope"]
    one = order["run"](order["a_first"], kinds, order["layers"], True)
    two = order["run"](order["b_first"], kinds, order["layers"], True)
    b_in_one, b_in_two = slice(86, 92), slice(40, 46)  # B's tokens in each order
    assert (one[b_in_one] - two[b_in_two]).abs().max() > 1e-2
