"""rope_inv_freq against transformers' ROPE_INIT_FUNCTIONS, every scaling type."""

import math
import warnings

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

import posenc

ORIGINAL = 64


def reference(head_dim, scaling, *, base=10000.0, seq_len=None):
    """transformers' (inv_freq, attention_factor) for a config that carries `scaling`."""
    # transformers' `dynamic` reads the trained length from max_position_embeddings.
    max_positions = ORIGINAL if scaling["rope_type"] == "dynamic" else 4 * ORIGINAL
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LlamaConfig(
            hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim,
            max_position_embeddings=max_positions,
            rope_parameters={**scaling, "rope_theta": base},
        )  # fmt: skip
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
    ("longrope", None),
    ("longrope", 2 * ORIGINAL),
]  # fmt: skip


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize(("scaling", "seq_len"), CASES)
def test_matches_transformers(head_dim, scaling, seq_len):
    if scaling == "longrope":
        scaling = longrope(head_dim)
    expected_freq, expected_factor = reference(head_dim, scaling, base=50000.0, seq_len=seq_len)
    actual_freq, actual_factor = posenc.rope_inv_freq(
        head_dim, base=50000.0, scaling=scaling, seq_len=seq_len
    )
    assert actual_freq.dtype == torch.float32
    torch.testing.assert_close(actual_freq, expected_freq, atol=1e-6, rtol=0)
    assert actual_factor == pytest.approx(expected_factor, abs=1e-6)


def test_default_matches_llama_bit_for_bit():
    config = LlamaConfig(hidden_size=256, num_attention_heads=2, head_dim=128)
    expected, factor = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    actual, our_factor = posenc.rope_inv_freq(128)
    assert torch.equal(actual, expected) and our_factor == factor == 1.0


def test_legacy_type_key_is_accepted():
    new = posenc.rope_inv_freq(32, scaling={"rope_type": "linear", "factor": 2.0})
    old = posenc.rope_inv_freq(32, scaling={"type": "linear", "factor": 2.0})
    assert torch.equal(new[0], old[0])


def test_linear_equals_scaled_positions():
    # (p/s)·θ == p·(θ/s): interpolating positions is scaling frequencies.
    theta = posenc.rope_inv_freq(16)[0]
    scaled = posenc.rope_inv_freq(16, scaling={"rope_type": "linear", "factor": 4.0})[0]
    torch.testing.assert_close(100 * scaled, (100 / 4) * theta)


def test_yarn_attention_factor_formula():
    _, factor = posenc.rope_inv_freq(
        16, scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64}
    )
    assert factor == pytest.approx(0.1 * math.log(8.0) + 1.0)
