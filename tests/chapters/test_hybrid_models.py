"""Claims of chapter 17 "Position in hybrid and linear-attention models" beyond its printed output.

The reference is transformers 5.23 (the version requirements.lock pins): its config classes,
whose defaults it documents for the released checkpoints, and the attention code of each
model, read back either from what the layer computes or from the order of the calls in its
forward pass.
"""

from __future__ import annotations

import inspect
import runpy

import pytest
import torch
import transformers
from transformers.models.falcon_h1 import modeling_falcon_h1
from transformers.models.gemma3 import modeling_gemma3
from transformers.models.granitemoehybrid import modeling_granitemoehybrid
from transformers.models.jamba import modeling_jamba
from transformers.models.kimi_linear import modeling_kimi_linear
from transformers.models.llama4 import modeling_llama4
from transformers.models.minimax import modeling_minimax
from transformers.models.nemotron_h import modeling_nemotron_h
from transformers.models.olmo2 import modeling_olmo2
from transformers.models.qwen3 import modeling_qwen3
from transformers.models.qwen3_next import modeling_qwen3_next

import posenc
from tests.lib.families import quietly
from tools import layout

CHAPTER = layout.find_chapter("hybrid-models")


def snippet(name: str) -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / name), run_name="snippet")


@pytest.fixture(scope="module")
def models() -> dict:
    return snippet("models.py")


@pytest.fixture(scope="module")
def recurrence() -> dict:
    return snippet("recurrence.py")


def forward_source(cls: type) -> str:
    return inspect.getsource(cls.forward)


# ── four hybrids ─────────────────────────────────────────────────────────────


