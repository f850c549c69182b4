"""Claims of chapter 14 "RoPE in compressed attention: MLA" beyond its printed output.

The references are transformers' own DeepSeek-V3 code (5.23, the version requirements.lock
pins), built from `DeepseekV3Config` with tiny random weights (no download), and the formulas
of DeepSeek's reference code (deepseek-ai/DeepSeek-V3 inference/model.py), written out here:
never posenc checked against itself.
"""

from __future__ import annotations

import math
import runpy

import pytest
import torch
from transformers import DeepseekV3Config
from transformers.cache_utils import DynamicCache
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.deepseek_v3 import modeling_deepseek_v3 as ds

import posenc
from tools import layout

CHAPTER = layout.find_chapter("decoupled-rope")
HEADS, NOPE, ROPE, V_DIM, LATENT, Q_LATENT, HIDDEN = 4, 8, 4, 6, 12, 16, 48


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "mla.py"), run_name="snippet")


def v3_rope(**changes) -> dict:
    """DeepSeek-V3's rope_scaling (config.json) in transformers' rope_parameters form."""
    rope = {
        "rope_type": "yarn",
        "rope_theta": 10000.0,
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    }
    rope.update(changes)
    return {k: v for k, v in rope.items() if v is not None}


def tiny_config(**changes) -> DeepseekV3Config:
    settings = dict(
        vocab_size=32, hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=HEADS,
        q_lora_rank=Q_LATENT, kv_lora_rank=LATENT, qk_nope_head_dim=NOPE, qk_rope_head_dim=ROPE,
        v_head_dim=V_DIM, num_hidden_layers=1, max_position_embeddings=4096 * 40,
        rope_parameters=v3_rope(), attn_implementation="eager",
    )  # fmt: skip
    settings.update(changes)
    return DeepseekV3Config(**settings)


def deepseek_mscale(scale: float, mscale: float) -> float:
    """DeepSeek-V3 inference/model.py L436: 0.1 * mscale * ln(rope_factor) + 1."""
    return 0.1 * mscale * math.log(scale) + 1.0


def random_attention(config: DeepseekV3Config) -> ds.DeepseekV3Attention:
    torch.manual_seed(0)
    attn = ds.DeepseekV3Attention(config, layer_idx=0).double().eval()
    with torch.no_grad():
        for norm in (attn.q_a_layernorm, attn.kv_a_layernorm):  # not all ones
            norm.weight.uniform_(0.5, 1.5)
    return attn


def absorbed_mla(attn, h: torch.Tensor, positions: torch.Tensor, layout: str) -> torch.Tensor:
    """MLA as the chapter writes it: cache the latent c and one rotated key k^R, fold W^UK into
    the query and W^UV after the weights, rotate the 64 (here 4) dimensions with posenc."""
    b, s, _ = h.shape
    q = attn.q_b_proj(attn.q_a_layernorm(attn.q_a_proj(h))).view(b, s, HEADS, NOPE + ROPE)
    q_nope, q_rope = q.transpose(1, 2).split([NOPE, ROPE], dim=-1)  # (b, H, s, .)
    c, k_rope = attn.kv_a_proj_with_mqa(h).split([LATENT, ROPE], dim=-1)
    c = attn.kv_a_layernorm(c)  # (b, s, LATENT): the latent
    inv_freq, factor = posenc.rope_inv_freq(ROPE, scaling=attn.config.rope_parameters)
    cos, sin = posenc.rotary_cos_sin(
        positions, inv_freq, layout=layout, attention_factor=factor, dtype=h.dtype
    )
    q_rope = posenc.apply_rotary(q_rope, cos, sin, layout=layout)
    k_rope = posenc.apply_rotary(k_rope[:, None], cos, sin, layout=layout)  # (b, 1, s, ROPE)
    w = attn.kv_b_proj.weight.view(HEADS, NOPE + V_DIM, LATENT)
    w_uk, w_uv = w[:, :NOPE], w[:, NOPE:]
    q_latent = torch.einsum("bhsd,hdc->bhsc", q_nope, w_uk)  # W^UK absorbed into the query
    rope = attn.config.rope_parameters
    scale = (NOPE + ROPE) ** -0.5 * deepseek_mscale(rope["factor"], rope["mscale_all_dim"]) ** 2
    scores = (q_latent @ c[:, None].transpose(-1, -2) + q_rope @ k_rope.transpose(-1, -2)) * scale
    weights = scores.softmax(dim=-1)
    out = torch.einsum("bhst,btc,hvc->bshv", weights, c, w_uv)  # W^UV applied after the weights
    return attn.o_proj(out.reshape(b, s, HEADS * V_DIM))


