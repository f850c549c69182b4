"""Bad input raises a clear ValueError/TypeError that names the argument."""
# ruff: noqa: E501  (one case per line reads best as a table)

import pytest
import torch

import posenc

YARN = {"rope_type": "yarn", "factor": 4.0}  # no original_max_position_embeddings
rope = posenc.RotaryEmbedding(8)
q4 = torch.randn(1, 2, 3, 8)

CASES = [
    ("odd head_dim", lambda: posenc.RotaryEmbedding(7), ValueError, "head_dim"),
    ("rotary_dim > head_dim", lambda: posenc.RotaryEmbedding(8, rotary_dim=16), ValueError, "rotary_dim"),
    ("odd rotary_dim", lambda: posenc.RotaryEmbedding(8, rotary_dim=3), ValueError, "rotary_dim"),
    ("unknown layout", lambda: posenc.RotaryEmbedding(8, layout="gptj"), ValueError, "layout.*'half'"),
    ("compiled not a bool", lambda: posenc.RotaryEmbedding(8, compiled="yes"), TypeError, "compiled must be True or False"),
    ("unknown layout (pure)", lambda: posenc.apply_rotary(q4, q4, q4, layout="x"), ValueError, "layout"),
    ("unknown rope_type", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "ntk"}), ValueError, "rope_type.*yarn"),
    ("missing rope_type", lambda: posenc.rope_inv_freq(8, scaling={"factor": 2.0}), ValueError, "rope_type"),
    ("unknown scaling key", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factr": 2}), ValueError, "factr"),
    ("factor <= 0", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": 0}), ValueError, "factor"),
    ("missing YaRN keys", lambda: posenc.rope_inv_freq(8, scaling=YARN), ValueError, "original_max_position_embeddings"),
    ("missing llama3 keys", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "llama3", "factor": 8.0}), ValueError, "low_freq_factor"),
    ("longrope factor length", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "longrope", "short_factor": [1.0], "long_factor": [1.0] * 4, "original_max_position_embeddings": 8, "factor": 2.0}), ValueError, "short_factor"),
    ("scaling not a dict", lambda: posenc.rope_inv_freq(8, scaling="linear"), TypeError, "scaling"),
    ("base <= 0", lambda: posenc.rope_inv_freq(8, base=-1.0), ValueError, "base"),
    ("num_heads < 1", lambda: posenc.alibi_slopes(0), ValueError, "num_heads"),
    ("num_heads not int", lambda: posenc.alibi_slopes(4.0), TypeError, "num_heads"),
    ("negative positions", lambda: rope(q4, q4, torch.tensor([0, -1, 2])), ValueError, "positions"),
    ("float positions", lambda: rope(q4, q4, torch.tensor([0.0, 1.0, 2.0])), TypeError, "positions"),
    ("positions length != seq", lambda: rope(q4, q4, torch.arange(4)), ValueError, "positions.*seq"),
    ("positions batch mismatch", lambda: rope(q4, q4, torch.arange(3).expand(2, 3)), ValueError, "positions"),
    ("mismatched q/k seq", lambda: rope(q4, torch.randn(1, 2, 4, 8)), ValueError, "k must have q's"),
    ("k heads do not divide q heads", lambda: rope(torch.randn(1, 3, 3, 8), q4), ValueError, "heads"),
    ("wrong rank", lambda: rope(torch.randn(2, 3, 8), q4), ValueError, "q must have 4 dimensions"),
    ("q last dim != head_dim", lambda: rope(torch.randn(1, 2, 3, 6), q4), ValueError, "head_dim"),
    ("non-floating q", lambda: rope(q4.long(), q4), TypeError, "q must be a floating"),
    ("q_len > k_len causal", lambda: posenc.attention(torch.randn(1, 2, 5, 8), q4, q4), ValueError, "q_len"),
    ("q_len > k_len alibi bias", lambda: posenc.alibi_bias(2, 5, 3), ValueError, "q_len"),
    ("slopes of wrong shape", lambda: posenc.attention(q4, q4, q4, alibi_slopes=torch.ones(3)), ValueError, "alibi_slopes"),
    ("bias does not broadcast", lambda: posenc.attention(q4, q4, q4, bias=torch.zeros(4, 4)), ValueError, "bias"),
    ("unknown backend", lambda: posenc.attention(q4, q4, q4, backend="xformers"), ValueError, "backend"),
    ("flex with a bias", lambda: posenc.attention(q4, q4, q4, bias=torch.zeros(3, 3), backend="flex"), ValueError, "flex"),
    ("non-floating v", lambda: posenc.attention(q4, q4, q4.int()), TypeError, "v must be a floating"),
    ("sequence longer than learned table", lambda: posenc.LearnedPositionalEmbedding(4, 8)(torch.randn(1, 5, 8)), ValueError, "max_positions"),
    ("learned dim mismatch", lambda: posenc.LearnedPositionalEmbedding(4, 8)(torch.randn(1, 2, 6)), ValueError, "dim"),
    ("odd sinusoidal dim", lambda: posenc.sinusoidal(4, 5), ValueError, "dim"),
    ("float sinusoidal positions", lambda: posenc.sinusoidal(torch.tensor([0.5]), 4), TypeError, "positions"),
    ("negative int positions", lambda: posenc.sinusoidal(-3, 4), ValueError, "positions"),
    ("non-tensor relative_position", lambda: posenc.t5_relative_bucket([1, 2]), TypeError, "relative_position"),
    ("odd bidirectional buckets", lambda: posenc.t5_relative_bucket(torch.arange(3), num_buckets=7), ValueError, "num_buckets"),
    ("max_distance too small", lambda: posenc.T5RelativeBias(2, num_buckets=32, max_distance=4), ValueError, "max_distance"),
    ("shaw max_relative_position < 1", lambda: posenc.ShawRelativeEmbedding(0, 4), ValueError, "max_relative_position"),
    ("permutation of odd dim", lambda: posenc.interleaved_to_half_permutation(5), ValueError, "head_dim"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "pattern"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_raises_a_clear_error(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_there_are_at_least_twenty_kinds():
    assert len(CASES) >= 20
