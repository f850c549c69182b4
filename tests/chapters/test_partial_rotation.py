"""Claims of chapter 12 "Partial and proportional rotation" beyond its printed output.

The references are transformers 5.23's own code (the version requirements.lock pins): its
``proportional`` rope type, its GPT-NeoX, Phi, Phi-3, StableLM, GLM, Gemma 4 and LFM3 configs
and rotary modules, built from their config classes with no download; and the formula of
Google's reference p-RoPE (google-deepmind/gemma ``apply_rope(..., rope_proportion)``),
written out here with NumPy. Never posenc checked against itself.
"""

from __future__ import annotations

import json
import math
import runpy

import numpy as np
import pytest
import torch
from huggingface_hub.errors import StrictDataclassClassValidationError
from transformers import (
    GemmaConfig,
    GlmConfig,
    GPTNeoXConfig,
    Lfm3Config,
    LlamaConfig,
    Phi3Config,
    PhiConfig,
    StableLmConfig,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gemma4 import modeling_gemma4
from transformers.models.gemma4.configuration_gemma4 import Gemma4TextConfig
from transformers.models.glm import modeling_glm
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.phi import modeling_phi

import posenc
from experiments.extrapolation import train as chapter8
from experiments.extrapolation.corpus import load_splits
from tools import layout

CHAPTER = layout.find_chapter("partial-rotation")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "partial_rotation.py"), run_name="snippet")


@pytest.fixture(scope="module")
def experiment() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "experiment.py"), run_name="snippet")


def proportional_config(head_dim: int, proportion: float, theta: float, factor=None):
    parameters = {"rope_type": "proportional", "partial_rotary_factor": proportion,
                  "rope_theta": theta} | ({"factor": factor} if factor else {})  # fmt: skip
    return LlamaConfig(
        hidden_size=head_dim, num_attention_heads=1, head_dim=head_dim, rope_parameters=parameters
    )


# -- section "Two ways to leave pairs still" -----------------------------------------------------


