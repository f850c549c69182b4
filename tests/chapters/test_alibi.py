"""Claims of the ALiBi chapter (docs/chapters/06-alibi*.md) beyond its printed output.

The page must keep the paper's slopes (and show the growing rule only as the mistake), and the
prose claims about slopes, BLOOM's form and the bidirectional variant must hold.
"""

from __future__ import annotations

import math
import re
import runpy
from itertools import pairwise
from pathlib import Path

import pytest
import torch

import posenc
from tests.lib.references import press_get_slopes as independent_slopes
from tools import layout

CHAPTER = layout.find_chapter("alibi")
PAGES = [CHAPTER.page("en"), CHAPTER.page("zh")]


@pytest.fixture(scope="module")
def slopes_snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "slopes.py"), run_name="snippet")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_shows_the_papers_slopes(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for head, m in enumerate(independent_slopes(8), start=1):
        assert f"head {head}: m = 2^{math.log2(m):+.1f} = {m:.8f}" in text
    twelve = sorted(independent_slopes(12), reverse=True)
    assert "all 12, largest first: " + " ".join(f"{m:.4f}" for m in twelve) in text
    assert "heads 9-12 : 2^-0.5 2^-1.5 2^-2.5 2^-3.5" in text
    paper_line = re.search(r"^\s*paper : (.*?) \|", text, re.MULTILINE)
    assert paper_line, "the common-mistake box must show the paper's slopes next to the wrong ones"
    assert paper_line.group(1) == " ".join(f"{m:.4f}" for m in independent_slopes(8))
    wrong_line = re.search(r"^\s*wrong : (.*?) \|", text, re.MULTILINE)
    assert wrong_line and wrong_line.group(1) != paper_line.group(1)
    # the wrong values appear only inside the warning box, never as the slopes of a head
    assert "head 2: m = 2^+0.0" not in text and "head 8: m = 2^+2.0" not in text


@pytest.mark.parametrize("heads", [1, 2, 3, 5, 6, 8, 12, 16, 20, 24, 32, 40, 64, 96, 112])
def test_library_slopes_follow_the_paper(heads: int) -> None:
    torch.testing.assert_close(
        posenc.alibi_slopes(heads, dtype=torch.float64),
        torch.tensor(independent_slopes(heads), dtype=torch.float64),
    )


@pytest.mark.parametrize("heads", [4, 8, 16, 32, 64])
def test_power_of_two_slopes_fall_geometrically_from_ratio_to_one_256th(heads: int) -> None:
    slopes = posenc.alibi_slope_values(heads)
    ratio = 2 ** (-8 / heads)
    assert slopes[0] == pytest.approx(ratio)
    assert slopes[-1] == pytest.approx(2**-8)
    assert all(b / a == pytest.approx(ratio) for a, b in pairwise(slopes))


@pytest.mark.parametrize("heads", [12, 20, 24, 112])
def test_extra_slopes_fall_between_the_steepest_ones(heads: int) -> None:
    slopes = posenc.alibi_slope_values(heads)
    p = 1 << (heads.bit_length() - 1)
    base, extra = slopes[:p], slopes[p:]
    assert len(set(slopes)) == heads and max(slopes) < 1 and min(slopes) == pytest.approx(2**-8)
    for j, m in enumerate(extra):  # between base slope j-1 (or 1) and base slope j, geometric mean
        upper = 1.0 if j == 0 else base[j - 1]
        assert base[j] < m < upper
        assert m == pytest.approx(math.sqrt(base[j] * upper))


def test_snippet_rules(slopes_snippet: dict) -> None:
    wrong = slopes_snippet["growing_slopes"](8)
    assert all(b > a for a, b in pairwise(wrong)) and max(wrong) > 1  # grows, passes 1
    assert slopes_snippet["paper_slopes"](12) == pytest.approx(independent_slopes(12))
    reach = slopes_snippet["reach"]
    assert reach(2**-8) == pytest.approx(2560) and math.exp(-10) == pytest.approx(4.5e-5, rel=0.01)


@pytest.mark.parametrize("seed", range(5))
def test_bloom_form_equals_alibi_under_causal_mask_only(seed: int) -> None:
    torch.manual_seed(seed)
    heads, seq = 6, 9
    scores = torch.randn(heads, seq, seq)
    slopes = posenc.alibi_slopes(heads)
    bloom = slopes[:, None, None] * torch.arange(seq, dtype=torch.float32)
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)
    causal = lambda s: s.masked_fill(future, float("-inf")).softmax(-1)  # noqa: E731
    torch.testing.assert_close(
        causal(scores + posenc.alibi_bias(heads, seq)), causal(scores + bloom)
    )
    bidirectional = (scores + posenc.alibi_bias(heads, seq, causal=False)).softmax(-1)
    assert not torch.allclose(bidirectional, (scores + bloom).softmax(-1), atol=1e-3)
    # the symmetric bias cannot tell left from right: same bias at distance -2 and +2
    sym = posenc.alibi_bias(heads, seq, causal=False)
    assert torch.equal(sym[:, 4, 2], sym[:, 4, 6])


def test_materialised_bias_size_matches_a_real_tensor() -> None:
    use = runpy.run_path(str(CHAPTER.snippet_folder / "use.py"), run_name="snippet")
    bias = posenc.alibi_bias(4, 256)
    assert use["materialised_bias_gib"](4, 256) * 2**30 == bias.numel() * bias.element_size()
