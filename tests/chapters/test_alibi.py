"""Claims of the ALiBi chapter (docs/chapters/06-alibi*.md) beyond its printed output.

The references are Press et al.'s released ``get_slopes`` (tests/lib/references.py), BLOOM in
transformers (its slopes, its ``build_alibi_tensor`` and a tiny randomly initialised model),
closed-form geometric sums, and the numbers of the paper; posenc is what is checked.
"""

from __future__ import annotations

import math
import re
import runpy
from itertools import pairwise
from pathlib import Path

import pytest
import torch
from transformers import BloomConfig, BloomModel
from transformers.models.bloom import modeling_bloom

import posenc
from tests.lib.references import press_get_slopes as reference_slopes
from tools import layout

CHAPTER = layout.find_chapter("alibi")
PAGES = [CHAPTER.page("en"), CHAPTER.page("zh")]


@pytest.fixture(scope="module")
def slopes_snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "slopes.py"), run_name="snippet")


@pytest.fixture(scope="module")
def window_snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "window.py"), run_name="snippet")


# -- section "The slopes" ---------------------------------------------------------------------


# the labels each page prints the slopes with (show_slopes, show_twelve, show_wrong in slopes.py)
SLOPE_LABELS = {
    "en": {"head": "head {}: ", "all": "all 12, largest first: ", "nine": "heads 9-12 : ",
           "paper": "paper : ", "wrong": "wrong : "},
    "zh": {"head": "第 {} 个头：", "all": "全部 12 个，从大到小：", "nine": "第 9-12 个头：",
           "paper": "论文：", "wrong": "错误："},
}  # fmt: skip


@pytest.mark.parametrize("lang", SLOPE_LABELS)
def test_page_shows_the_papers_slopes(lang: str) -> None:
    text = CHAPTER.page(lang).read_text(encoding="utf-8")
    label = SLOPE_LABELS[lang]
    for head, m in enumerate(reference_slopes(8), start=1):
        assert label["head"].format(head) + f"m = 2^{math.log2(m):+.1f} = {m:.8f}" in text
    twelve = sorted(reference_slopes(12), reverse=True)
    assert label["all"] + " ".join(f"{m:.4f}" for m in twelve) in text
    assert label["nine"] + "2^-0.5 2^-1.5 2^-2.5 2^-3.5" in text
    paper_line = re.search(rf"^\s*{re.escape(label['paper'])}(.*?) \|", text, re.MULTILINE)
    assert paper_line, "the common-mistake box must show the paper's slopes next to the wrong ones"
    assert paper_line.group(1) == " ".join(f"{m:.4f}" for m in reference_slopes(8))
    wrong_line = re.search(rf"^\s*{re.escape(label['wrong'])}(.*?) \|", text, re.MULTILINE)
    assert wrong_line and wrong_line.group(1) != paper_line.group(1)
    # the wrong values appear only inside the warning box, never as the slopes of a head
    for head, wrong in ((2, "+0.0"), (8, "+2.0")):
        assert label["head"].format(head) + f"m = 2^{wrong}" not in text


def test_library_slopes_are_the_released_get_slopes_for_1_to_256_heads() -> None:
    """'posenc equals get_slopes for 256 head counts': bit for bit, against tests/lib's copy."""
    for heads in range(1, 257):
        assert posenc.alibi_slope_values(heads) == reference_slopes(heads), heads


def test_bloom_computes_the_same_slopes_for_1_to_256_heads() -> None:
    """'BLOOM's code in transformers computes the same slopes (in float32)'."""
    for heads in range(1, 257):
        torch.testing.assert_close(
            modeling_bloom._get_alibi_slopes(heads, "cpu"),
            posenc.alibi_slopes(heads),
            rtol=1e-5,  # BLOOM raises a float32 base to integer powers
            atol=0,
        )


def test_the_snippet_copy_of_get_slopes_is_the_reference(slopes_snippet: dict) -> None:
    for heads in range(1, 257):
        assert slopes_snippet["get_slopes"](heads) == reference_slopes(heads)