def test_layer_patterns_are_those_transformers_builds(models):
    """Jamba (ai21labs/Jamba-v0.1) and Qwen3-Next (Qwen3-Next-80B-A3B-Instruct): transformers'
    defaults, documented for those checkpoints, repeat the page's unit over every layer."""
    for name, config in {
        "Jamba": transformers.JambaConfig(),
        "Qwen3-Next": transformers.Qwen3NextConfig(),
    }.items():
        unit = models["MODELS"][name]["unit"]
        assert config.layer_types == unit * (config.num_hidden_layers // len(unit))
    jamba, qwen = transformers.JambaConfig(), transformers.Qwen3NextConfig()
    assert (jamba.num_hidden_layers, jamba.mamba_d_conv) == (32, 4)
    assert jamba.hidden_size // jamba.num_attention_heads == models["MODELS"]["Jamba"]["head_dim"]
    assert (qwen.num_hidden_layers, qwen.head_dim, qwen.linear_conv_kernel_dim) == (48, 256, 4)
    assert qwen.rope_parameters["partial_rotary_factor"] == 0.25
    kimi = transformers.KimiLinearConfig()
    assert kimi.qk_nope_head_dim + kimi.qk_rope_head_dim == 192
    assert (kimi.num_hidden_layers, kimi.linear_conv_kernel_dim) == (27, 4)


def test_kimi_linear_reads_its_attention_layers_one_indexed():
    """The released config lists MLA layers 1-indexed in linear_attn_config; transformers
    turns layer 4 into index 3."""
    config = quietly(
        lambda: transformers.KimiLinearConfig(
            num_hidden_layers=8,
            linear_attn_config={"full_attn_layers": [4, 8], "kda_layers": [1, 2, 3, 5, 6, 7]},
        )
    )
    assert config.layer_types == (["linear_attention"] * 3 + ["full_attention"]) * 2


def test_no_rotation_in_jamba_and_kimi_linear_attention():
    """Their attention layers take no position embeddings and call no rotation."""
    for cls in (modeling_jamba.JambaAttention, modeling_kimi_linear.KimiLinearAttention):
        source = forward_source(cls)
        assert "position_embeddings" not in inspect.signature(cls.forward).parameters
        assert "rotary" not in source and "cos" not in source
    assert "rotary" not in inspect.getsource(modeling_kimi_linear).lower()
    assert " ".join(modeling_kimi_linear.KimiLinearAttention.__doc__.split()) == (
        "Multi-headed Latent Attention (MLA) from Deepseek V2 with NoPE, but the part of the keys"
        " where RoPE is applied is still shared."
    )  # the page quotes it whole


def test_qwen3_next_base_is_the_generic_default():
    """transformers' Qwen3NextConfig documents no rope_theta; its default is the generic 10000,
    not a value of the released checkpoint, so the page leaves the base out."""
    assert transformers.Qwen3NextConfig().rope_parameters["rope_theta"] == 10000.0
    doc = transformers.Qwen3NextConfig.__doc__
    entry = doc[doc.index("rope_parameters (") : doc.index("attention_bias (")]
    assert "defaults to" not in entry and "10000" not in entry  # no documented value


def test_three_more_mamba_hybrids(models):
    """Nemotron-H: no rotary code in the attention; Granite 4.0-H: RoPE only if
    position_embedding_type == "rope", default None; Falcon-H1: Mamba-2 and attention side by
    side in every layer, RoPE on the whole head; all three with a conv of 4."""
    attention = modeling_nemotron_h.NemotronHAttention
    assert "position_embeddings" not in inspect.signature(attention.forward).parameters
    assert "rotary" not in forward_source(attention) and "cos" not in forward_source(attention)
    assert "RotaryEmbedding" not in inspect.getsource(modeling_nemotron_h)
    assert transformers.GraniteMoeHybridConfig().position_embedding_type is None
    model_init = inspect.getsource(modeling_granitemoehybrid.GraniteMoeHybridModel.__init__)
    assert 'if config.position_embedding_type == "rope" else None' in model_init
    assert "if position_embeddings is not None:" in forward_source(
        modeling_granitemoehybrid.GraniteMoeHybridAttention
    )
    assert "apply_rotary_pos_emb(" in forward_source(modeling_falcon_h1.FalconH1Attention)
    layer = forward_source(modeling_falcon_h1.FalconH1DecoderLayer)
    assert "mamba_hidden_states + attention_hidden_states" in layer  # in parallel
    falcon = quietly(lambda: transformers.FalconH1Config(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1,
        intermediate_size=64, mamba_d_ssm=128, mamba_n_heads=8, mamba_d_head=16))  # fmt: skip
    assert modeling_falcon_h1.FalconH1RotaryEmbedding(falcon).inv_freq.numel() * 2 == 64 // 4
    convs = (
        transformers.NemotronHConfig().conv_kernel,
        transformers.GraniteMoeHybridConfig().mamba_d_conv,
        transformers.FalconH1Config().mamba_d_conv,
    )
    assert convs == (4, 4, 4)
    assert {rows["en"][1] for rows in models["OTHERS"].values()} == {"4"}


def test_rotation_in_qwen3_next_and_minimax_attention_only():
    """Their softmax layers rotate; their linear layers take no position embeddings."""
    for cls in (modeling_qwen3_next.Qwen3NextAttention, modeling_minimax.MiniMaxAttention):
        assert "apply_rotary_pos_emb(" in forward_source(cls)
    assert "apply_rotary_pos_emb" not in forward_source(modeling_qwen3_next.Qwen3NextGatedDeltaNet)
    assert "apply_rotary_pos_emb" not in forward_source(modeling_minimax.MiniMaxLightningAttention)
    assert (
        "position_embeddings"
        not in inspect.signature(modeling_qwen3_next.Qwen3NextGatedDeltaNet.forward).parameters
    )


def test_recurrent_layers_have_a_causal_short_convolution(recurrence):
    """Mamba in Jamba and Gated DeltaNet in Qwen3-Next: transformers' causal_conv1d_fn
    (depthwise, padded by kernel - 1, cut to the input length) computes the page's causal_conv."""
    x = torch.randn(20, 16, generator=torch.Generator().manual_seed(4))
    weight = recurrence["conv_weight"]  # (16, 1, 4)
    for module in (modeling_jamba, modeling_qwen3_next):
        theirs = module.causal_conv1d_fn(x.T[None], weight.squeeze(1))[0].T
        torch.testing.assert_close(theirs, recurrence["causal_conv"](x))
    assert "causal_conv1d_fn(" in forward_source(modeling_qwen3_next.Qwen3NextGatedDeltaNet)


def test_lightning_decay_is_an_alibi_bias_in_exponent(models):
    """transformers' lightning layer: slopes 2^(-8h/H) times a depth factor, and a decay
    matrix exp(-s (i - j)) below the diagonal, equal to exp of posenc's ALiBi bias."""
    config = transformers.MiniMaxConfig(
        hidden_size=64, num_attention_heads=8, num_hidden_layers=80, block_size=6
    )
    for layer in (0, 40, 78):
        module = modeling_minimax.MiniMaxLightningAttention(config, layer_idx=layer)
        slopes = models["lightning_slopes"](8, layer=layer, layers=80)
        torch.testing.assert_close(module.slope_rate.flatten(), slopes)
        ours = torch.exp(posenc.alibi_bias(8, 6, slopes=slopes)).tril()
        torch.testing.assert_close(module.diagonal_decay[0], ours)
    # MiniMax-Text-01's 64 heads at layer 78, the deepest lightning layer the page prints
    config = transformers.MiniMaxConfig(
        hidden_size=128, num_attention_heads=64, num_hidden_layers=80, block_size=4
    )
    module = modeling_minimax.MiniMaxLightningAttention(config, layer_idx=78)
    torch.testing.assert_close(module.slope_rate.flatten(), models["deepest"])
    assert 80 < 1 / models["deepest"][0] < 90 and 20_000 < 1 / models["deepest"][-1] < 21_000


# ── where the order comes from ───────────────────────────────────────────────


def test_the_scan_forgets_its_start(recurrence):
    """Two inputs that differ only before the last 3000 tokens: the scan's last output is the
    same within float32 (the slowest channel has decayed below rounding), the conv's exactly.
    The start's trace shrinks as a^t, whatever the number format."""
    gen = torch.Generator().manual_seed(3)
    tail = torch.randn(3000, 16, generator=gen)
    one = torch.cat([torch.randn(50, 16, generator=gen), tail])
    two = torch.cat([torch.randn(80, 16, generator=gen), tail])
    assert recurrence["decay"].max() < 0.99  # 0.99 ** 3000 < 1e-13
    scan = recurrence["scan"]
    assert torch.allclose(scan(one)[-1], scan(two)[-1], atol=1e-6)
    conv = recurrence["causal_conv"]
    assert torch.equal(conv(one)[-1], conv(two)[-1])


def test_the_count_rises_forever_in_exact_arithmetic(recurrence):
    """h_t = (1 - a^(t+1)) / (1 - a) strictly increases; only rounding stops it. In float64 it
    counts far longer than in float32, in float32 far longer than in bfloat16."""
    from fractions import Fraction

    a, h = Fraction(9, 10), Fraction(1)
    for _ in range(400):  # well past float32's 137
        new = a * h + 1
        assert new > h
        h = new
    last = recurrence["last_told_apart"]
    assert last(0.9, torch.float64) > last(0.9) > last(0.9, torch.bfloat16)


def test_a_bos_token_lets_causal_nope_attention_count(recurrence):
    """Chapter 1's counting head needs a token that differs; with the same token everywhere
    the page's causal NoPE layer tells 1 position apart, with a different first token more."""
    same = recurrence["same"].clone()
    same[0] = torch.randn(16, generator=torch.Generator().manual_seed(9))
    out = recurrence["LAYERS"]["NoPE attention, causal"](same)
    assert recurrence["positions_told_apart"](out) > 32


# ── QK-norm and RoPE ─────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("module", "cls", "norm", "rotation"),
    [
        (modeling_qwen3, "Qwen3Attention", "self.q_norm(", "apply_rotary_pos_emb("),
        (modeling_gemma3, "Gemma3Attention", "self.q_norm(", "apply_rotary_pos_emb("),
        (modeling_olmo2, "Olmo2Attention", "self.q_norm(", "apply_rotary_pos_emb("),
        (modeling_qwen3_next, "Qwen3NextAttention", "self.q_norm(", "apply_rotary_pos_emb("),
    ],
)
def test_norm_before_rotation(module, cls, norm, rotation):
    source = forward_source(getattr(module, cls))
    assert 0 <= source.index(norm) < source.index(rotation)


