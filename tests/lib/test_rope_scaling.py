"""rope_inv_freq and RopeScaling against transformers: every scaling type, random configurations,
and the configs that transformers' own config classes build for each model family."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_get_mscale
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

import posenc
from posenc.rope_scaling import RopeVariant
from tests.lib.families import FAMILIES, Family, hf_rotary, layer_types, posenc_rope, quietly

ORIGINAL = 64


def reference(head_dim, scaling, *, base=10000.0, seq_len=None, max_positions=None):
    """transformers' (inv_freq, attention_factor) for a config that carries `scaling`."""
    # transformers' `dynamic` reads the trained length from max_position_embeddings.
    if max_positions is None:
        max_positions = ORIGINAL if scaling["rope_type"] == "dynamic" else 4 * ORIGINAL
    config = quietly(
        lambda: LlamaConfig(
            hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
            max_position_embeddings=max_positions, rope_parameters={**scaling, "rope_theta": base},
        )
    )  # fmt: skip
    if scaling["rope_type"] == "default":  # GPT-NeoX's reads partial_rotary_factor, Llama's not
        return GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    return ROPE_INIT_FUNCTIONS[scaling["rope_type"]](config, None, seq_len=seq_len)


def longrope(dim, **extra):
    return {
        "rope_type": "longrope", "original_max_position_embeddings": ORIGINAL, "factor": 4.0,
        "short_factor": [1.0 + 0.05 * i for i in range(dim // 2)],
        "long_factor": [1.0 + 0.5 * i for i in range(dim // 2)], **extra,
    }  # fmt: skip


CASES = [
    ({"rope_type": "linear", "factor": 4.0}, None),
    ({"rope_type": "linear", "factor": 0.5}, None),
    ({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": ORIGINAL}, None),
    ({"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": ORIGINAL}, 32),
    ({"rope_type": "dynamic", "factor": 8.0, "original_max_position_embeddings": ORIGINAL}, 1000),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": ORIGINAL}, None),
    ({"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": ORIGINAL,
      "beta_fast": 16, "beta_slow": 2, "truncate": False}, None),
    ({"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": ORIGINAL,
      "mscale": 1.0, "mscale_all_dim": 0.707}, None),
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": ORIGINAL,
      "attention_factor": 1.5}, None),
    ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": ORIGINAL}, None),
    ({"rope_type": "proportional", "partial_rotary_factor": 0.25}, None),
    ({"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 8.0}, None),
    ("longrope", None),
    ("longrope", 2 * ORIGINAL),
]  # fmt: skip


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize(("scaling", "seq_len"), CASES)
def test_bit_equal_to_transformers(head_dim, scaling, seq_len):
    if scaling == "longrope":
        scaling = longrope(head_dim)
    expected_freq, expected_factor = reference(head_dim, scaling, base=50000.0, seq_len=seq_len)
    actual_freq, actual_factor = posenc.rope_inv_freq(
        head_dim, 50000.0, scaling=scaling, seq_len=seq_len
    )
    assert actual_freq.dtype == torch.float32
    assert torch.equal(actual_freq, expected_freq)
    assert actual_factor == expected_factor


numbers = st.floats(1.0, 64.0)
SCALINGS = st.one_of(
    st.builds(lambda s: {"rope_type": "linear", "factor": s}, numbers),
    st.builds(lambda s: {"rope_type": "dynamic", "factor": s}, numbers),
    st.builds(
        lambda s, fast, slow, truncate, original: {
            "rope_type": "yarn",
            "factor": s,
            "beta_fast": fast,
            "beta_slow": slow,
            "truncate": truncate,
            "original_max_position_embeddings": original,
        },
        numbers,
        st.floats(8.0, 64.0),
        st.floats(0.5, 4.0),
        st.booleans(),
        st.integers(16, 8192),
    ),  # fmt: skip
    st.builds(
        lambda s, low, gap, original: {
            "rope_type": "llama3",
            "factor": s,
            "low_freq_factor": low,
            "high_freq_factor": low + gap,
            "original_max_position_embeddings": original,
        },
        numbers,
        st.floats(0.5, 4.0),
        st.floats(0.5, 8.0),
        st.integers(16, 8192),
    ),  # fmt: skip
    st.builds(
        lambda p, s: {"rope_type": "proportional", "partial_rotary_factor": p, "factor": s},
        st.sampled_from([0.25, 0.5, 0.75, 1.0]),
        numbers,
    ),  # fmt: skip
)


@settings(max_examples=200, deadline=None)
@given(
    SCALINGS,
    st.sampled_from([8, 16, 32, 64, 80, 96, 128, 256]),
    st.sampled_from([10_000.0, 500_000.0, 1_000_000.0, 50_000.0, 2.0]),
    st.one_of(st.none(), st.integers(1, 100_000)),
)
def test_random_configurations_bit_equal_to_transformers(scaling, head_dim, base, seq_len):
    expected = reference(head_dim, scaling, base=base, seq_len=seq_len)
    actual = posenc.rope_inv_freq(
        head_dim, base, scaling=scaling, seq_len=seq_len, max_position_embeddings=ORIGINAL
    )
    assert torch.equal(actual[0], expected[0]) and actual[1] == expected[1]


def test_default_matches_llama_bit_for_bit():
    config = LlamaConfig(hidden_size=256, num_attention_heads=2, head_dim=128)
    expected, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    actual, our_factor = posenc.rope_inv_freq(128)
    assert torch.equal(actual, expected) and our_factor == factor == 1.0


# ── configs as transformers' own classes store them ─────────────────────────


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_configs_of_every_family_give_transformers_frequencies(family):
    config = family.config()
    rotary = hf_rotary(family.package, config)
    for layer_type in layer_types(config):
        prefix = "" if layer_type is None else f"{layer_type}_"
        expected = getattr(rotary, f"{prefix}inv_freq")
        expected_factor = getattr(rotary, f"{prefix}attention_scaling")
        ours = posenc_rope(config, layer_type)
        assert torch.equal(ours.inv_freq, expected), layer_type
        assert ours.attention_factor == expected_factor, layer_type
        assert ours.rotary_dim == 2 * expected.shape[0]  # transformers' cos.shape[-1]


def test_partial_rotary_factor_at_one_in_the_dict_rotates_the_whole_head():
    config = Family("phi3", "phi3", "Phi3Config", {}).config()
    assert config.rope_parameters["partial_rotary_factor"] == 1.0
    assert posenc_rope(config, None).rotary_dim == 16


def test_odd_width_follows_transformers_rule_or_says_what_to_pass():
    # head_dim 50 × 0.5 = 25: transformers computes base^(-2i/25) for i < 13 and rotates 26.
    for scaling in (
        {"rope_type": "default", "partial_rotary_factor": 0.5},
        {"rope_type": "linear", "factor": 2.0, "partial_rotary_factor": 0.5},
        {"rope_type": "dynamic", "factor": 2.0, "partial_rotary_factor": 0.5},
    ):
        rope = posenc.RotaryEmbedding(50, scaling=scaling, max_position_embeddings=ORIGINAL)
        expected, _ = reference(50, scaling)
        assert torch.equal(rope.inv_freq, expected) and rope.rotary_dim == 26
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    with pytest.raises(ValueError, match=r"partial_rotary_factor.*even.*int\(50 × 0.5\) = 25"):
        posenc.RotaryEmbedding(50, scaling={**yarn, "partial_rotary_factor": 0.5})


def test_dynamic_takes_the_trained_length_from_max_position_embeddings():
    dynamic = {"rope_type": "dynamic", "factor": 2.0}
    with pytest.raises(ValueError, match="max_position_embeddings must be given"):
        posenc.rope_inv_freq(16, scaling=dynamic)
    expected = reference(16, dynamic, seq_len=200)
    actual = posenc.rope_inv_freq(16, scaling=dynamic, seq_len=200, max_position_embeddings=64)
    assert torch.equal(actual[0], expected[0])
    with pytest.raises(ValueError, match="max_position_embeddings must equal"):
        posenc.rope_inv_freq(
            16,
            scaling={**dynamic, "original_max_position_embeddings": 32},
            max_position_embeddings=64,
        )


def test_longrope_without_factor_derives_it_from_the_lengths():
    scaling = longrope(16)
    del scaling["factor"]
    with pytest.raises(ValueError, match="factor.*max_position_embeddings"):
        posenc.rope_inv_freq(16, scaling=scaling)
    expected = reference(16, scaling, max_positions=8 * ORIGINAL)
    actual = posenc.rope_inv_freq(16, scaling=scaling, max_position_embeddings=8 * ORIGINAL)
    assert torch.equal(actual[0], expected[0]) and actual[1] == expected[1]
    # given an attention factor, no factor is needed at all
    posenc.rope_inv_freq(16, scaling={**scaling, "attention_factor": 1.2})


@pytest.mark.parametrize(
    ("scaling", "pattern"),
    [
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8,
          "short_factor": [1.0]}, r"rope_type 'yarn'.*\['short_factor'\]"),
        ({"rope_type": "default", "factor": 2.0}, r"'default'.*\['factor'\].*without 'rope_type'"),
        ({"rope_type": "linear", "factor": 2.0, "low_freq_factor": 1.0}, "low_freq_factor"),
        ({"factor": 2.0}, r"\['factor'\]"),  # no rope_type: 'default', as in transformers
        ({"rope_type": "linear", "type": "yarn", "factor": 2.0}, r"scaling\['type'\]"),
        ({"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0}, r"base must equal"),
        ({"full_attention": {"rope_type": "default"}}, r"rope_parameters\['full_attention'\]"),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8,
          "beta_fast": 1.0, "beta_slow": 2.0}, "beta_fast"),
        ({"rope_type": "default", "max_position_embeddings": 9}, "max_position_embeddings"),
    ],
)  # fmt: skip
def test_keys_are_checked_per_rope_type_and_contradictions_refused(scaling, pattern):
    with pytest.raises(ValueError, match=pattern):
        posenc.rope_inv_freq(16, 10000.0, scaling=scaling, max_position_embeddings=10)


def test_ignore_keys_pass_over_model_keys_but_never_ones_the_type_reads():
    scaling = {"rope_type": "default", "partial_rotary_factor": 0.5, "mrope_section": [1, 1, 2]}
    with pytest.raises(ValueError, match="mrope_section.*ignore_keys="):
        posenc.RotaryEmbedding(16, scaling=scaling)
    # GLM's config lists partial_rotary_factor in ignore_keys_at_rope_validation: still read
    rope = posenc.RotaryEmbedding(
        16, scaling=scaling, ignore_keys={"mrope_section", "partial_rotary_factor"}
    )
    assert rope.rotary_dim == 8


def test_rope_theta_is_the_default_base():
    rope = posenc.RotaryEmbedding(16, scaling={"rope_type": "default", "rope_theta": 5e5})
    assert rope.base == 5e5
    assert torch.equal(rope.inv_freq, posenc.default_inv_freq(16, 5e5))


def test_scaling_is_parsed_once(monkeypatch):
    scaling = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8}
    rope = posenc.RotaryEmbedding(8, scaling=scaling)
    parsed = posenc.RopeScaling.from_dict(scaling)
    assert rope.scaling == parsed and parsed.length_dependent
    assert posenc.RopeScaling.from_dict(parsed) is parsed

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(posenc.RopeScaling, "from_dict", no_parsing)
    q = torch.randn(1, 2, 20, 8)
    rope(q, q)  # past the trained length: new frequencies, from the parsed spec
    rope(q, q, torch.arange(20))


def test_tensor_seq_len_is_never_read_on_the_host():
    # A meta tensor has no values: any host read (.item(), bool(), an `if`) would raise.
    for scaling, max_positions in [
        ({"rope_type": "dynamic", "factor": 2.0}, 64),
        (longrope(16), None),
    ]:
        seq_len = torch.tensor(100, device="meta")
        inv_freq, _ = posenc.rope_inv_freq(
            16, scaling=scaling, seq_len=seq_len, max_position_embeddings=max_positions
        )
        assert inv_freq.device.type == "meta" and inv_freq.shape == (8,)


@pytest.mark.parametrize("length", [10, 64, 65, 200])
def test_tensor_seq_len_gives_what_transformers_forward_computes(length):
    # transformers' forward passes seq_len = max(position_ids) + 1 as a tensor.
    config = quietly(
        lambda: LlamaConfig(
            hidden_size=64, num_attention_heads=4, max_position_embeddings=64,
            rope_parameters={"rope_type": "dynamic", "factor": 4.0},
        )
    )  # fmt: skip
    rotary = LlamaRotaryEmbedding(config)
    rotary(torch.zeros(1), torch.arange(length)[None])
    actual, _ = posenc.rope_inv_freq(
        16, scaling=config.rope_parameters, seq_len=torch.tensor(length),
        max_position_embeddings=64,
    )  # fmt: skip
    assert torch.equal(actual, rotary.inv_freq)


def test_legacy_type_key_is_accepted():
    new = posenc.rope_inv_freq(32, scaling={"rope_type": "linear", "factor": 2.0})
    old = posenc.rope_inv_freq(32, scaling={"type": "linear", "factor": 2.0})
    assert torch.equal(new[0], old[0])


def test_linear_equals_scaled_positions():
    # (p/s)·θ == p·(θ/s): interpolating positions is scaling frequencies.
    theta = posenc.rope_inv_freq(16)[0]
    scaled = posenc.rope_inv_freq(16, scaling={"rope_type": "linear", "factor": 4.0})[0]
    torch.testing.assert_close(100 * scaled, (100 / 4) * theta)


@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0, 32.0, 40.0, 128.0])
def test_yarn_attention_factor_is_transformers(factor):
    scaling = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 64}
    assert posenc.rope_inv_freq(16, scaling=scaling)[1] == reference(16, scaling)[1]


