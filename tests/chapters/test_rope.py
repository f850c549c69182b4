"""Claims of the RoPE chapter (docs/chapters/05-rope*.md) beyond its printed output."""

from __future__ import annotations

import math
import runpy
from itertools import pairwise
from pathlib import Path

import pytest
import torch

import posenc
from tools import layout

CHAPTER = layout.find_chapter("rope")
SNIPPETS = CHAPTER.snippet_folder
PAGES = [CHAPTER.page("en"), CHAPTER.page("zh")]


def snippet(name: str) -> dict:
    return runpy.run_path(str(SNIPPETS / f"{name}.py"), run_name="snippet")


def test_the_pages_block_matrix_is_orthogonal() -> None:
    r = snippet("rotation")["rope_matrix"](123, 16)
    torch.testing.assert_close(r.T @ r, torch.eye(16), atol=1e-5, rtol=0)


def test_values_must_not_be_rotated() -> None:
    attend = snippet("rotation")["attend"]
    torch.testing.assert_close(attend(0, False), attend(37, False), atol=1e-5, rtol=0)
    assert not torch.allclose(attend(0, True), attend(37, True), atol=1e-3)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_periods_are_the_right_ones(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for base in (1e4, 1e6):
        slowest_period = 2 * math.pi * base ** (62 / 64)  # θ_31 = base^(-62/64), not 1/base
        assert f"{slowest_period:,.1f}" in text
    # the rough figures that circulate are shown only as the "1/base" comparison, never in the table
    assert "6,283,185.3" not in text and "period 6,283,185" in text


def test_slowest_frequency_is_not_one_over_base() -> None:
    for head_dim in (64, 128):
        for base in (1e4, 5e5, 1e6):
            slowest = posenc.default_inv_freq(head_dim, base)[-1].item()
            assert math.isclose(slowest, base ** (-(head_dim - 2) / head_dim), rel_tol=1e-6)
            assert slowest > 1.1 / base


@pytest.mark.parametrize("head_dim", [4, 8, 64, 128])
def test_layouts_are_the_same_map_up_to_the_permutation(head_dim: int) -> None:
    perm = posenc.interleaved_to_half_permutation(head_dim)
    x = torch.randn(2, 3, 9, head_dim)
    inter, _ = posenc.RotaryEmbedding(head_dim, layout="interleaved")(x, x)
    half, _ = posenc.RotaryEmbedding(head_dim, layout="half")(x[..., perm], x[..., perm])
    torch.testing.assert_close(half, inter[..., perm])
    assert torch.equal(perm[torch.argsort(perm)], torch.arange(head_dim))


def test_checkpoint_conversion_needs_the_permutation() -> None:
    layouts = snippet("layouts")
    ids = torch.randint(0, 50, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        reference = layouts["original"](ids)
        torch.testing.assert_close(layouts["converted"](True)(ids), reference, atol=1e-5, rtol=0)
        assert (layouts["converted"](False)(ids) - reference).abs().max() > 1e-2


def test_long_range_claims() -> None:
    long_range = snippet("long_range")
    bound = [long_range["paper_bound_shape"](r) for r in range(0, 4097, 64)]
    assert bound[0] == pytest.approx(16.5)
    assert any(b > a for a, b in pairwise(bound))  # decays, but not monotonically
    rotated_score = long_range["rotated_score"]
    ones = torch.ones(64)
    assert rotated_score(ones, ones, 0).item() / 64 == pytest.approx(1.0)
    assert rotated_score(ones, ones, 1024).item() / 64 < 0.3
    torch.manual_seed(1)
    q, k = torch.randn(2, 20_000, 64).unbind(0)
    for r in (0, 16, 1024, 4096):  # random q, k: mean 0 and std sqrt(d) at every distance
        scores = rotated_score(q, k, r)
        assert abs(scores.mean().item()) < 0.2
        assert scores.std().item() == pytest.approx(8.0, rel=0.03)


def test_precision_claims() -> None:
    cos_table = snippet("precision")["cos_table"]
    exact_freq = 1.0 / 10_000.0 ** (torch.arange(0, 64, 2, dtype=torch.float64) / 64)

    def error(position, dtype, method):
        exact = torch.cos(position * exact_freq)
        return (cos_table(position, dtype, method).double() - exact).abs().max().item()

    for position in (1_000, 32_000):
        assert error(position, torch.bfloat16, "right") < 0.004  # rounding of the final cast only
        assert error(position, torch.bfloat16, "naive") > 1.0  # noise
    assert math.isnan(error(1_000_000, torch.float16, "naive"))  # 1e6 overflows float16
    assert 0.005 < error(1_000_000, torch.float32, "right") < 0.05  # float32 itself runs out


def test_kv_cache_decoding_matches_the_full_pass() -> None:
    use = snippet("use")
    torch.testing.assert_close(use["decoded"], use["full"], atol=1e-5, rtol=0)
    assert use["cache"][0].shape[2] == 10
