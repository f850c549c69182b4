"""Claims of the RoPE chapter (docs/chapters/05-rope*.md) that no printed output shows, checked
against independent references: transformers 5.23 (Llama, Qwen2, Phi, GPT-NeoX, GPT-J),
Meta's complex-number code rewritten from llama/model.py, RoFormer's bound written from
§3.4.3 in numpy, and plain linear algebra."""

from __future__ import annotations

import math
import runpy
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import (
    GPTNeoXConfig,
    LlamaConfig,
    PhiConfig,
    PhiForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama
from transformers.models.phi import modeling_phi
from transformers.models.qwen2 import modeling_qwen2

import posenc
from tools import layout

CHAPTER = layout.find_chapter("rope")
SNIPPETS = CHAPTER.snippet_folder
PAGES = [CHAPTER.page("en"), CHAPTER.page("zh")]


def snippet(name: str) -> dict:
    return runpy.run_path(str(SNIPPETS / f"{name}.py"), run_name="snippet")


# ── #from-shift: chapter 2's code is a fixed vector turned by the position ─────────────────


def test_sinusoidal_code_is_pe0_turned_by_the_position():
    """In complex form (cos + i sin) pair i of PE(p) is e^{i p omega_i}: PE(p) = M_p PE(0)."""
    d, positions = 16, torch.arange(300)
    pe = posenc.sinusoidal(positions, d, dtype=torch.float64)  # pairs (sin, cos)
    omega = 10_000.0 ** (-np.arange(0, d, 2) / d)
    expected = np.exp(1j * positions.numpy()[:, None] * omega)
    as_complex = pe[:, 1::2].numpy() + 1j * pe[:, 0::2].numpy()
    np.testing.assert_allclose(as_complex, expected, atol=1e-4)  # float32 angles


def test_added_code_is_relative_only_if_the_weights_commute_with_the_rotations():
    d = 16
    pe = posenc.sinusoidal(1100, d, dtype=torch.float64)

    def position_term(a: torch.Tensor, m: int, n: int) -> float:  # PE(m)^T A PE(n)
        return (pe[m] @ a @ pe[n]).item()

    identity = torch.eye(d, dtype=torch.float64)  # commutes with every rotation
    generator = torch.Generator().manual_seed(0)
    weights = torch.randn(d, d, dtype=torch.float64, generator=generator)  # W_q^T W_k
    pairs = [(3, 1), (40, 38), (1000, 998)]
    assert np.ptp([position_term(identity, m, n) for m, n in pairs]) < 1e-4
    assert np.ptp([position_term(weights, m, n) for m, n in pairs]) > 0.1


# ── #only-rotations: powers of one orthogonal matrix, nothing else ───────────────────────────


def _scores(maps, q, k, pairs):
    return [(maps(m) @ q) @ (maps(n) @ k) for m, n in pairs]


def test_powers_of_any_orthogonal_matrix_are_relative_and_other_orthogonal_maps_are_not():
    d, pairs = 6, [(2, 0), (9, 7), (57, 55)]
    generator = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, d, dtype=torch.float64, generator=generator)
    one, _ = torch.linalg.qr(torch.randn(d, d, dtype=torch.float64, generator=generator))
    reflection = one @ torch.diag(torch.tensor([1.0, 1, 1, 1, 1, -1], dtype=torch.float64))
    # one of the two has determinant -1: powers of a reflection pass too (the ±1 axes)
    assert torch.linalg.det(one) * torch.linalg.det(reflection) < 0
    for a1 in (one, reflection):
        scores = _scores(lambda m, a1=a1: torch.linalg.matrix_power(a1, m), q, k, pairs)
        assert max(scores) - min(scores) < 1e-9
    per_position = {}  # orthogonal at every position, but not the powers of one matrix

    def unrelated(m: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(100 + m)
        return per_position.setdefault(
            m, torch.linalg.qr(torch.randn(d, d, dtype=torch.float64, generator=g))[0]
        )

    scores = _scores(unrelated, q, k, pairs)
    assert max(scores) - min(scores) > 0.1


def test_an_orthogonal_matrix_is_rotations_in_some_orthonormal_basis():
    """Orthogonal matrices are normal with eigenvalues e^{±i theta} (and ±1): in the basis of
    their real and imaginary eigenvector parts they are 2x2 rotations by those angles."""
    generator = torch.Generator().manual_seed(1)
    a1, _ = torch.linalg.qr(torch.randn(7, 7, dtype=torch.float64, generator=generator))
    values, vectors = np.linalg.eig(a1.numpy())
    np.testing.assert_allclose(np.abs(values), 1, atol=1e-12)
    j = int(
        np.argmax(values.imag)
    )  # one pair e^{±i theta}: u + i w with a1 (u + i w) = e^{i theta} (u + i w)
    u, w = vectors[:, j].real, vectors[:, j].imag
    theta = np.angle(values[j])
    basis = np.stack((u, -w), axis=1)
    block = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    np.testing.assert_allclose(a1.numpy() @ basis, basis @ block, atol=1e-12)
    np.testing.assert_allclose(u @ w, 0, atol=1e-12)  # the two basis vectors are orthogonal


# ── #rotation, #norm-and-values ───────────────────────────────────────────────────────────────


def test_the_pages_block_matrix_is_orthogonal():
    r = snippet("rotation")["rope_matrix"](123, 16)
    torch.testing.assert_close(r.T @ r, torch.eye(16), atol=1e-5, rtol=0)


def test_values_must_not_be_rotated():
    attend = snippet("rotation")["attend"]
    torch.testing.assert_close(attend(0, False), attend(37, False), atol=1e-5, rtol=0)
    assert not torch.allclose(attend(0, True), attend(37, True), atol=1e-3)


# ── #frequencies: the slowest frequency is b^-(d-2)/d in released code ──────────────────────


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_periods_are_the_right_ones(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for base in (1e4, 1e6):
        slowest_period = 2 * math.pi * base ** (62 / 64)  # θ_31 = base^(-62/64), not 1/base
        assert f"{slowest_period:,.1f}" in text
    # 2πb appears only as the comparison in the warning box, never as a period in the table
    assert "6,283,185.3" not in text and "2πb = 6,283,185" in text


@pytest.mark.parametrize("head_dim, base", [(64, 1e4), (128, 5e5), (128, 1e6)])
def test_released_code_stops_at_b_to_the_minus_d_minus_2_over_d(head_dim, base):
    config = LlamaConfig(
        hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": base},
    )  # fmt: skip
    inv_freq, _ = modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    meta = 1.0 / (base ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    assert torch.equal(inv_freq, meta)  # Meta's precompute_freqs_cis, llama/model.py L100
    slowest = inv_freq[-1].item()
    assert math.isclose(slowest, base ** (-(head_dim - 2) / head_dim), rel_tol=1e-6)
    assert math.isclose(slowest * base, base ** (2 / head_dim), rel_tol=1e-6)
    assert slowest > 1.1 / base


def test_with_partial_rotary_d_is_the_rotated_width():
    """GPT-NeoX: frequencies over the rotated dimensions (24 of 96 for GPT-NeoX-20B)."""
    config = GPTNeoXConfig(hidden_size=6144, num_attention_heads=64, rotary_pct=0.25)
    rotary = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    assert rotary.inv_freq.shape == (12,)  # 24 rotated dimensions, 12 pairs
    assert math.isclose(rotary.inv_freq[-1].item(), 10_000 ** (-22 / 24), rel_tol=1e-6)
    ours = posenc.RotaryEmbedding(96, rotary_dim=24)
    torch.testing.assert_close(ours.inv_freq, rotary.inv_freq, atol=0, rtol=1e-7)


# ── #layouts: released layouts, and converting a checkpoint ──────────────────────────────────


def test_meta_complex_form_is_the_interleaved_layout():
    """llama/model.py apply_rotary_emb (L132-L161), rewritten: (batch, seq, heads, head_dim)."""
    torch.manual_seed(0)
    batch, seq, heads, head_dim = 2, 11, 3, 16
    xq = torch.randn(batch, seq, heads, head_dim)
    freqs = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    freqs_cis = torch.polar(torch.ones(seq, head_dim // 2), torch.outer(torch.arange(seq), freqs))
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    meta = torch.view_as_real(xq_ * freqs_cis.view(1, seq, 1, head_dim // 2)).flatten(3)
    ours, _ = posenc.RotaryEmbedding(head_dim, layout="interleaved")(
        xq.transpose(1, 2), xq.transpose(1, 2)
    )
    torch.testing.assert_close(ours.transpose(1, 2), meta, atol=1e-6, rtol=0)


def test_gptj_is_interleaved_and_llama_is_half():
    torch.manual_seed(0)
    q = torch.randn(1, 2, 9, 8)  # (batch, heads, seq, head_dim)
    positions = torch.arange(9)
    sin, cos = torch.split(modeling_gptj.create_sinusoidal_positions(9, 8)[positions], 4, dim=-1)
    gptj = modeling_gptj.apply_rotary_pos_emb(q.transpose(1, 2), sin[None], cos[None])
    interleaved, _ = posenc.RotaryEmbedding(8, layout="interleaved")(q, q)
    torch.testing.assert_close(interleaved, gptj.transpose(1, 2), atol=1e-6, rtol=0)
    emb = torch.cat((positions[:, None] * posenc.default_inv_freq(8),) * 2, dim=-1)
    llama, _ = modeling_llama.apply_rotary_pos_emb(q, q, emb.cos()[None], emb.sin()[None])
    half, _ = posenc.RotaryEmbedding(8, layout="half")(q, q)
    torch.testing.assert_close(half, llama, atol=1e-6, rtol=0)


def test_layouts_are_the_same_map_up_to_the_permutation():
    for head_dim in (4, 8, 64, 128):
        perm = posenc.interleaved_to_half_permutation(head_dim)
        x = torch.randn(2, 3, 9, head_dim)
        inter, _ = posenc.RotaryEmbedding(head_dim, layout="interleaved")(x, x)
        half, _ = posenc.RotaryEmbedding(head_dim, layout="half")(x[..., perm], x[..., perm])
        torch.testing.assert_close(half, inter[..., perm])


def _interleaved_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """transformers' apply_rotary_pos_emb with GPT-J's pairs (2i, 2i+1) instead of halves."""
    half = cos.shape[-1] // 2  # transformers' tables are cat(freqs, freqs)
    cos = cos[..., :half].repeat_interleave(2, -1).unsqueeze(unsqueeze_dim)
    sin = sin[..., :half].repeat_interleave(2, -1).unsqueeze(unsqueeze_dim)

    def rotate_every_two(x):
        return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)

    return q * cos + rotate_every_two(q) * sin, k * cos + rotate_every_two(k) * sin


def _tiny(model_class, config):
    torch.manual_seed(0)
    model = model_class(config).eval()
    with torch.no_grad():
        for module in model.modules():  # biases start at 0: make them matter
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                module.bias.normal_(0, 0.5)
    return model


def _to_half(model, head_dim, rotated, weights=True, biases=True):
    """A copy of the state dict with the q/k rows of the rotated slice moved to the half layout."""
    perm = torch.cat(
        (posenc.interleaved_to_half_permutation(rotated), torch.arange(rotated, head_dim))
    )
    state = {name: t.clone() for name, t in model.state_dict().items()}
    for name, tensor in state.items():
        if not any(p in name for p in ("q_proj", "k_proj")):
            continue
        if (name.endswith("weight") and weights) or (name.endswith("bias") and biases):
            rows = tensor.view(-1, head_dim, *tensor.shape[1:])
            state[name] = rows[:, perm].reshape(tensor.shape)
    return state


def _logits(model, ids, module=None):
    with torch.no_grad():
        if module is None:
            return model(ids).logits
        stock = module.apply_rotary_pos_emb
        module.apply_rotary_pos_emb = _interleaved_apply_rotary_pos_emb
        try:
            return model(ids).logits
        finally:
            module.apply_rotary_pos_emb = stock


def test_qwen2_conversion_needs_the_biases_permuted():
    config = Qwen2Config(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        attn_implementation="eager", initializer_range=0.3,
    )  # fmt: skip
    original = _tiny(Qwen2ForCausalLM, config)  # as if trained with interleaved pairs
    ids = torch.randint(0, 64, (2, 13), generator=torch.Generator().manual_seed(1))
    reference = _logits(original, ids, modeling_qwen2)
    head_dim = config.hidden_size // config.num_attention_heads
    converted = Qwen2ForCausalLM(config).eval()  # stock transformers: rotate_half
    converted.load_state_dict(_to_half(original, head_dim, head_dim))
    torch.testing.assert_close(_logits(converted, ids), reference, atol=1e-5, rtol=0)
    converted.load_state_dict(_to_half(original, head_dim, head_dim, biases=False))
    assert (_logits(converted, ids) - reference).abs().max() > 0.1


def test_phi_conversion_permutes_only_the_rotated_slice():
    config = PhiConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, max_position_embeddings=64, attn_implementation="eager",
        initializer_range=0.3,
    )  # fmt: skip
    assert config.rope_parameters["partial_rotary_factor"] == 0.5  # half of each head
    original = _tiny(PhiForCausalLM, config)
    ids = torch.randint(0, 64, (2, 13), generator=torch.Generator().manual_seed(1))
    reference = _logits(original, ids, modeling_phi)
    head_dim = config.hidden_size // config.num_attention_heads
    converted = PhiForCausalLM(config).eval()
    converted.load_state_dict(_to_half(original, head_dim, head_dim // 2))
    torch.testing.assert_close(_logits(converted, ids), reference, atol=1e-5, rtol=0)
    converted.load_state_dict(_to_half(original, head_dim, head_dim))  # the whole head: wrong
    assert (_logits(converted, ids) - reference).abs().max() > 0.1


# ── #decay: RoFormer's bound, from the paper's formula ───────────────────────────────────────


def _paper_bound_factor(r: int, d: int = 64) -> float:
    """(1/(d/2)) sum_{j=1}^{d/2} |S_j|, S_j = sum_{i<j} e^{i r theta_i} (RoFormer eq. 37)."""
    theta = 10_000.0 ** (-2 * np.arange(d // 2) / d)
    return float(np.abs(np.cumsum(np.exp(1j * r * theta))).mean())


def test_the_bound_holds_for_posenc_scores_and_its_factor_is_not_monotone():
    rotated_score = snippet("long_range")["rotated_score"]
    d = 64
    theta = 10_000.0 ** (-2 * np.arange(d // 2) / d)
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 200, d))
    for r in (0, 3, 50, 700, 3000):
        # the paper's pairs (2i, 2i+1); posenc's "half" layout pairs (i, i + d/2): reorder
        half = np.concatenate((np.arange(0, d, 2), np.arange(1, d, 2)))
        score = rotated_score(torch.from_numpy(q[:, half]), torch.from_numpy(k[:, half]), r).numpy()
        h = (q[:, 0::2] + 1j * q[:, 1::2]) * (k[:, 0::2] - 1j * k[:, 1::2])
        np.testing.assert_allclose(score, (h * np.exp(1j * r * theta)).real.sum(1), atol=1e-3)
        h = np.concatenate((h, np.zeros((200, 1))), axis=1)  # h_{d/2} = 0
        bound = np.abs(np.diff(h, axis=1)).max(1) * _paper_bound_factor(r) * (d // 2)
        assert np.all(np.abs(score) <= bound)
    factors = [_paper_bound_factor(r) for r in range(0, 4097)]
    assert factors[0] == pytest.approx(16.5)
    rises = [r for r, (a, b) in enumerate(pairwise(factors), 1) if b > a]
    assert rises[0] == 12  # the page: first rises at r = 12
    assert int(np.argmax(factors[256:])) + 256 == 1835 and factors[1835] > 1.9 * factors[256]


def test_aligned_score_falls_and_random_scores_do_not():
    rotated_score = snippet("long_range")["rotated_score"]
    ones = torch.ones(64, dtype=torch.float64)
    aligned = [rotated_score(ones, ones, r).item() / 64 for r in (0, 1024, 4096)]
    expected = [np.cos(r * 10_000.0 ** (-2 * np.arange(32) / 64)).mean() for r in (0, 1024, 4096)]
    np.testing.assert_allclose(aligned, expected, atol=1e-5)
    torch.manual_seed(1)
    q, k = torch.randn(2, 20_000, 64, dtype=torch.float64).unbind(0)
    for r in (0, 16, 1024, 4096):  # random q, k: mean 0 and std sqrt(d) at every distance
        scores = rotated_score(q, k, r)
        assert abs(scores.mean().item()) < 0.2
        assert scores.std().item() == pytest.approx(8.0, rel=0.03)


# ── #partial-rotary, #precision, #using-it ──────────────────────────────────────────────────


def test_partial_rotary_is_gpt_neox_partial_rotary():
    torch.manual_seed(0)
    q = torch.randn(1, 2, 10, 64)
    emb = torch.cat((torch.arange(10)[:, None] * posenc.default_inv_freq(16),) * 2, dim=-1)
    neox, _ = modeling_gpt_neox.apply_rotary_pos_emb(q, q, emb.cos()[None], emb.sin()[None])
    ours, _ = posenc.RotaryEmbedding(64, rotary_dim=16)(q, q)
    torch.testing.assert_close(ours, neox, atol=1e-6, rtol=0)


def test_transformers_llama_also_computes_the_tables_in_float32():
    config = LlamaConfig(hidden_size=128, num_attention_heads=2, head_dim=64)
    rotary = modeling_llama.LlamaRotaryEmbedding(config)
    positions = torch.tensor([[1_000, 32_000]])
    cos, _ = rotary(torch.zeros(1, dtype=torch.bfloat16), positions)
    exact = torch.cos(
        positions[0, :, None].double() * (10_000.0 ** (-torch.arange(0, 64, 2).double() / 64))
    )
    assert cos.dtype == torch.bfloat16
    assert (cos[0, :, :32].double() - exact).abs().max() < 0.004  # only the final cast's rounding


def test_precision_claims():
    errors = snippet("precision")["errors"]
    for column in (0, 1):  # positions 1k and 32k
        assert errors[torch.bfloat16, "right"][column] < 0.004  # rounding of the final cast
        assert errors[torch.bfloat16, "naive"][column] > 1.0  # noise
    assert math.isnan(errors[torch.float16, "naive"][2])  # 1e6 overflows float16
    assert 0.005 < errors[torch.float32, "right"][2] < 0.05  # float32 itself runs out


def test_kv_cache_decoding_matches_the_full_pass():
    use = snippet("use")
    torch.testing.assert_close(use["decoded"], use["full"], atol=1e-5, rtol=0)
    assert use["cache"][0].shape[2] == 10