@pytest.mark.parametrize("mscale", [0.0, 0.707, 1.0])
@pytest.mark.parametrize("factor", [0.5, 1.0, 1.5, 4.0, 40.0, 128.0])
def test_yarn_mscale_is_deepseeks(factor, mscale):
    # the function DeepSeek-V3's attention takes its softmax scale from
    assert posenc.yarn_mscale(factor, mscale) == yarn_get_mscale(factor, mscale)


def test_registry_takes_a_new_variant_and_rotary_embedding_uses_it():
    def slowed(dim, base, spec, seq_len, device):
        # a toy variant: every frequency divided by the dict's "slowdown"
        return posenc.default_inv_freq(dim, base, device=device) / spec.extra["slowdown"], 1.0

    def prepare(spec, max_position_embeddings):
        if not spec.extra.get("slowdown", 0) > 0:
            raise ValueError("scaling['slowdown'] must be > 0")
        return spec

    posenc.ROPE_SCALING["slowed"] = RopeVariant(slowed, frozenset({"slowdown"}), prepare)
    try:
        rope = posenc.RotaryEmbedding(16, scaling={"rope_type": "slowed", "slowdown": 4.0})
        linear = posenc.RotaryEmbedding(16, scaling={"rope_type": "linear", "factor": 4.0})
        q = torch.randn(1, 2, 7, 16)
        assert rope.rope_type == "slowed" and not rope.length_dependent
        torch.testing.assert_close(rope(q, q, offset=3), linear(q, q, offset=3), atol=0, rtol=0)
        with pytest.raises(ValueError, match="slowdown"):
            posenc.RotaryEmbedding(16, scaling={"rope_type": "slowed", "slowdown": -1})
        with pytest.raises(ValueError, match="'slowed'.*factor"):
            posenc.RotaryEmbedding(16, scaling={"rope_type": "slowed", "factor": 2.0})
    finally:
        del posenc.ROPE_SCALING["slowed"]
    with pytest.raises(ValueError, match="rope_type"):
        posenc.RotaryEmbedding(16, scaling={"rope_type": "slowed", "slowdown": 4.0})
