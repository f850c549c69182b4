"""The explorer page (docs/explorer.md and .zh.md), used as a reader uses it: controls set by
typing and by the keyboard, and every number the page shows compared with posenc's for the
same settings, so the page cannot drift from the library.

posenc computes in float32; the page follows its formulas with every float32 operation
rounded (Math.fround), so frequencies and slopes agree to float32 precision: the tolerance is
1e-6 relative. Scores (cosines, bounded by 1 and passing through 0) are compared to 1e-6
absolute. The Python call each panel shows is run too: it must give the page's numbers.

Also: the page works after material's instant navigation, every control has a label and
works from the keyboard, nothing overflows a 360 px phone screen, the charts follow the dark
scheme, and nothing shifts while the page loads."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

import posenc
from tests.browser import sitepages
from tests.browser.browsing import FrontPages, Watch, new_context
from tools import layout

pytestmark = pytest.mark.browser

EXPLORER = sitepages.Page("explorer/")
LANGS = sitepages.LANGS
RTOL = 1e-6  # float32 numbers: relative
ATOL_SCORE = 1e-6  # scores in [-1, 1]: absolute


@pytest.fixture(scope="module")
def explorer(context):
    """One loaded explorer page per language, shared by the numeric tests of this module
    (each test sets every control it depends on)."""
    if not EXPLORER.file.is_file():
        pytest.fail(f"{EXPLORER.file} is missing: the explorer page was not built")
    pages = FrontPages()
    for lang in LANGS:
        page = context.new_page()
        page.watch = Watch(page)
        page.goto(EXPLORER.in_lang(lang).rel)
        wait_ready(page)
        pages[lang] = page
    yield pages
    for page in pages.values():
        assert not page.watch.problems, page.watch.problems
        page.close()


PANELS = ("frequencies", "scaling", "distance", "alibi", "model")
# every visible chart drawn at its box's present width (a chart is drawn again when its width
# changes, e.g. when a scroll bar appears: an element found before that is gone after it), and
# no panel with a redraw still to come
DRAWN_JS = """() => [...document.querySelectorAll('.pe-plot[data-chart]')]
    .filter(p => p.offsetParent).every(p => p.querySelector('svg')
      && Number(p.dataset.drawnWidth) === Math.round(p.getBoundingClientRect().width))
    && !document.querySelector('.pe-panel[data-pending]')"""


def wait_ready(page) -> None:
    """Every panel set up and every visible chart drawn. A panel is set up when it comes
    near the viewport, so the page is scrolled through it as a reader would; its charts are
    drawn when the browser reports their size, just after."""
    for name in PANELS:
        page.locator(_panel(name)).scroll_into_view_if_needed()
        page.wait_for_selector(f"{_panel(name)}[data-params]")
    page.wait_for_function(DRAWN_JS)


def _panel(name: str) -> str:
    return f'.pe-panel[data-panel="{name}"]'


def set_controls(page, panel: str, **values) -> None:
    """Set controls the way a reader does (type into the number box, pick an option, tick a
    box) and wait until the panel has redrawn with exactly these values."""
    root = _panel(panel)
    page.locator(root).scroll_into_view_if_needed()
    page.wait_for_selector(f"{root}[data-params]")
    for name, value in values.items():
        control = page.locator(f"{root} [data-param='{name}']:is(select, input)")
        if control.count():  # a select or a check box written in the page
            if isinstance(value, bool):
                control.set_checked(value)
            else:
                control.select_option(str(value))
            continue
        page.locator(f"#pe-{panel}-{name}").fill(_typed(value))
    wait_param(page, panel, **values)


def wait_param(page, panel: str, **values) -> None:
    """Wait until the panel has redrawn with these values (it records them in data-params)
    and has no redraw still to come (data-pending): a value typed equal to the one shown
    still redraws the panel, one frame later, and replaces its charts."""
    page.wait_for_function(
        """([selector, want]) => {
            const root = document.querySelector(selector);
            const params = JSON.parse(root.dataset.params || "{}");
            return !root.dataset.pending && Object.entries(want).every(([k, v]) => params[k] === v);
        }""",
        arg=[_panel(panel), values],
    )


def _typed(value) -> str:
    """What a reader types: 10000 for 10000.0, 0.5 for 0.5."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def table(page, panel: str, name: str) -> list[list]:
    """The rows of a panel's table: the first cell's text, then each cell's data-value (the
    full-precision number behind the rounded text) or None."""
    return page.eval_on_selector_all(
        f'{_panel(panel)} table[data-table="{name}"] tbody tr',
        """rows => rows.map(row => [...row.children].map((cell, i) =>
            i === 0 ? cell.textContent
                    : cell.dataset.value === undefined ? null : Number(cell.dataset.value)))""",
    )


