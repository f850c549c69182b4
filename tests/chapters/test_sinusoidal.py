"""Claims of chapter 2 "Sinusoidal encoding" beyond its printed output.

The references are other people's code, installed with transformers: DistilBERT's table (the
paper's interleaved layout), Marian's ([sin | cos], the paper's frequencies), FSMT's (a copy of
fairseq's SinusoidalPositionalEmbedding: [sin | cos], spacing 10000^(-i/(d/2-1))) and Llama's
RoPE frequencies.
"""

from __future__ import annotations

import runpy
import warnings

import pytest
import torch
from transformers import LlamaConfig
from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings
from transformers.models.fsmt.modeling_fsmt import SinusoidalPositionalEmbedding as FairseqTable
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

import posenc
from tools import layout

CHAPTER = layout.find_chapter("sinusoidal")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "sinusoidal.py"), run_name="snippet")


@pytest.mark.parametrize(("n", "d"), [(50, 8), (300, 64), (1000, 512)])
def test_the_table_is_the_papers_interleaved_table(n: int, d: int) -> None:
    """#formula: sines in dimension 2i, cosines in 2i + 1, omega_i = 10000^(-2i/d), as
    DistilBERT builds it (numpy, float64, another code path)."""
    reference = _create_sinusoidal_embeddings(n, d, torch.empty(n, d))
    torch.testing.assert_close(posenc.sinusoidal(n, d), reference, atol=2e-4, rtol=0)


@pytest.mark.parametrize(("n", "d"), [(50, 8), (300, 64), (1000, 512)])
def test_concatenated_tables_match_fairseq_and_marian(snippet, n: int, d: int) -> None:
    """#layouts: the snippet's [sin | cos] table with tensor2tensor's spacing is fairseq's (FSMT
    is a copy of it); with the paper's spacing it is Marian's, and the interleaved table with
    its dimensions reordered."""
    concatenated = snippet["sin_cos_concatenated"]
    fairseq = FairseqTable.get_embedding(n, d, padding_idx=None)
    torch.testing.assert_close(
        concatenated(n, d, spacing="tensor2tensor").float(), fairseq, atol=2e-4, rtol=0
    )
    marian = MarianSinusoidalPositionalEmbedding(n, d).create_weight()
    torch.testing.assert_close(concatenated(n, d).float(), marian, atol=2e-4, rtol=0)
    order = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))
    torch.testing.assert_close(posenc.sinusoidal(n, d)[:, order], marian, atol=2e-4, rtol=0)


def test_fairseq_spacing_is_lower_and_ends_at_one_ten_thousandth() -> None:
    """#layouts: 10000^(-i/(d/2-1)) equals the paper's frequency at i = 0, is lower after, and
    its last pair is exactly 1/10000, 3.5% below the paper's for d = 512."""
    inv = FairseqTable.get_embedding(2, 512, padding_idx=None)[1, :256].asin()  # sin(1 * omega)
    paper = 10000.0 ** (-torch.arange(256, dtype=torch.float64) * 2 / 512)
    assert inv[0].item() == pytest.approx(1.0, abs=1e-6)
    assert torch.all(inv[1:].double() < paper[1:])
    assert inv[-1].item() == pytest.approx(1e-4, rel=1e-4)
    assert 1 - inv[-1].item() / paper[-1].item() == pytest.approx(0.035, abs=0.001)


def test_properties_hold_for_the_fairseq_table_too() -> None:
    """#layouts: 'everything else on this page holds pair by pair': with fairseq's table, the
    dot product of two positions depends only on their offset and every row has length
    sqrt(d/2)."""
    table = FairseqTable.get_embedding(3000, 128, padding_idx=None).double()
    torch.testing.assert_close(table.norm(dim=-1), torch.full((3000,), 8.0, dtype=torch.float64))
    for offset in (1, 17, 400):
        dots = torch.stack([table[p] @ table[p + offset] for p in (0, 99, 1234, 2500)])
        torch.testing.assert_close(dots, dots[:1].expand(4), atol=2e-2, rtol=0)


@pytest.mark.parametrize(("k", "d"), [(1, 8), (13, 16), (250, 64)])
def test_one_rotation_shifts_every_position(snippet, k: int, d: int) -> None:
    """PE(p + k) = M_k PE(p) with the same M_k for every p, and M_k is a rotation."""
    m_k = snippet["shift_matrix"](k, d)
    table = posenc.sinusoidal(torch.arange(0, 3000, 37), d, dtype=torch.float64)
    shifted = posenc.sinusoidal(torch.arange(0, 3000, 37) + k, d, dtype=torch.float64)
    torch.testing.assert_close(table @ m_k.T, shifted, atol=1e-4, rtol=0)
    torch.testing.assert_close(m_k.T @ m_k, torch.eye(d, dtype=torch.float64))
    assert torch.linalg.det(m_k).item() == pytest.approx(1.0)


@pytest.mark.parametrize(("m", "n"), [(3, 10), (100, 7), (0, 513)])
def test_rotations_compose_to_the_offset(snippet, m: int, n: int) -> None:
    """#shift-is-rotation, the bridge to RoPE: M_m^T M_n = M_(n-m), so a score between a
    vector rotated by M_m and one rotated by M_n depends on n - m only."""
    shift = snippet["shift_matrix"]
    torch.testing.assert_close(shift(m, 32).T @ shift(n, 32), shift(n - m, 32))


@pytest.mark.parametrize("head_dim", [16, 64, 128])
def test_rope_uses_the_sinusoidal_frequencies(head_dim: int) -> None:
    """#shift-is-rotation: RoPE's default frequencies (transformers' Llama) are the omega_i of
    the sinusoidal table with d the head dimension: sin(p * theta_i) is dimension 2i."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = LlamaConfig(hidden_size=4 * head_dim, num_attention_heads=4, head_dim=head_dim)
    theta, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    positions = torch.arange(0, 2000, 7)
    table = posenc.sinusoidal(positions, head_dim)
    angles = positions[:, None].float() * theta
    torch.testing.assert_close(table[:, 0::2], angles.sin(), atol=1e-5, rtol=0)
    torch.testing.assert_close(table[:, 1::2], angles.cos(), atol=1e-5, rtol=0)


def test_dot_product_depends_only_on_the_offset() -> None:
    """PE(p)·PE(q) = Σ_i cos(ω_i (p − q)): the same for every pair with the same offset."""
    table = posenc.sinusoidal(4000, 128, dtype=torch.float64)
    for offset in (1, 17, 400):
        dots = torch.stack([table[p] @ table[p + offset] for p in (0, 99, 1234, 3000)])
        torch.testing.assert_close(dots, dots[:1].expand(4), atol=1e-3, rtol=0)


def test_scaling_by_sqrt_d_makes_the_token_dominate(snippet) -> None:
    """#embedding-scale, for other widths than the page's 512: with entries N(0, 1/d) the
    token row is about 1 long and PE(p) sqrt(d/2); unscaled, two different tokens at one
    position are almost parallel; scaled by sqrt(d), they are not."""
    cosine = snippet["mean_cosine"]
    for d in (128, 1024):
        torch.manual_seed(1)
        tokens = torch.randn(400, d, dtype=torch.float64) / d**0.5
        pe = posenc.sinusoidal(300, d, dtype=torch.float64)
        assert cosine(tokens[:200] + pe[250], tokens[200:] + pe[250]) > 0.95
        scaled = d**0.5 * tokens
        assert cosine(scaled[:200] + pe[250], scaled[200:] + pe[250]) < 0.5