def test_sixteen_heads_interpolate_the_eight_by_geometric_means() -> None:
    """§3: for 16 heads, 'geometrically averaging every consecutive pair' of the 8 slopes."""
    eight, sixteen = reference_slopes(8), posenc.alibi_slope_values(16)
    assert sixteen[1::2] == pytest.approx(eight)
    means = [math.sqrt(a * b) for a, b in pairwise([1.0, *eight])]
    assert sixteen[0::2] == pytest.approx(means)


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
    reach = slopes_snippet["reach"]
    assert reach(2**-8) == pytest.approx(2560) and math.exp(-10) == pytest.approx(4.5e-5, rel=0.01)


# -- section "Why it extrapolates: a window in every head" ------------------------------------


@pytest.mark.parametrize("head", range(1, 9))
def test_window_shares_are_the_geometric_tail(window_snippet: dict, head: int) -> None:
    """Equal scores: key k back weighs e^(-m k); 99 % within about ln(100)/m tokens."""
    m, k_len = reference_slopes(8)[head - 1], window_snippet["k_len"]
    for distance in (0, 7, 300, 2000):  # the finite sum over k_len keys, then its limit
        tail = (math.exp(-m * (distance + 1)) - math.exp(-m * k_len)) / (1 - math.exp(-m * k_len))
        assert window_snippet["share_beyond"](head, distance) == pytest.approx(tail, rel=1e-9)
        if distance <= 1000:
            assert tail == pytest.approx(math.exp(-m * (distance + 1)), rel=1e-5)
    d99 = window_snippet["within"](head, 0.99)
    assert math.exp(-m * d99) > 0.01 >= math.exp(-m * (d99 + 1))  # smallest D with <= 1 % beyond
    assert d99 == pytest.approx(math.log(100) / m, abs=1.0)


def test_window_claims_of_the_prose(window_snippet: dict) -> None:
    """'beyond 512 only heads 6 to 8 keep measurable weight; beyond 1024 only head 8 > 0.1 %'."""
    share = window_snippet["share_beyond"]
    assert [h for h in range(1, 9) if share(h, 512) >= 1e-4] == [6, 7, 8]
    assert [h for h in range(1, 9) if share(h, 1024) > 1e-3] == [8]
    assert window_snippet["within"](1, 0.99) == 9 and window_snippet["within"](8, 0.99) == 1178


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_both_pages_quote_the_papers_numbers(page: Path) -> None:
    """Appendix B, Table 15 (stride 1) and §4.1 (nonoverlapping), as read in the paper."""
    text = page.read_text(encoding="utf-8")
    for number in ("19.73", "18.40", "17.98", "17.92", "18.30", "16.96"):
        assert number in text, number


# -- section "Where the window fails: a distant token" ----------------------------------------


@pytest.mark.parametrize("head", [1, 4, 8])
@pytest.mark.parametrize("distance", [20, 300, 1000])
def test_a_distant_key_outweighs_the_nearest_only_above_m_times_distance(
    head: int, distance: int
) -> None:
    """Without ALiBi the needle would win at any score > 0; with it, only above m·D."""
    m = reference_slopes(8)[head - 1]
    slopes = posenc.alibi_slopes(8)
    for margin, wins in ((-0.1, False), (0.1, True)):
        k_len = distance + 1
        q = torch.ones(1, 8, 1, 1, dtype=torch.float64)
        k = torch.zeros(1, 8, k_len, 1, dtype=torch.float64)
        k[:, :, 0, 0] = m * distance + margin  # the needle, D tokens back
        v = torch.zeros(1, 8, k_len, 2, dtype=torch.float64)
        v[:, :, 0, 0] = 1.0  # channel 0 reads the needle's weight
        v[:, :, -1, 1] = 1.0  # channel 1 reads the weight of the query's own token
        out = posenc.attention(
            q, k, v, causal=True, alibi_slopes=slopes.double(), scale=1.0, backend="sdpa"
        )
        needle, nearest = out[0, head - 1, 0].tolist()
        assert (needle > nearest) is wins