def transformers_mla(attn, h: torch.Tensor, positions: torch.Tensor, cache=None) -> torch.Tensor:
    rotary = ds.DeepseekV3RotaryEmbedding(attn.config).double()
    cos_sin = rotary(h, positions[None])
    out, _ = attn(h, cos_sin, attention_mask=None, past_key_values=cache)
    return out


# -- sections "Compressing the cache" and "The decoupled key" ------------------------------------


@pytest.mark.parametrize("interleave", [True, False])
def test_absorbed_mla_with_posenc_equals_transformers(interleave: bool) -> None:
    """The two-part score (absorbed latent part + shared rotated key) with posenc's rotation gives
    transformers' DeepseekV3Attention output. With rope_interleave=True (the default, matching
    DeepSeek's released weights) the layout is "interleaved"; the half layout then differs."""
    config = tiny_config(rope_interleave=interleave)
    attn = random_attention(config)
    torch.manual_seed(1)
    h = torch.randn(2, 7, HIDDEN, dtype=torch.float64)  # different tokens
    positions = torch.arange(3, 10)  # not starting at 0
    with torch.no_grad():
        expected = transformers_mla(attn, h, positions)
        right = "interleaved" if interleave else "half"
        wrong = "half" if interleave else "interleaved"
        torch.testing.assert_close(absorbed_mla(attn, h, positions, right), expected)
        assert not torch.allclose(absorbed_mla(attn, h, positions, wrong), expected, atol=1e-4)


def test_deepseek_v3_config_defaults_are_the_page_numbers() -> None:
    """kv_lora_rank 512, q_lora_rank 1536, 128 + 64 query-key dimensions, v 128, 128 heads,
    61 layers, rope_interleave True: transformers' DeepseekV3Config defaults (those of
    DeepSeek-V3's config.json and of the reference config_671B.json)."""
    config = DeepseekV3Config()
    assert (config.kv_lora_rank, config.q_lora_rank) == (512, 1536)
    assert (config.qk_nope_head_dim, config.qk_rope_head_dim, config.v_head_dim) == (128, 64, 128)
    assert config.qk_head_dim == 192
    assert (config.num_attention_heads, config.num_hidden_layers) == (128, 61)
    assert config.rope_interleave is True


# -- section "What the cache holds" --------------------------------------------------------------


def test_transformers_caches_the_latent_and_one_shared_rotated_key() -> None:
    """transformers 5.23 keeps kv_lora_rank + qk_rope_head_dim numbers per token and layer: the
    normalised latent and one rotated key for all heads (a single "head" in the cache)."""
    config = tiny_config()
    attn = random_attention(config)
    cache = DynamicCache(config=config)
    h = torch.randn(1, 5, HIDDEN, dtype=torch.float64)
    with torch.no_grad():
        transformers_mla(attn, h, torch.arange(5), cache=cache)
    latent, rotated = cache.layers[0].keys, cache.layers[0].values
    assert latent.shape == (1, 1, 5, LATENT) and rotated.shape == (1, 1, 5, ROPE)
    c = attn.kv_a_layernorm(attn.kv_a_proj_with_mqa(h)[..., :LATENT])
    torch.testing.assert_close(latent[:, 0], c)  # the latent itself, not keys