def column(rows: list[list], index: int) -> np.ndarray:
    return np.array([row[index] for row in rows], dtype=np.float64)


def shown_call(page, panel: str):
    """Run the posenc call the panel shows, as a reader would paste it."""
    code = page.locator(f'{_panel(panel)} code[data-out="python"]').inner_text()
    return eval(code, {"posenc": posenc, "torch": torch})  # noqa: S307  (our own page)


def as_float64(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


# ── RoPE frequencies ──────────────────────────────────────────────────────────────────────

FREQUENCIES = [(64, 10000.0), (128, 500000.0), (96, 1e6), (256, 10000.0), (80, 12345.5), (8, 100.0)]


@pytest.mark.parametrize(("d", "base"), FREQUENCIES, ids=lambda v: f"{v:g}")
def test_frequencies_match_posenc(explorer, d, base) -> None:
    page = explorer["en"]
    set_controls(page, "frequencies", d=d, base=base, context=4096)
    rows = table(page, "frequencies", "frequencies")
    expected, _ = posenc.rope_inv_freq(d, base=base)
    assert [row[0] for row in rows] == [str(i) for i in range(d // 2)]
    np.testing.assert_allclose(column(rows, 1), as_float64(expected), rtol=RTOL, atol=0)
    periods = 2 * math.pi / as_float64(expected)
    np.testing.assert_allclose(column(rows, 2), periods, rtol=RTOL, atol=0)
    np.testing.assert_allclose(column(rows, 3), 4096 / periods, rtol=RTOL, atol=0)
    # the read-out: pairs that complete a turn within L tokens
    turning = int((periods <= 4096).sum())
    assert page.locator(f'{_panel("frequencies")} [data-out="turning"]').inner_text() == str(
        turning
    )
    assert page.locator(f'{_panel("frequencies")} [data-out="still"]').inner_text() == str(
        d // 2 - turning
    )
    np.testing.assert_allclose(
        as_float64(shown_call(page, "frequencies")), as_float64(expected), rtol=0, atol=0
    )
    # "each pair turns b^(-2/d) times as fast as the one before" (shown to 4 digits)
    ratio = float(page.locator(f'{_panel("frequencies")} [data-out="ratio"]').inner_text())
    assert ratio == pytest.approx(float(expected[1] / expected[0]), rel=1e-3)


def test_frequencies_in_chinese_page_match_posenc(explorer) -> None:
    page = explorer["zh"]
    set_controls(page, "frequencies", d=128, base=500000.0)
    expected, _ = posenc.rope_inv_freq(128, base=500000.0)
    rows = table(page, "frequencies", "frequencies")
    np.testing.assert_allclose(column(rows, 1), as_float64(expected), rtol=RTOL, atol=0)


# ── RoPE scaling ──────────────────────────────────────────────────────────────────────────


def _linear(d, base, s):
    page = dict(method="linear", d=d, base=base, factor=s)
    return page, {"rope_type": "linear", "factor": s}, None


def _ntk(d, base, s):  # no rope_type: the default frequencies of the base b·s^(d/(d-2))
    return dict(method="ntk", d=d, base=base, factor=s), "ntk", None


def _dynamic(d, base, s, trained, seq_len):
    page = dict(method="dynamic", d=d, base=base, factor=s, original=trained, seqLen=seq_len)
    lib = {"rope_type": "dynamic", "factor": s, "original_max_position_embeddings": trained}
    return page, lib, seq_len


def _yarn(d, base, s, trained, fast, slow, truncate=True):
    page = dict(method="yarn", d=d, base=base, factor=s, original=trained)
    page |= dict(betaFast=fast, betaSlow=slow, truncate=truncate)
    lib = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": trained}
    lib |= {"beta_fast": fast, "beta_slow": slow} | ({} if truncate else {"truncate": False})
    return page, lib, None


def _llama3(d, base, s, trained, low, high):
    page = dict(method="llama3", d=d, base=base, factor=s, original=trained)
    page |= dict(lowFreqFactor=low, highFreqFactor=high)
    lib = {"rope_type": "llama3", "factor": s, "original_max_position_embeddings": trained}
    lib |= {"low_freq_factor": low, "high_freq_factor": high}
    return page, lib, None


# id: (page settings, posenc scaling dict or "ntk", seq_len)
SCALING = {
    "linear": _linear(128, 10000.0, 4.0),
    "ntk": _ntk(128, 10000.0, 8.0),
    "ntk-1e6": _ntk(64, 1e6, 2.5),
    "dynamic-long": _dynamic(128, 10000.0, 2.0, 4096, 16384),
    "dynamic-short": _dynamic(64, 10000.0, 4.0, 4096, 2048),
    "yarn": _yarn(128, 10000.0, 8.0, 4096, 32.0, 1.0),
    "yarn-no-truncate": _yarn(64, 1e6, 16.0, 32768, 32.0, 1.0, truncate=False),
    "yarn-betas": _yarn(128, 500000.0, 4.0, 8192, 64.0, 2.0),
    "llama3": _llama3(128, 500000.0, 8.0, 8192, 1.0, 4.0),
    "llama3-other": _llama3(64, 10000.0, 16.0, 4096, 2.0, 8.0),
}


@pytest.mark.parametrize(("settings", "scaling", "seq_len"), SCALING.values(), ids=SCALING)
def test_scaling_matches_posenc(explorer, settings, scaling, seq_len) -> None:
    page = explorer["en"]
    set_controls(page, "scaling", **settings)
    d, base, s = settings["d"], settings["base"], settings["factor"]
    if scaling == "ntk":  # NTK-aware: the default frequencies of the base b·s^(d/(d-2))
        expected, factor = posenc.rope_inv_freq(d, base=base * s ** (d / (d - 2)))
    else:
        expected, factor = posenc.rope_inv_freq(d, base=base, scaling=scaling, seq_len=seq_len)
    plain, _ = posenc.rope_inv_freq(d, base=base)
    rows = table(page, "scaling", "scaling")
    assert len(rows) == d // 2
    np.testing.assert_allclose(column(rows, 1), as_float64(plain), rtol=RTOL, atol=0)
    np.testing.assert_allclose(column(rows, 2), as_float64(expected), rtol=RTOL, atol=0)
    ratio = as_float64(expected) / as_float64(plain)
    np.testing.assert_allclose(column(rows, 3), ratio, rtol=2 * RTOL, atol=0)
    if settings["method"] == "dynamic" and settings["seqLen"] <= settings["original"]:
        assert np.all(column(rows, 3) == 1)  # "below L0 nothing changes"
    attention = float(page.locator(_panel("scaling")).get_attribute("data-attention-factor"))
    assert attention == pytest.approx(factor, rel=1e-12)
    # The ramp γ_i of YaRN and Llama 3 (θ' = (1 - γ)·θ/s + γ·θ), read back from posenc's θ'
    if settings["method"] in ("yarn", "llama3"):
        gamma = (ratio - 1 / s) / (1 - 1 / s)
        np.testing.assert_allclose(column(rows, 5), gamma, rtol=0, atol=2e-5)
        assert column(rows, 5).min() >= 0 and column(rows, 5).max() <= 1
    # the read-out counts pairs kept and divided by s the way chapter 7 does
    kept = int(np.isclose(ratio, 1, rtol=0, atol=1e-6).sum())
    divided = int(np.isclose(ratio * s, 1, rtol=0, atol=1e-6).sum())
    readout = {
        key: page.locator(f'{_panel("scaling")} [data-out="{key}"]').inner_text()
        for key in ("kept", "interpolated", "between")
    }
    assert readout == {
        "kept": str(kept), "interpolated": str(divided), "between": str(d // 2 - kept - divided)
    }  # fmt: skip
    shown_freq, shown_factor = shown_call(page, "scaling")
    assert torch.equal(shown_freq, expected) and shown_factor == factor


def test_yarn_ramp_ends_are_shown(explorer) -> None:
    """The read-out names the pairs where the ramp starts and ends, and γ is 1 before the
    first and 0 after the last, as posenc's frequencies say."""
    page = explorer["en"]
    settings = dict(method="yarn", d=128, base=10000.0, factor=8.0, original=4096)
    set_controls(page, "scaling", **settings, betaFast=32.0, betaSlow=1.0, truncate=True)
    low = int(page.locator(f'{_panel("scaling")} [data-out="ramp-low"]').inner_text())
    high = int(page.locator(f'{_panel("scaling")} [data-out="ramp-high"]').inner_text())
    scaled, _ = posenc.rope_inv_freq(
        128, base=10000.0, scaling={"rope_type": "yarn", "factor": 8.0,
                                    "original_max_position_embeddings": 4096},
    )  # fmt: skip
    ratio = as_float64(scaled) / as_float64(posenc.rope_inv_freq(128, base=10000.0)[0])
    assert np.all(np.isclose(ratio[: low + 1], 1, atol=1e-6))  # kept up to the start
    assert np.all(np.isclose(ratio[high:], 1 / 8, atol=1e-6))  # divided from the end on
    assert np.all((ratio[low + 1 : high] < 1 - 1e-6) & (ratio[low + 1 : high] > 1 / 8 + 1e-6))
    assert page.locator(f'{_panel("scaling")} .pe-plot[data-chart="ramp"] svg').is_visible()


def test_llama3_needs_high_above_low(explorer) -> None:
    page = explorer["en"]
    set_controls(page, "scaling", method="llama3", lowFreqFactor=4.0, highFreqFactor=4.0)
    order = page.locator(f'{_panel("scaling")} [data-error="order"]')
    assert order.is_visible()
    with pytest.raises(ValueError, match="high_freq_factor"):
        posenc.rope_inv_freq(
            64, scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        )  # fmt: skip
    set_controls(page, "scaling", highFreqFactor=8.0)
    assert not order.is_visible()


def test_yarn_needs_beta_fast_at_least_beta_slow(explorer) -> None:
    """The panel shows posenc's refusal instead of drawing numbers posenc would not give."""
    page = explorer["en"]
    set_controls(page, "scaling", method="yarn", betaFast=1.0, betaSlow=16.0)
    beta = page.locator(f'{_panel("scaling")} [data-error="beta"]')
    assert beta.is_visible()
    assert not page.locator(f'{_panel("scaling")} [data-error="order"]').is_visible()
    with pytest.raises(ValueError, match="beta_fast"):
        posenc.rope_inv_freq(
            64, scaling={"rope_type": "yarn", "factor": 8.0, "beta_fast": 1.0, "beta_slow": 16.0,
                         "original_max_position_embeddings": 4096},
        )  # fmt: skip
    set_controls(page, "scaling", betaFast=32.0, betaSlow=1.0)
    assert not beta.is_visible()


# ── score against distance ────────────────────────────────────────────────────────────────

DISTANCE = [
    (64, 10000.0, 4096, 0, "independent"),
    (128, 500000.0, 65536, 7, "same"),
    (32, 10000.0, 1024, 3, "independent"),
]


def _scores(q: torch.Tensor, k: torch.Tensor, inv_freq, distances) -> torch.Tensor:
    """<R_r q, k> with posenc's rotation, one per distance r; the page's pairs are (2i, 2i + 1)."""
    cos, sin = posenc.rotary_cos_sin(torch.tensor(distances), inv_freq, layout="interleaved")
    rotated = posenc.apply_rotary(q.expand(len(distances), -1), cos, sin, layout="interleaved")
    return (rotated * k).sum(-1)


@pytest.mark.parametrize(("d", "base", "largest", "seed", "random"), DISTANCE, ids=str)
def test_scores_match_posenc(explorer, d, base, largest, seed, random) -> None:
    page = explorer["en"]
    set_controls(page, "distance", d=d, base=base, distance=largest, seed=seed, random=random)
    rows = table(page, "distance", "distance")
    distances = [int(row[0]) for row in rows]
    assert distances == [0] + [2**e for e in range(int(math.log2(largest)) + 1)]
    inv_freq, _ = posenc.rope_inv_freq(d, base=base)
    # q = k = all ones, every pair aligned: the score divided by d
    ones = torch.ones(d)
    aligned = _scores(ones, ones, inv_freq, distances) / d
    np.testing.assert_allclose(column(rows, 1), as_float64(aligned), rtol=0, atol=ATOL_SCORE)
    assert column(rows, 1)[0] == 1.0
    # the seeded random vectors the page drew
    vectors = page.locator(f"{_panel('distance')} [data-vectors]")
    q = torch.tensor(json.loads(vectors.get_attribute("data-q")), dtype=torch.float32)
    k = torch.tensor(json.loads(vectors.get_attribute("data-k")), dtype=torch.float32)
    assert q.shape == k.shape == (d,)
    assert torch.equal(q, k) == (random == "same")
    random_scores = _scores(q, k, inv_freq, distances) / (q.norm() * k.norm())
    if random == "same":  # q = k: a weighted mean of cos(rθ_i), 1 at distance 0
        assert column(rows, 2)[0] == pytest.approx(1, abs=ATOL_SCORE)
        assert column(rows, 2)[-1] < 0.9  # and it decays
    np.testing.assert_allclose(column(rows, 2), as_float64(random_scores), rtol=0, atol=ATOL_SCORE)
    # the call shown under the panel gives the blue curve at every distance 0..largest
    curve = shown_call(page, "distance")
    assert curve.shape == (largest + 1,)
    np.testing.assert_allclose(
        as_float64(curve[distances]), column(rows, 1), rtol=0, atol=ATOL_SCORE
    )


def test_random_vectors_follow_the_seed(explorer) -> None:
    page = explorer["en"]
    vectors = page.locator(f"{_panel('distance')} [data-vectors]")

    def drawn(seed: int) -> list[float]:
        set_controls(page, "distance", d=64, seed=seed, random="independent")
        return json.loads(vectors.get_attribute("data-q"))

    first = drawn(5)
    assert drawn(6) != first
    assert drawn(5) == first  # the same seed draws the same vectors
    # standard normal draws: 64 of them have a mean near 0 and a spread near 1
    assert abs(np.mean(first)) < 0.5 and 0.6 < np.std(first) < 1.4


# ── ALiBi ─────────────────────────────────────────────────────────────────────────────────

HEADS = [1, 2, 3, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 64, 96]


@pytest.mark.parametrize("heads", HEADS, ids=str)
def test_alibi_slopes_match_posenc(explorer, heads) -> None:
    page = explorer["en"]
    set_controls(page, "alibi", heads=heads)
    rows = table(page, "alibi", "slopes")
    expected = posenc.alibi_slopes(heads)
    assert [row[0] for row in rows] == [str(h) for h in range(1, heads + 1)]
    np.testing.assert_allclose(column(rows, 1), as_float64(expected), rtol=RTOL, atol=0)
    np.testing.assert_allclose(column(rows, 2), np.log2(as_float64(expected)), rtol=RTOL)
    power = 2 ** int(math.log2(heads))
    assert page.locator(f'{_panel("alibi")} [data-out="power"]').inner_text() == str(power)
    shown_slopes, _ = shown_call(page, "alibi")
    assert torch.equal(shown_slopes, expected)


@pytest.mark.parametrize(
    ("heads", "length", "head", "causal"),
    [(8, 6, 3, True), (12, 8, 10, False), (20, 5, 20, True), (3, 24, 1, True)],
    ids=str,
)
def test_alibi_bias_matches_posenc(explorer, heads, length, head, causal) -> None:
    page = explorer["en"]
    set_controls(page, "alibi", heads=heads, length=length, head=head, causal=causal)
    expected = as_float64(posenc.alibi_bias(heads, length, causal=causal)[head - 1])
    rows = table(page, "alibi", "bias")
    assert len(rows) == length
    np.testing.assert_allclose(np.array([row[1:] for row in rows]), expected, rtol=RTOL, atol=0)
    masked = page.eval_on_selector_all(
        f'{_panel("alibi")} table[data-table="bias"] tbody tr',
        "rows => rows.map(r => [...r.children].slice(1).map(c => c.dataset.masked === 'true'))",
    )
    assert np.array_equal(np.array(masked), np.triu(np.ones((length, length), bool), 1) & causal)
    _, shown_bias = shown_call(page, "alibi")
    assert torch.equal(shown_bias, posenc.alibi_bias(heads, length, causal=causal)[head - 1])


def test_head_shown_is_limited_to_the_heads(explorer) -> None:
    page = explorer["en"]
    set_controls(page, "alibi", heads=16, head=16)
    page.locator("#pe-alibi-heads").fill("4")
    wait_param(page, "alibi", head=4)
    assert page.locator("#pe-alibi-head").input_value() == "4"
    assert page.locator("#pe-alibi-head-slider").get_attribute("max") == "4"


# ── the page as a reader meets it ─────────────────────────────────────────────────────────

CONTROLS_JS = """() => [...document.querySelectorAll('.pe-panel :is(input, select)')].map(e => {
  const ids = (e.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
  const by = ids.map(id => document.getElementById(id)?.textContent || '').join(' ');
  const own = [...(e.labels || [])].map(l => l.textContent).join(' ');
  return {id: e.id, type: e.type, name: (by || own || e.getAttribute('aria-label') || '').trim()};
})"""


@pytest.mark.parametrize("lang", LANGS)
def test_every_control_has_a_label(page, lang) -> None:
    page.goto(EXPLORER.in_lang(lang).rel)
    wait_ready(page)
    controls = page.evaluate(CONTROLS_JS)
    assert len(controls) >= 40
    unnamed = [c["id"] or c["type"] for c in controls if not c["name"]]
    assert not unnamed, f"controls without a label: {unnamed}"
    if lang != LANGS[0]:  # the Chinese page labels its controls in Chinese
        assert all(re.search("[\u4e00-\u9fff]", c["name"]) for c in controls), controls
    assert not page.watch.problems


def test_controls_work_from_the_keyboard(page) -> None:
    page.goto(EXPLORER.rel)
    wait_ready(page)
    page.focus("#pe-frequencies-d-slider")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    wait_param(page, "frequencies", d=68)
    assert len(table(page, "frequencies", "frequencies")) == 34
    assert page.locator("#pe-frequencies-d").input_value() == "68"
    page.keyboard.press("End")
    wait_param(page, "frequencies", d=256)
    # Tab moves on to the number box of the same parameter; arrow keys step it
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "pe-frequencies-d"
    page.keyboard.press("ArrowDown")
    wait_param(page, "frequencies", d=254)
    # the base slider moves over 1-2-5 steps and says the value it stands for
    page.focus("#pe-frequencies-base-slider")
    page.keyboard.press("ArrowRight")
    wait_param(page, "frequencies", base=20000)
    assert page.get_attribute("#pe-frequencies-base-slider", "aria-valuetext") == "20000"
    # the method menu of the scaling panel
    page.focus("#pe-scaling-method")
    page.keyboard.press("ArrowDown")  # YaRN -> Llama 3
    wait_param(page, "scaling", method="llama3")
    assert page.locator("#pe-scaling-lowFreqFactor").is_visible()
    assert not page.locator("#pe-scaling-betaFast").is_visible()
    assert not page.watch.problems


# the opening's "first thing to try", as each page writes it: (pairs turning at the page's
# defaults, pairs in all, pairs turning with the base 500000)
FIRST_TRY = {
    "en": r"23 of the 32 pairs complete a turn within it\. Set the\s+base to 500000, Llama 3's, "
    r"and only 16 do",
    "zh": r"32 对维度中有 23 对在这个长度内转满一圈。"
    r"把底数改成 Llama 3 用的 500000，就只剩 16 对了",
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_first_thing_to_try_shows_what_the_page_says(page, lang) -> None:
    """The page opens at d = 64, b = 10000, L = 4096; the read-out then says 23 pairs of 32
    complete a turn, and 16 with the base 500000 (the same counts as posenc's)."""
    text = layout.in_language(layout.DOCS / "explorer.md", lang).read_text(encoding="utf-8")
    assert re.search(FIRST_TRY[lang], text), "the opening's numbers changed: change FIRST_TRY"
    page.goto(EXPLORER.in_lang(lang).rel)
    wait_ready(page)
    panel = _panel("frequencies")
    params = json.loads(page.get_attribute(panel, "data-params"))
    assert (params["d"], params["base"], params["context"]) == (64, 10000, 4096)

    def shown(name: str) -> str:
        return page.locator(f'{panel} [data-out="{name}"]').inner_text()

    for base, turning in ((10000.0, "23"), (500000.0, "16")):
        set_controls(page, "frequencies", base=base)
        inv_freq, _ = posenc.rope_inv_freq(64, base=base)
        assert shown("pairs") == "32" and shown("turning") == turning
        assert int((2 * math.pi / as_float64(inv_freq) <= 4096).sum()) == int(turning)
    assert not page.watch.problems


def test_invalid_number_keeps_the_last_value(page) -> None:
    page.goto(EXPLORER.rel)
    root = _panel("frequencies")
    wait_ready(page)
    page.locator("#pe-frequencies-d").fill("63")  # odd: no pairs
    assert page.get_attribute("#pe-frequencies-d", "aria-invalid") == "true"
    assert json.loads(page.get_attribute(root, "data-params"))["d"] == 64
    page.locator("#pe-frequencies-d").blur()  # leaving the box shows the value in use
    assert page.locator("#pe-frequencies-d").input_value() == "64"
    assert page.get_attribute("#pe-frequencies-d", "aria-invalid") is None
    assert not page.watch.problems


def _drawn(page) -> dict[str, int]:
    """Marks drawn in each chart (dots, lines, cells)."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.pe-plot[data-chart]')]
            .map(h => [h.dataset.chart, h.querySelectorAll('circle, path, .pe-cell').length]))"""
    )


def _counting_swaps(page):
    """A context manager factory: ``with swapped_in("explorer/"): click()`` returns once
    material has swapped in the next page (it announces each on ``document$``, after it has
    replaced the content) and that page is the one named. The address changes earlier, when
    the click is handled: a test that waits for the address alone can find the previous
    page's panels, which the swap then removes from under it."""
    import contextlib

    page.evaluate("window.__swaps = 0; document$.subscribe(() => window.__swaps++)")

    @contextlib.contextmanager
    def swapped_in(rel: str):
        before = page.evaluate("window.__swaps")
        yield
        page.wait_for_function("n => window.__swaps > n", arg=before)
        canonical = page.evaluate("document.querySelector('link[rel=canonical]')?.href")
        assert canonical and canonical.endswith(rel), f"swapped in {canonical}, not {rel}"

    return swapped_in


@pytest.mark.parametrize("lang", LANGS)
def test_page_works_after_instant_navigation(page, site_url, lang) -> None:
    """Reached by a click from the home page (material swaps the content in, no page load),
    then left and reached again with the back and forward buttons: the panels are set up
    and respond each time."""
    home = "" if lang == LANGS[0] else f"{lang}/"
    with page.expect_response(lambda response: response.url.endswith("sitemap.xml")):
        page.goto(home)
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__sameDocument = true")
    target = site_url + EXPLORER.in_lang(lang).rel
    swapped_in = _counting_swaps(page)
    with swapped_in("explorer/"):
        page.locator('.md-nav a[href$="explorer/"]').first.click()
    wait_ready(page)
    assert page.evaluate("window.__sameDocument === true"), "the page was loaded, not swapped in"
    drawn = _drawn(page)
    charts = {"periods", "ratio", "ramp", "score", "slopes", "bias"}
    assert set(drawn) == charts | {"model-wavelength", "model-ratio"}
    assert all(drawn.values()), drawn
    set_controls(page, "alibi", heads=6)
    assert len(table(page, "alibi", "slopes")) == 6
    # away and back
    with swapped_in("chapters/06-alibi/"):
        page.locator('.md-nav a[href$="chapters/06-alibi/"]').first.click()
    with swapped_in("explorer/"):
        page.go_back()
    assert re.fullmatch(re.escape(target) + "(#.*)?", page.url)  # navigation.tracking adds #
    wait_ready(page)
    assert page.evaluate("window.__sameDocument === true")
    set_controls(page, "alibi", heads=5)
    assert len(table(page, "alibi", "slopes")) == 5
    assert all(_drawn(page).values())
    built = page.evaluate("document.querySelectorAll('.pe-panel .pe-inputs').length")
    assert built == page.locator(".pe-control[data-param]").count(), "controls built twice"
    assert not page.watch.problems
    assert not page.context.foreign_requests


@pytest.mark.parametrize("lang", LANGS)
def test_readable_on_a_360_px_phone(browser, site_url, lang) -> None:
    context = new_context(
        browser, site_url, viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        watch = Watch(page)
        page.goto(EXPLORER.in_lang(lang).rel)
        wait_ready(page)
        page.evaluate("document.querySelectorAll('.pe-numbers').forEach(d => d.open = true)")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        boxes = page.evaluate(
            """() => [...document.querySelectorAll('.pe-plot svg, .pe-panel :is(input, select)')]
                .filter(e => e.offsetParent).map(e => e.getBoundingClientRect())
                .map(r => [r.left, r.right, r.width, r.height])"""
        )
        assert boxes and all(0 <= left and right <= 360 for left, right, _, _ in boxes), boxes
        # touch targets: sliders, boxes and menus at least 24 px high
        assert all(height >= 24 for _, _, _, height in boxes)
        # charts are drawn at the size they are shown (not scaled down), text at 10 px or more
        scales = page.evaluate(
            """() => [...document.querySelectorAll('.pe-plot svg')]
                .map(s => s.getBoundingClientRect().width / Number(s.getAttribute('width')))"""
        )
        assert scales and all(abs(scale - 1) < 0.01 for scale in scales), scales
        sizes = page.evaluate(
            """() => [...document.querySelectorAll('.pe-plot svg text')]
                .map(t => parseFloat(getComputedStyle(t).fontSize))"""
        )
        assert sizes and min(sizes) >= 10
        assert not watch.problems
    finally:
        context.close()


RGBA = re.compile(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)")


def _rgb(color: str, background: str | None = None) -> tuple[float, ...]:
    """A CSS colour as opaque RGB in [0, 1], laid over ``background`` if it is translucent."""
    r, g, b, a = RGBA.match(color).groups()
    channels = [float(c) / 255 for c in (r, g, b)]
    alpha = 1.0 if a is None else float(a)
    if alpha < 1:
        under = _rgb(background)
        channels = [alpha * c + (1 - alpha) * u for c, u in zip(channels, under, strict=True)]
    return tuple(channels)


def _luminance(channels: tuple[float, ...]) -> float:
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(color: str, background: str) -> float:
    """WCAG contrast ratio of a colour on an (opaque) background."""
    high, low = sorted(
        (_luminance(_rgb(color, background)), _luminance(_rgb(background))), reverse=True
    )
    return (high + 0.05) / (low + 0.05)


COLOURS_JS = """() => {
  const style = e => getComputedStyle(e);
  const background = style(document.body).backgroundColor;
  const dot = document.querySelector('.pe-plot[data-chart="periods"] circle');
  const line = document.querySelector('.pe-plot[data-chart="score"] path.pe-s2');
  const tick = document.querySelector('.pe-plot[data-chart="periods"] .pe-axis text');
  return {background, dot: style(dot).fill, line: style(line).stroke, tick: style(tick).fill};
}"""


def test_charts_follow_the_dark_scheme(page) -> None:
    page.goto(EXPLORER.rel)
    page.evaluate("localStorage.clear()")
    page.reload()
    wait_ready(page)
    light = page.evaluate(COLOURS_JS)
    page.locator("label.md-header__button[for='__palette_1']").click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = page.evaluate(COLOURS_JS)
    page.evaluate("localStorage.clear()")
    for colours in (light, dark):
        # lines and dots: 3:1 against the page (WCAG non-text contrast); tick labels 4.5:1
        assert _contrast(colours["dot"], colours["background"]) >= 3, colours
        assert _contrast(colours["line"], colours["background"]) >= 3, colours
        assert _contrast(colours["tick"], colours["background"]) >= 4.5, colours
    assert dark["background"] != light["background"]
    assert dark["dot"] != light["dot"] and dark["tick"] != light["tick"]
    assert not page.watch.problems


def test_nothing_shifts_while_the_page_loads(page) -> None:
    """The charts' boxes have their size before the script draws into them (Lighthouse's
    cumulative layout shift)."""
    page.add_init_script(
        """window.__shift = 0;
        new PerformanceObserver(list => list.getEntries().forEach(e => {
            if (!e.hadRecentInput) window.__shift += e.value; })
        ).observe({type: 'layout-shift', buffered: true});"""
    )
    page.goto(EXPLORER.rel, wait_until="networkidle")
    wait_ready(page)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__shift") < 0.02


def test_pointer_shows_the_value_under_it(page) -> None:
    """Over a chart, the nearest point's value is written next to a guide line."""
    page.goto(EXPLORER.rel)
    wait_ready(page)
    set_controls(page, "frequencies", d=64, base=10000.0)
    plot = page.locator('.pe-plot[data-chart="periods"] svg')
    plot.scroll_into_view_if_needed()
    box = plot.bounding_box()
    page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + 0.5 * box["height"])
    label = page.locator('.pe-plot[data-chart="periods"] .pe-readout-text')
    label.wait_for()
    pair, value = label.text_content().split(":")
    periods = 2 * math.pi / as_float64(posenc.rope_inv_freq(64, base=10000.0)[0])
    assert 0 < int(pair) < 16  # left half of the chart
    assert float(value) == pytest.approx(periods[int(pair)], rel=1e-3)
    page.mouse.move(0, 0)
    assert page.locator('.pe-plot[data-chart="periods"] .pe-readout-text').count() == 0
    assert not page.watch.problems


def test_panels_are_set_up_when_they_come_near(browser, site_url) -> None:
    """On a phone, the panels far below the first screen are set up only as the reader
    scrolls towards them (the page's first load runs less script); each is ready before it
    is on screen."""
    context = new_context(browser, site_url, viewport={"width": 360, "height": 740}, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(EXPLORER.rel, wait_until="networkidle")
        ready = "s => Boolean(document.querySelector(s).dataset.ready)"
        screen = page.evaluate("innerHeight")

        def top(name: str) -> float:
            return page.evaluate(f"document.querySelector('{_panel(name)}').offsetTop")

        # a panel more than two screens down is not set up at load (on a phone the list of
        # panels at the top of the page puts even the first one that far)
        far = [name for name in PANELS if top(name) > 2.2 * screen]
        assert "alibi" in far, far
        assert not [name for name in far if page.evaluate(ready, _panel(name))]
        for name in far:
            page.evaluate(f"window.scrollTo(0, {top(name)} - 1.5 * innerHeight)")  # half a screen
            page.wait_for_function(ready, arg=_panel(name))
            assert page.evaluate(
                f"document.querySelector('{_panel(name)}').getBoundingClientRect().top"
            ) > page.evaluate("innerHeight")  # ready while still below the screen
    finally:
        context.close()
