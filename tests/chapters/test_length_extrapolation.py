"""Claims of chapter 7 "Length extrapolation for RoPE" beyond its printed output.

The references are independent of posenc: the formulas as the papers print them, Meta's and
MiniMind's own code (copied, with their URLs), transformers, and chapter 8's committed results.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import posenc
from experiments.extrapolation import results

LLAMA_31 = {
    "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}  # fmt: skip


def meta_apply_scaling(freqs: torch.Tensor) -> torch.Tensor:
    """Llama 3.1's scaling as Meta releases it, copied from
    https://github.com/meta-llama/llama-models/blob/a9c89c471f793423afd4cc3ca8671d6e56fe64cb/models/llama3/model.py#L45-L62
    """
    scale_factor, low_freq_factor, high_freq_factor, old_context_len = 8, 1, 4, 8192
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * torch.pi / freqs
    new_freqs = torch.where(wavelen > low_freq_wavelen, freqs / scale_factor, freqs)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    return torch.where(
        (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen),
        (1 - smooth) * new_freqs / scale_factor + smooth * new_freqs,
        new_freqs,
    )


def minimind_precompute_freqs_cis(dim, end=32 * 1024, rope_base=1e6, rope_scaling=None):
    """MiniMind's RoPE tables, copied from
    https://github.com/jingyaogong/minimind/blob/d65ef2c00ebc6082f9df11541e1b191655eddb00/model/model_minimind.py#L62-L78
    """
    freqs = 1.0 / (rope_base ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    attn_factor = 1.0
    if rope_scaling is not None:
        orig_max, factor, beta_fast, beta_slow, attn_factor = (
            rope_scaling.get("original_max_position_embeddings", 2048),
            rope_scaling.get("factor", 16),
            rope_scaling.get("beta_fast", 32.0),
            rope_scaling.get("beta_slow", 1.0),
            rope_scaling.get("attention_factor", 1.0),
        )
        if end / orig_max > 1.0:

            def inv_dim(b):
                return (dim * math.log(orig_max / (b * 2 * math.pi))) / (2 * math.log(rope_base))

            low = max(math.floor(inv_dim(beta_fast)), 0)
            high = min(math.ceil(inv_dim(beta_slow)), dim // 2 - 1)
            ramp = torch.arange(dim // 2, device=freqs.device).float() - low
            ramp = torch.clamp(ramp / max(high - low, 0.001), 0, 1)
            freqs = freqs * (1 - ramp + ramp / factor)
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    freqs_cos = torch.cat([torch.cos(freqs), torch.cos(freqs)], dim=-1) * attn_factor
    freqs_sin = torch.cat([torch.sin(freqs), torch.sin(freqs)], dim=-1) * attn_factor
    return freqs_cos, freqs_sin


MINIMIND = {
    "type": "yarn", "factor": 16, "original_max_position_embeddings": 2048,
    "beta_fast": 32, "beta_slow": 1, "attention_factor": 1.0,
}  # fmt: skip


def paper_by_parts(dim, base, original, factor, alpha=1.0, beta=32.0):
    """NTK-by-parts as YaRN prints it (arXiv:2309.00071, Eq. 17, 18, 20): (θ', γ)."""
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    r = original * theta / (2 * math.pi)
    gamma = ((r - alpha) / (beta - alpha)).clamp(0, 1)
    return (1 - gamma) * theta / factor + gamma * theta, gamma


def test_llama3_keeps_short_wavelengths_and_stretches_long_ones_by_the_factor() -> None:
    plain = posenc.rope_inv_freq(128, base=500000.0)[0]
    scaled = posenc.rope_inv_freq(128, base=500000.0, scaling=LLAMA_31)[0]
    wavelength = 2 * math.pi / plain
    short, long = wavelength < 8192 / 4, wavelength > 8192 / 1
    torch.testing.assert_close(scaled[short], plain[short])
    torch.testing.assert_close(scaled[long], plain[long] / 8)
    between = ~short & ~long
    assert between.any() and ((scaled[between] < plain[between]).all())
    assert (scaled[between] > plain[between] / 8).all()


def test_llama3_is_metas_apply_scaling() -> None:
    plain = posenc.rope_inv_freq(128, base=500000.0)[0]
    scaled, factor = posenc.rope_inv_freq(128, base=500000.0, scaling=LLAMA_31)
    torch.testing.assert_close(scaled, meta_apply_scaling(plain))
    assert factor == 1.0  # no attention temperature


def test_llama3_is_the_papers_by_parts_ramp_with_alpha_1_beta_4() -> None:
    paper, gamma = paper_by_parts(128, 500000.0, 8192, 8.0, alpha=1.0, beta=4.0)
    scaled = posenc.rope_inv_freq(128, base=500000.0, scaling=LLAMA_31)[0]
    assert ((gamma > 0) & (gamma < 1)).sum() == 6
    torch.testing.assert_close(scaled.double(), paper, rtol=1e-6, atol=0)


def test_pi_stretches_every_period_by_the_factor_and_ntk_only_the_slowest() -> None:
    plain = posenc.rope_inv_freq(64)[0]
    pi = posenc.rope_inv_freq(64, scaling={"rope_type": "linear", "factor": 4.0})[0]
    torch.testing.assert_close(pi, plain / 4)
    ntk_base = 10000.0 * 4 ** (64 / 62)  # NTK-aware: base·s^(d/(d-2))
    ntk = posenc.rope_inv_freq(64, base=ntk_base)[0]
    assert ntk[0] == plain[0]
    torch.testing.assert_close(ntk[-1], plain[-1] / 4)


def test_pi_without_fine_tuning_is_worse_than_nothing_at_twice_the_length_in_chapter_8() -> None:
    perplexity = {m: r["perplexity"] for m, r in results.load()["results"].items()}
    assert perplexity["rope+pi"]["256"] > perplexity["rope"]["256"]


@pytest.mark.parametrize(
    ("dim", "base", "original", "factor"),
    [(64, 1e4, 4096, 4.0), (128, 1e4, 4096, 16.0), (96, 1e6, 2048, 16.0), (128, 5e5, 8192, 8.0),
     (64, 1e4, 4096, 40.0), (32, 1e4, 512, 2.0)],
)  # fmt: skip
def test_yarn_code_ramp_agrees_with_the_paper_at_the_ends_only(dim, base, original, factor):
    scaling = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original}
    code = posenc.rope_inv_freq(dim, base=base, scaling=scaling)[0].double()
    paper, gamma = paper_by_parts(dim, base, original, factor)
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    code_gamma = (code - theta / factor) / (theta - theta / factor)
    ends = (gamma == 0) | (gamma == 1)
    # Every pair the paper keeps or divides by s, the code keeps or divides too, and back.
    torch.testing.assert_close(code[ends], paper[ends], rtol=1e-6, atol=0)
    code_ends = (code_gamma - code_gamma.round()).abs() < 1e-5
    assert torch.equal(code_ends, ends)
    # A pair that never turned within the trained length is divided by s: no new angles.
    r = original * theta / (2 * math.pi)
    torch.testing.assert_close(code[r < 1], theta[r < 1] / factor, rtol=1e-6, atol=0)
    # Inside the ramp the two differ.
    assert (~ends).any() and not torch.allclose(code[~ends], paper[~ends], rtol=1e-2)