def test_retrieval_table(window_snippet: dict) -> None:
    """Heads 1-6 give the needle <= 0.01 %, heads 7 and 8 about 6.5 % and 64 %, no bias 96 %."""
    weights = window_snippet["alibi"].tolist()
    assert all(w <= 1e-4 for w in weights[:6])
    assert weights[6] == pytest.approx(0.065, abs=5e-4)
    assert weights[7] == pytest.approx(0.64, abs=0.005)
    assert window_snippet["no_bias"][0].item() == pytest.approx(0.96, abs=0.005)
    needed = window_snippet["score_needed"]
    assert needed(0.5, 1000) == pytest.approx(500, abs=1)  # "about 500"
    for m in reference_slopes(8):  # grows linearly: the slope of s*(D) is m
        assert needed(m, 2000) - needed(m, 1000) == pytest.approx(1000 * m, rel=0.01, abs=0.02)


# -- section "Causal and bidirectional", "The key-only form" ----------------------------------


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


def test_bloom_alibi_tensor_is_batch_times_heads_by_1_by_length() -> None:
    """build_alibi_tensor: (batch·heads, 1, L) of +m·j, j counting non-padding tokens."""
    heads, seq = 12, 7
    mask = torch.ones(2, seq, dtype=torch.long)
    mask[1, :3] = 0  # left padding
    alibi = modeling_bloom.build_alibi_tensor(mask, heads, torch.float32)
    assert alibi.shape == (2 * heads, 1, seq)
    slopes = torch.tensor(reference_slopes(heads))
    j = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 1, 2, 3]], dtype=torch.float32)
    expected = (slopes[None, :, None] * j[:, None, :]).reshape(2 * heads, 1, seq)
    torch.testing.assert_close(alibi, expected)


def test_bloom_attention_equals_the_alibi_bias_broadcast_over_queries() -> None:
    """A tiny BLOOM: its first layer's weights carry exactly m·(j - i) up to a per-row constant,
    also with left padding (positions counted from the first real token)."""
    torch.manual_seed(0)
    heads, seq = 12, 9
    config = BloomConfig(
        vocab_size=50, hidden_size=48, n_layer=1, n_head=heads, attn_implementation="eager"
    )
    model = BloomModel(config).eval()
    ids = torch.randint(0, 50, (2, seq))
    mask = torch.ones(2, seq, dtype=torch.long)
    mask[1, :3] = 0
    with torch.no_grad():
        with_bias = model(ids, attention_mask=mask, output_attentions=True).attentions[0]
        real = model.build_alibi_tensor
        model.build_alibi_tensor = lambda m, h, dtype: torch.zeros_like(real(m, h, dtype))
        without = model(ids, attention_mask=mask, output_attentions=True).attentions[0]
    log_ratio = with_bias.log() - without.log()  # (batch, heads, q, k): BLOOM's bias + row constant
    for row, start in ((0, 0), (1, 3)):
        n = seq - start
        residual = log_ratio[row, :, start:, start:] - posenc.alibi_bias(heads, n)
        residual = residual - residual[..., :1]  # remove the per-row constant
        visible = torch.ones(n, n, dtype=torch.bool).tril()
        assert residual[:, visible].abs().max() < 1e-4
        assert log_ratio[row, :, start:, start:][:, visible].abs().max() > 0.1  # not trivial


# -- section "Using it" ------------------------------------------------------------------------


def test_materialised_bias_size_matches_a_real_tensor() -> None:
    use = runpy.run_path(str(CHAPTER.snippet_folder / "use.py"), run_name="snippet")
    bias = posenc.alibi_bias(4, 256)
    assert use["materialised_bias_gib"](4, 256) * 2**30 == bias.numel() * bias.element_size()