def test_cache_sizes_are_deepseek_v2_table_1(snippet: dict) -> None:
    """MLA caches (d_c + d_h^R) = 576 numbers per token and layer, 9/2 d_h, 'equal to GQA with
    only 2.25 groups' (DeepSeek-V2 §2.1.4, Table 1); MHA 2 n_h d_h."""
    sizes = snippet["cache_per_token"]()
    assert sizes["MLA"] == 512 + 64 == 4.5 * 128 == 2.25 * 2 * 128
    assert sizes["MHA"] == 2 * 128 * 128


# -- section "YaRN and mscale" ----------------------------------------------------------------


def test_softmax_scale_is_transformers_scaling_and_tables_are_unscaled(snippet: dict) -> None:
    """With DeepSeek-V3's rope_scaling and 192 query-key dimensions, transformers'
    DeepseekV3Attention.scaling equals the page's softmax scale 192^-1/2 * 1.8739, and the
    rotary tables carry a factor of exactly 1.0; the same for DeepSeek-V2's 0.707/0.707."""
    for mscale in (1.0, 0.707):
        rope = v3_rope(mscale=mscale, mscale_all_dim=mscale)
        config = tiny_config(num_attention_heads=1, qk_nope_head_dim=128, qk_rope_head_dim=64,
                             rope_parameters=rope)  # fmt: skip
        attn = ds.DeepseekV3Attention(config, layer_idx=0)
        assert attn.scaling == pytest.approx(snippet["softmax_scale"](rope), rel=1e-12)
        assert attn.scaling == pytest.approx(192**-0.5 * deepseek_mscale(40, mscale) ** 2)
        assert ds.DeepseekV3RotaryEmbedding(config).attention_scaling == 1.0
    assert round(snippet["softmax_scale"](v3_rope()), 4) == 0.1352


def test_yarn_frequencies_equal_transformers_and_deepseek_ramp() -> None:
    """posenc's frequencies for the 64 rotated dimensions equal transformers' bit for bit; by
    DeepSeek's find_correction_range (floor/ceil), pairs 0-10 keep their frequency and 23-31
    are divided by 40."""
    config = tiny_config(num_attention_heads=1, qk_rope_head_dim=64)
    reference = ds.DeepseekV3RotaryEmbedding(config).inv_freq
    inv_freq, factor = posenc.rope_inv_freq(64, scaling=config.rope_parameters)
    assert torch.equal(inv_freq, reference) and factor == 1.0

    def correction_dim(rotations: float) -> float:  # inference/model.py L327
        return 64 * math.log(4096 / (rotations * 2 * math.pi)) / (2 * math.log(10000))

    low, high = math.floor(correction_dim(32)), math.ceil(correction_dim(1))
    assert (low, high) == (10, 23)
    base = 10000 ** -(torch.arange(0, 64, 2, dtype=torch.float32) / 64)
    torch.testing.assert_close(reference[: low + 1], base[: low + 1])
    torch.testing.assert_close(reference[high:], base[high:] / 40)
    ratio = reference / base
    assert ((ratio[low + 1 : high] < 1) & (ratio[low + 1 : high] > 1 / 40)).all()  # blended


def test_plain_yarn_puts_the_temperature_on_the_tables_only() -> None:
    """Without the mscale keys, transformers' YaRN multiplies cos and sin by 0.1 ln 40 + 1
    (so the rotated part of a score by its square) and DeepseekV3Attention keeps 192^-1/2:
    the 'cos/sin only' column of the common mistake."""
    rope = v3_rope(mscale=None, mscale_all_dim=None)
    config = tiny_config(num_attention_heads=1, qk_nope_head_dim=128, qk_rope_head_dim=64,
                         rope_parameters=rope)  # fmt: skip
    _, factor = ROPE_INIT_FUNCTIONS["yarn"](config)
    assert factor == pytest.approx(0.1 * math.log(40) + 1)
    assert ds.DeepseekV3Attention(config, layer_idx=0).scaling == pytest.approx(192**-0.5)