def test_of_the_hybrids_only_qwen3_next_normalises_queries_and_keys():
    for module, cls in [
        (modeling_jamba, "JambaAttention"),
        (modeling_minimax, "MiniMaxAttention"),
        (modeling_kimi_linear, "KimiLinearAttention"),
        (modeling_nemotron_h, "NemotronHAttention"),
        (modeling_granitemoehybrid, "GraniteMoeHybridAttention"),
        (modeling_falcon_h1, "FalconH1Attention"),
    ]:
        assert "q_norm" not in inspect.getsource(getattr(module, cls)), cls
    assert "self.q_norm(" in forward_source(modeling_qwen3_next.Qwen3NextAttention)


def test_llama4_normalises_after_rotation_without_weight_in_rope_layers_only():
    source = forward_source(modeling_llama4.Llama4TextAttention)
    # the default (use_qk_norm True) is documented for Scout; Maverick (128 experts) has none
    assert "the 128E model does not use qk_norm" in source
    assert "Llama-4-Scout-17B-16E" in (transformers.Llama4TextConfig.__doc__ or "")
    # NoPE layers scale each query by a factor that grows with its position (chapter 11)
    assert "if self.attn_temperature_tuning and not self.use_rope:" in source
    assert source.index("apply_rotary_emb(") < source.index("self.qk_norm(query_states)")
    norm = modeling_llama4.Llama4TextL2Norm(1e-5)
    assert not list(norm.parameters())  # no weight
    config = quietly(
        lambda: transformers.Llama4TextConfig(
            hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
            num_hidden_layers=4, intermediate_size=64, intermediate_size_mlp=64,
        )
    )  # fmt: skip
    assert config.use_qk_norm
    with_norm = [
        hasattr(modeling_llama4.Llama4TextAttention(config, i), "qk_norm") for i in range(4)
    ]
    assert with_norm == [True, True, True, False]  # layer 3 is NoPE (chapter 11)
    maverick_like = quietly(lambda: transformers.Llama4TextConfig(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_hidden_layers=4, intermediate_size=64, intermediate_size_mlp=64,
        use_qk_norm=False))  # fmt: skip
    assert not any(
        hasattr(modeling_llama4.Llama4TextAttention(maverick_like, i), "qk_norm") for i in range(4)
    )
    # no weight: normalising commutes with the rotation (RoPE keeps the norm)
    x = torch.randn(1, 1, 5, 16)
    rope = posenc.RotaryEmbedding(16, layout="interleaved")
    rotated_then_normed, _ = rope(norm(x), norm(x))
    torch.testing.assert_close(norm(rope(x, x)[0]), rotated_then_normed)