@pytest.mark.parametrize(
    ("head_dim", "proportion", "factor"),
    [(16, 0.75, None), (64, 0.3, None), (128, 0.5, None), (512, 0.25, None), (512, 0.25, 8.0)],
)
def test_proportional_is_the_default_frequencies_with_zeros(head_dim, proportion, factor) -> None:
    """transformers' proportional type: the first int(p * head_dim // 2) frequencies of ordinary
    RoPE over the whole head (divided by factor), then zeros up to head_dim / 2."""
    config = proportional_config(head_dim, proportion, 10000.0, factor)
    reference, attention_factor = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    kept = int(proportion * head_dim // 2)
    assert reference.shape == (head_dim // 2,) and attention_factor == 1.0
    ladder = 10000.0 ** -(torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    torch.testing.assert_close(reference[:kept].double(), ladder[:kept] / (factor or 1.0))
    assert (reference[kept:] == 0).all()
    scaling = config.rope_parameters
    ours, _ = posenc.rope_inv_freq(head_dim, scaling=scaling)
    assert torch.equal(ours, reference)


def test_proportional_matches_googles_reference_p_rope() -> None:
    """google-deepmind/gemma apply_rope(rope_proportion): timescale base^(2i/head_dim) for the
    first int(p * head_dim // 2) pairs, padded with infinity (angle 0) for the others, then the
    split-halves rotation. Same rotation as posenc's proportional table."""
    head_dim, proportion, base = 64, 0.75, 10000.0
    rope_angles = int(proportion * head_dim // 2)
    exponents = (2.0 / head_dim) * np.arange(rope_angles, dtype=np.float64)
    timescale = np.pad(base**exponents, (0, head_dim // 2 - rope_angles), constant_values=np.inf)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, head_dim))
    positions = np.array([0, 1, 7, 300, 5000])
    angles = positions[:, None] / timescale
    first, second = np.split(x, 2, axis=-1)
    google = np.concatenate(
        [first * np.cos(angles) - second * np.sin(angles),
         second * np.cos(angles) + first * np.sin(angles)], axis=-1,
    )  # fmt: skip
    scaling = {"rope_type": "proportional", "partial_rotary_factor": proportion}
    rope = posenc.RotaryEmbedding(head_dim, base, scaling=scaling)
    cos, sin = rope.cos_sin(torch.from_numpy(positions))
    ours = posenc.apply_rotary(torch.from_numpy(x).float(), cos, sin)
    # float32 tables: the angle of position 5000 is rounded by a few 1e-4 radians
    np.testing.assert_allclose(ours.double().numpy(), google, rtol=0, atol=1e-3)
    still = np.r_[rope_angles : head_dim // 2, head_dim // 2 + rope_angles : head_dim]
    np.testing.assert_array_equal(google[:, still], x[:, still])  # angle 0: cos 1, sin 0
    assert torch.equal(ours[:, still], torch.from_numpy(x[:, still]).float())


def test_neox_partial_rotates_the_first_rotary_dim_dimensions_with_its_own_ladder() -> None:
    """GPT-NeoX in transformers: frequencies over rotary_dim = head_dim * rotary_pct (0.25 by
    default), the first rotary_dim dimensions turn and the others pass through unchanged."""
    config = GPTNeoXConfig(hidden_size=256, num_attention_heads=4)  # head_dim 64
    assert config.rope_parameters["partial_rotary_factor"] == 0.25
    rotary = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    ladder = 10000.0 ** -(torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    torch.testing.assert_close(rotary.inv_freq.double(), ladder)
    ours, _ = posenc.rope_inv_freq(64, scaling={"partial_rotary_factor": 0.25})
    assert torch.equal(ours, rotary.inv_freq)
    probes = torch.eye(64)[None, None]  # one unit vector per dimension, as 64 positions' queries
    cos, sin = rotary(probes, torch.tensor([[1] * 64]))
    turned, _ = modeling_gpt_neox.apply_rotary_pos_emb(probes, probes, cos, sin)
    changed = (turned != probes).any(-1)[0, 0]
    assert changed[:16].all() and not changed[16:].any()


def test_the_snippets_masks_agree_with_transformers_gemma_style_rotation(snippet) -> None:
    """The half layout with a proportional table (transformers' Gemma 4 apply_rotary_pos_emb):
    with p = 0.75 of 16 dimensions, pairs 0-5 turn, i.e. dimensions 0-5 and 8-13."""
    scaling = {"rope_type": "proportional", "partial_rotary_factor": 0.75}
    inv_freq, _ = posenc.rope_inv_freq(16, scaling=scaling)
    angles = inv_freq[None]  # position 1
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
    probes = torch.eye(16)
    turned = modeling_gemma4.apply_rotary_pos_emb(probes, cos, sin, unsqueeze_dim=0)
    changed = (turned.reshape(16, 16) != probes).any(-1)
    expected = [True] * 6 + [False] * 2 + [True] * 6 + [False] * 2
    assert changed.tolist() == expected == snippet["moves"](scaling).tolist()


# -- section "Which pairs carry position" ---------------------------------------------------------


def test_pairs_that_turn_less_than_once_in_4096_tokens() -> None:
    """Head of 128 at base 10 000: 18 pairs turn less than once in 4096 tokens; p = 0.75 drops
    the 16 slowest (2 slow ones stay); NeoX 25% keeps 4 slow pairs among its 16."""
    full = 10000.0 ** -(torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    slow = 4096 * full < 2 * math.pi
    assert int(slow.sum()) == 18 and slow[46:].all() and not slow[:46].any()
    neox = 10000.0 ** -(torch.arange(0, 32, 2, dtype=torch.float64) / 32)
    assert int((4096 * neox < 2 * math.pi).sum()) == 4
    assert int((4096 * full[:48] < 2 * math.pi).sum()) == 2


# -- section "transformers' proportional type" -----------------------------------------------------


def test_gemma4_global_layers_use_proportional_quarter_on_512_dims() -> None:
    """Gemma 4 (transformers): sliding layers ordinary RoPE, base 10 000, head_dim 256; full
    attention proportional, p = 0.25, base 10^6, head_dim 512; 64 of 256 frequencies non-zero,
    equal to posenc's; the other 384 dimensions leave transformers' rotation bit for bit."""
    config = Gemma4TextConfig()
    assert config.rope_parameters["sliding_attention"] == {"rope_type": "default",
                                                           "rope_theta": 10000.0}  # fmt: skip
    assert config.rope_parameters["full_attention"] == {
        "rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6,
    }  # fmt: skip
    assert config.per_layer_config["full_attention"].head_dim == 512
    assert config.per_layer_config["sliding_attention"].head_dim == 256
    assert config.layer_types[:6] == ["sliding_attention"] * 5 + ["full_attention"]
    rotary = modeling_gemma4.Gemma4TextRotaryEmbedding(config)
    global_freq = rotary.full_attention_inv_freq
    assert global_freq.shape == (256,) and int(global_freq.count_nonzero()) == 64
    assert rotary.sliding_attention_inv_freq.shape == (128,)
    ours, _ = posenc.rope_inv_freq(512, scaling=config.rope_parameters["full_attention"])
    assert torch.equal(ours, global_freq)
    torch.manual_seed(0)
    x = torch.randn(1, 1, 3, 512)
    cos, sin = rotary(x, torch.tensor([[5, 1000, 100_000]]), "full_attention")
    turned = modeling_gemma4.apply_rotary_pos_emb(x, cos, sin)
    still = torch.cat((torch.arange(64, 256), torch.arange(320, 512)))
    assert torch.equal(turned[..., still], x[..., still])
    assert (turned[..., 1:3, :64] != x[..., 1:3, :64]).all()


def test_lfm3_full_attention_layers_use_proportional_half() -> None:
    config = Lfm3Config()
    assert config.rope_parameters["full_attention"] == {
        "rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.5,
    }  # fmt: skip
    assert config.head_dim == 128


def test_proportional_without_a_factor_is_ordinary_rope() -> None:
    """transformers warns that a missing partial_rotary_factor defaults to 1.0: every pair
    turns, with the ordinary frequencies."""
    parameters = {"rope_type": "proportional", "rope_theta": 1e4}
    config = LlamaConfig(
        hidden_size=64, num_attention_heads=1, head_dim=64, rope_parameters=parameters
    )
    reference, _ = ROPE_INIT_FUNCTIONS["proportional"](config, "cpu")
    assert torch.equal(reference, posenc.default_inv_freq(64))


def test_proportional_equals_neox_partial_with_base_to_the_power_p() -> None:
    """After moving pairs (i, i + d/2) to (i, i + r/2), proportional(p, b) on d dimensions is
    transformers' GPT-NeoX rotation over r = p d dimensions with base b**p."""
    d, p, b = 512, 0.25, 1e6
    r = int(p * d)
    gemma = modeling_gemma4.Gemma4TextRotaryEmbedding(Gemma4TextConfig())
    neox_config = GPTNeoXConfig(hidden_size=d, num_attention_heads=1, rotary_pct=p,
                                rotary_emb_base=b**p)  # fmt: skip
    neox = modeling_gpt_neox.GPTNeoXRotaryEmbedding(neox_config)
    perm = torch.cat([torch.arange(0, r // 2), torch.arange(d // 2, d // 2 + r // 2),
                      torch.arange(r // 2, d // 2), torch.arange(d // 2 + r // 2, d)])  # fmt: skip
    torch.manual_seed(0)
    q, k = torch.randn(2, 1, 1, 8, d, dtype=torch.float64).unbind(0)
    positions = torch.tensor([[0, 3, 50, 700, 2000, 4095, 8000, 12000]])
    cos, sin = gemma(q, positions, "full_attention")
    q_g = modeling_gemma4.apply_rotary_pos_emb(q, cos, sin)
    k_g = modeling_gemma4.apply_rotary_pos_emb(k, cos, sin)
    cos, sin = neox(q, positions)
    q_n, k_n = modeling_gpt_neox.apply_rotary_pos_emb(q[..., perm], k[..., perm], cos, sin)
    scores_g, scores_n = q_g @ k_g.transpose(-1, -2), q_n @ k_n.transpose(-1, -2)
    assert (scores_g - scores_n).abs().max() < 2e-2  # float32 frequencies: rounding only
    assert (scores_g.abs().max()) > 20


# -- section "Which models rotate what" ------------------------------------------------------------


def test_family_defaults_and_rotated_widths() -> None:
    """transformers' defaults (kept for old checkpoints) and the widths the page derives."""
    assert StableLmConfig().rope_parameters["partial_rotary_factor"] == 0.25
    assert PhiConfig().rope_parameters["partial_rotary_factor"] == 0.5
    assert GlmConfig().rope_parameters["partial_rotary_factor"] == 0.5
    assert Phi3Config().rope_parameters["partial_rotary_factor"] == 1.0
    assert GemmaConfig().rope_parameters.get("partial_rotary_factor", 1.0) == 1.0
    # Phi-2's config: hidden 2560, 32 heads, partial_rotary_factor 0.4 -> 32 of 80 dimensions
    phi2 = PhiConfig(hidden_size=2560, num_attention_heads=32, partial_rotary_factor=0.4)
    assert modeling_phi.PhiRotaryEmbedding(phi2).inv_freq.shape == (16,)
    # StableLM 2: 2048 / 32 = 64 -> 16 rotated; 5120 / 32 = 160 -> 40 rotated
    assert int(2048 // 32 * 0.25) == 16 and int(5120 // 32 * 0.25) == 40


def test_phi3_longrope_factors_count_rotated_pairs() -> None:
    """Phi-4-mini's shape (hidden 3072, 24 heads, p = 0.75): transformers' Phi3Config wants 48
    LongRoPE factors, rotary_dim / 2, and refuses 64 (head_dim / 2)."""

    def config(count):
        return Phi3Config(
            hidden_size=3072, num_attention_heads=24, partial_rotary_factor=0.75,
            max_position_embeddings=131072,
            rope_parameters={"rope_type": "longrope", "short_factor": [1.0] * count,
                             "long_factor": [1.0] * count,
                             "original_max_position_embeddings": 4096},
        )  # fmt: skip

    config(48)
    with pytest.raises(StrictDataclassClassValidationError) as refused:
        config(64)
    assert isinstance(refused.value.__cause__, ValueError)
    assert "short_factor field must have length 48, got 64" in str(refused.value.__cause__)


def test_without_rope_type_a_partial_factor_means_neox() -> None:
    """Gemma 4's global numbers as a default-type dict: transformers' GPT-NeoX computes 64
    frequencies over 128 dimensions (not 256 over 512 with zeros), and so does posenc."""
    config = GPTNeoXConfig(hidden_size=512, num_attention_heads=1, rotary_pct=0.25,
                           rotary_emb_base=1e6)  # fmt: skip
    reference, _ = modeling_gpt_neox.GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    ladder = 1e6 ** -(torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    torch.testing.assert_close(reference.double(), ladder)
    ours, _ = posenc.rope_inv_freq(512, scaling={"partial_rotary_factor": 0.25, "rope_theta": 1e6})
    assert torch.equal(ours, reference)


def test_glm_rotates_the_first_half_in_adjacent_pairs() -> None:
    """transformers' GLM: partial_rotary_factor 0.5, frequencies over the rotated half, pairs
    (2i, 2i + 1) inside it; the second half passes through."""
    config = GlmConfig(hidden_size=256, num_attention_heads=2, head_dim=128)
    rotary = modeling_glm.GlmRotaryEmbedding(config)
    ladder = 10000.0 ** -(torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    torch.testing.assert_close(rotary.inv_freq.double(), ladder)
    probes = torch.eye(128)[None, None]
    cos, sin = rotary(probes, torch.tensor([[1] * 128]))
    turned, _ = modeling_glm.apply_rotary_pos_emb(probes, probes, cos, sin)
    assert (turned[0, 0, 64:] == probes[0, 0, 64:]).all()
    # dimension 0 turns into dimension 1 (its interleaved partner), not into dimension 32
    assert turned[0, 0, 0, 1] != 0 and turned[0, 0, 0, 32] == 0


# -- section "Measured on tiny models" -------------------------------------------------------------


def test_the_experiment_loop_is_chapter_8s(experiment) -> None:
    """With the ordinary RoPE and seed 0, the chapter's training loop gives exactly the losses
    of experiments/extrapolation/train.py's train() (tiny profile)."""
    torch.set_num_threads(1)
    train_ids, _ = load_splits()
    cfg = experiment["PROFILES"]["tiny"]
    _, theirs = chapter8.train("rope", train_ids, cfg)
    _, ours = experiment["train"]("rope", train_ids, cfg, 0)
    assert ours == theirs


def test_the_tiny_profile_runs_every_variant(experiment) -> None:
    report = experiment["run"]("tiny", log=lambda *a, **k: None)
    assert set(report["results"]) == set(experiment["VARIANTS"])
    for runs in report["results"].values():
        assert all(math.isfinite(v) for run in runs for v in run["perplexity"].values())


def test_its_configuration_is_the_one_the_page_names(experiment) -> None:
    """'2 heads of 32 dimensions and 400 steps, where chapter 8 trains 4 heads of 16 for 800
    steps': the configuration differs from chapter 8's, the variants differ only in RoPE."""
    from experiments.extrapolation.train import PROFILES as CHAPTER_8

    ours, theirs = experiment["PROFILES"]["full"], CHAPTER_8["full"]
    assert (ours["heads"], ours["dim"] // ours["heads"], ours["steps"]) == (2, 32, 400)
    assert (theirs["heads"], theirs["dim"] // theirs["heads"], theirs["steps"]) == (4, 16, 800)
    assert {method for method, _ in experiment["VARIANTS"].values()} <= {"rope", "nope"}


def test_committed_results_cover_every_variant_seed_and_length(experiment) -> None:
    """results.json: three seeds per variant, each model under a minute of CPU time."""
    report = json.loads((CHAPTER.snippet_folder / "results.json").read_text())
    assert report["profile"] == "full" and report["config"]["seeds"] == [0, 1, 2]
    full = experiment["PROFILES"]["full"]
    assert all(report["config"][key] == value for key, value in full.items())
    for name in experiment["VARIANTS"]:
        runs = report["results"][name]
        assert [run["seed"] for run in runs] == [0, 1, 2]
        for run in runs:
            assert set(run["perplexity"]) == {"128", "256", "512", "1024"}
            assert run["cpu_seconds"] < 60