def _tiny_deepseek(mscale: float, mscale_all_dim: float):
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
        DeepseekV3Attention,
        DeepseekV3RotaryEmbedding,
    )

    yarn = {
        "rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
        "beta_fast": 32, "beta_slow": 1, "mscale": mscale, "mscale_all_dim": mscale_all_dim,
        "rope_theta": 10000.0,
    }  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = DeepseekV3Config(
            vocab_size=64, hidden_size=64, intermediate_size=64, moe_intermediate_size=32,
            num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
            q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=128, qk_rope_head_dim=64,
            v_head_dim=16, max_position_embeddings=163840, rope_parameters=yarn,
        )  # fmt: skip
    rotary = DeepseekV3RotaryEmbedding(config)
    return yarn, rotary.attention_scaling, DeepseekV3Attention(config, layer_idx=0).scaling


def test_deepseek_v2_temperature_moves_into_the_softmax_scale() -> None:
    yarn, cos_sin_factor, softmax_scale = _tiny_deepseek(0.707, 0.707)
    per_side = 0.0707 * math.log(40) + 1  # DeepSeek-V2, arXiv:2405.04434 §3.1.4
    assert cos_sin_factor == 1.0
    assert posenc.rope_inv_freq(64, base=10000.0, scaling=yarn)[1] == 1.0
    assert math.isclose(softmax_scale, 192**-0.5 * per_side**2, rel_tol=1e-9)