def test_norm_shapes_per_head_or_whole_projection():
    """Qwen3, Gemma 3, Qwen3-Next: one weight of head_dim shared by the heads; OLMo 2: one
    weight over all heads' channels; Gemma 3 scales by (1 + weight)."""
    qwen = transformers.Qwen3Config(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_hidden_layers=1, intermediate_size=64,
    )  # fmt: skip
    assert modeling_qwen3.Qwen3Attention(qwen, 0).q_norm.weight.shape == (16,)
    olmo = transformers.Olmo2Config(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                                    num_hidden_layers=1, intermediate_size=64)  # fmt: skip
    assert modeling_olmo2.Olmo2Attention(olmo, 0).q_norm.weight.shape == (64,)
    gemma = quietly(lambda: transformers.Gemma3TextConfig(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        num_hidden_layers=1, intermediate_size=64))  # fmt: skip
    q_norm = modeling_gemma3.Gemma3Attention(gemma, 0).q_norm
    assert q_norm.weight.shape == (16,) and torch.all(q_norm.weight == 0)  # 1 + 0 at init
    assert "1.0 + self.weight" in inspect.getsource(modeling_gemma3.Gemma3RMSNorm.forward)


def _spread_at_distance_5(q, k, before, after) -> float:
    rope = posenc.RotaryEmbedding(32)
    qs, ks = (before(x).expand(1, 1, 300, 32) for x in (q, k))
    qs, ks = rope(qs, ks)
    qs, ks = after(qs[0, 0]), after(ks[0, 0])
    diagonal = (qs @ ks.T).diagonal(-5)
    return (diagonal.max() - diagonal.min()).item()


@pytest.mark.parametrize("seed", range(5))
def test_a_weight_after_rope_breaks_the_relative_property_for_any_seed(seed):
    """The page's table on one seed; here five: the spread is large only for a per-channel
    weight after the rotation."""
    gen = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 32, generator=gen)
    weight = 1 + 0.5 * torch.randn(32, generator=gen)

    def scaled(x):
        return weight * x

    def identity(x):
        return x

    assert _spread_at_distance_5(q, k, scaled, identity) < 1e-3
    assert _spread_at_distance_5(q, k, identity, scaled) > 0.1