def test_deepseek_rotated_and_plain_dimensions_get_their_own_temperature() -> None:
    yarn, cos_sin_factor, softmax_scale = _tiny_deepseek(1.0, 0.707)
    assert math.isclose(posenc.rope_inv_freq(64, base=10000.0, scaling=yarn)[1], cos_sin_factor)
    rotated = cos_sin_factor**2 * softmax_scale * 192**0.5  # q·k over the 64 rotated dims
    plain = softmax_scale * 192**0.5  # over the 128 dims without rotation
    assert math.isclose(rotated, (0.1 * 1.0 * math.log(40) + 1) ** 2, rel_tol=1e-9)
    assert math.isclose(plain, (0.1 * 0.707 * math.log(40) + 1) ** 2, rel_tol=1e-9)


def test_posenc_reads_minimind_as_minimind_does() -> None:
    cos, sin = minimind_precompute_freqs_cis(96, rope_scaling=MINIMIND)
    scaled, factor = posenc.rope_inv_freq(96, base=1e6, scaling=MINIMIND)
    # MiniMind's frequencies, recovered from its table at position 1 (cos, sin of θ'_i)
    minimind_freq = torch.atan2(sin[1, :48], cos[1, :48])
    torch.testing.assert_close(minimind_freq, scaled, rtol=1e-6, atol=0)
    assert factor == 1.0


def test_minimind_scaling_is_static_short_prompts_included() -> None:
    cos, _ = minimind_precompute_freqs_cis(96, rope_scaling=MINIMIND)
    plain = posenc.rope_inv_freq(96, base=1e6)[0]
    scaled = posenc.rope_inv_freq(96, base=1e6, scaling=MINIMIND)[0]
    prompt = torch.arange(100.0)[:, None]
    torch.testing.assert_close(cos[:100, :48], torch.cos(prompt * scaled), atol=1e-5, rtol=0)
    assert not torch.allclose(cos[:100, :48], torch.cos(prompt * plain), atol=1e-3)
    assert int(torch.isclose(scaled, plain / 16).sum()) == 27  # of 48 pairs


def test_transformers_dynamic_takes_the_trained_length_from_max_position_embeddings() -> None:
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    dynamic = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LlamaConfig(
            hidden_size=256, num_attention_heads=4, max_position_embeddings=4096,
            rope_parameters={**dynamic, "original_max_position_embeddings": 1024},
        )  # fmt: skip
    theirs = ROPE_INIT_FUNCTIONS["dynamic"](config, None, seq_len=8192)[0]
    as_4096 = {**dynamic, "original_max_position_embeddings": 4096}
    as_1024 = {**dynamic, "original_max_position_embeddings": 1024}
    torch.testing.assert_close(theirs, posenc.rope_inv_freq(64, scaling=as_4096, seq_len=8192)[0])
    assert not torch.allclose(theirs, posenc.rope_inv_freq(64, scaling=as_1024, seq_len=8192)[0])


def test_transformers_longrope_switches_the_angles_of_early_positions_too() -> None:
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    longrope = {
        "rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 64,
        "factor": 4.0, "short_factor": [1.0] * 32, "long_factor": [1.0 + i / 4 for i in range(32)],
    }  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LlamaConfig(
            hidden_size=256, num_attention_heads=4, max_position_embeddings=256,
            rope_parameters=longrope,
        )  # fmt: skip
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, 64)
    short_cos, _ = rotary(x, torch.arange(64)[None])  # sequence still within L0
    long_cos, _ = rotary(x, torch.arange(65)[None])  # one token more
    # Position 40 was rotated one way when it entered a cache, and is rotated another way now.
    assert not torch.allclose(short_cos[0, 40], long_cos[0, 40])
