"""The explorer's "your model" panel (docs/explorer.md#your-model and its Chinese twin) against
posenc.describe.

The panel reads a config.json in the browser with a port of posenc/describe.py
(docs/assets/javascripts/explorer.js). For every released config posenc ships, picked from
the list as a reader picks it, every layer the page shows must be the layer posenc describes
at the same length: its encoding, layer type, window, base, scaling type, rotary dimensions
and attention factor, and the inverse frequencies of every layer to float32 precision (1e-6
relative). Pasted configs (Phi-3's LongRoPE, Llama 4's NoPE layers and llama3 step, SmolLM3,
Command R7B, Qwen3-VL's interleaved M-RoPE, DeepSeek's YaRN, dynamic NTK at a chosen length)
are compared the same way, and a malformed one must show the message posenc raises for it.
The configs reach the page through the build (tools/hooks/released_configs.py): the copy in
the page must be posenc's.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import posenc
from posenc.describe import released_config, released_configs
from tests.browser import sitepages
from tests.browser.browsing import FrontPages, Watch
from tests.lib.test_describe import BAD, _tiny

pytestmark = pytest.mark.browser

EXPLORER = sitepages.Page("explorer/")
LANGS = sitepages.LANGS
PANEL = '.pe-panel[data-panel="model"]'
RTOL = 1e-6  # float32 frequencies: relative
NAMES = released_configs()

# the visible charts of the panel drawn at their present width, no redraw still to come
DRAWN_JS = """(selector) => {
    const root = document.querySelector(selector);
    return !root.dataset.pending && [...root.querySelectorAll('.pe-plot[data-chart]')]
      .filter(p => p.offsetParent).every(p => p.querySelector('svg')
        && Number(p.dataset.drawnWidth) === Math.round(p.getBoundingClientRect().width));
}"""


def open_panel(page) -> None:
    """Scroll to the panel as a reader does (it is set up when it comes near) and wait until
    it has drawn."""
    page.locator(PANEL).scroll_into_view_if_needed()
    page.wait_for_selector(f"{PANEL}[data-params]")
    page.wait_for_function(DRAWN_JS, arg=PANEL)


@pytest.fixture(scope="module")
def explorer(context):
    if not EXPLORER.file.is_file():
        pytest.fail(f"{EXPLORER.file} is missing: the explorer page was not built")
    pages = FrontPages()
    for lang in LANGS:
        page = context.new_page()
        page.watch = Watch(page)
        page.goto(EXPLORER.in_lang(lang).rel + "#your-model")
        open_panel(page)
        pages[lang] = page
    yield pages
    for page in pages.values():
        assert not page.watch.problems, page.watch.problems
        page.close()
    assert not context.foreign_requests, context.foreign_requests


def params(page) -> dict:
    return json.loads(page.get_attribute(PANEL, "data-params"))


def wait_params(page, **values) -> None:
    """Until the panel has redrawn with these values and has no redraw still to come."""
    page.wait_for_function(
        """([selector, want]) => {
            const root = document.querySelector(selector);
            const params = JSON.parse(root.dataset.params || "{}");
            return !root.dataset.pending && Object.entries(want).every(([k, v]) => params[k] === v);
        }""",
        arg=[PANEL, values],
    )
    page.wait_for_function(DRAWN_JS, arg=PANEL)


def pick(page, name: str) -> None:
    page.locator("#pe-model-model").select_option(name)
    wait_params(page, model=name)


def paste(page, config, length: int | None = None) -> None:
    """Type a config into the box and read it, as a reader does; then set the length."""
    text = config if isinstance(config, str) else json.dumps(config, indent=1)
    page.locator("#pe-model-config").fill(text)
    page.locator(f"{PANEL} button[data-read]").click()
    wait_params(page, model="pasted", text=text)
    if length is not None:
        page.locator("#pe-model-seqLen").fill(str(length))
        wait_params(page, seqLen=length)


def cells(page, table: str) -> list[list[tuple[str, str | None]]]:
    """Each row of a table of the panel: (text, data-value) of every cell."""
    return page.eval_on_selector_all(
        f'{PANEL} table[data-table="{table}"] tbody tr',
        "rows => rows.map(r => [...r.children].map(c => [c.textContent, c.dataset.value ?? null]))",
    )


def shown_layers(page) -> list[dict]:
    rows = cells(page, "layers")
    shown = []
    for row in rows:
        (label, _), (_, layer_type), (_, window), (_, kind), base, scaling, rotary, factor = row
        shown.append({
            "label": label, "layer_type": layer_type or None,
            "window": None if window is None else int(float(window)), "kind": kind,
            "base": None if base[1] is None else float(base[1]), "rope_type": scaling[1],
            "rotary_dim": None if rotary[1] is None else int(rotary[1]),
            "attention_factor": None if factor[1] is None else float(factor[1]),
        })  # fmt: skip
    return shown


def expected_layers(described) -> list[dict]:
    return [
        {
            "label": str(layer.index) if layer.stack is None else None,
            "layer_type": layer.layer_type,
            "window": layer.window,
            "kind": layer.kind,
            "base": layer.rope_theta,
            "rope_type": layer.rope_type,
            "rotary_dim": layer.rotary_dim,
            "attention_factor": layer.attention_factor,
        }  # fmt: skip
        for layer in described.layers
    ]


def _number(text: str) -> float:
    """A number as the page writes it: 0.0039, 3.906×10⁻³, −2."""
    text = text.replace("−", "-")
    if "×10" not in text:
        return float(text)
    mantissa, power = text.split("×10")
    digits = power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
    return float(mantissa) * 10 ** int(digits)


def as_float64(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().to(torch.float64).numpy()


def check_against_posenc(page, config: dict) -> posenc.describe.__class__:
    """The page's layers and frequencies equal posenc.describe's at the page's length."""
    length = params(page)["seqLen"]
    described = posenc.describe(config, seq_len=length)
    shown = shown_layers(page)
    expected = expected_layers(described)
    assert len(shown) == len(expected)
    for got, want in zip(shown, expected, strict=True):
        if want["label"] is None:  # T5: "encoder 0", "decoder 3"
            want = {**want, "label": got["label"]}
        for key in ("base", "attention_factor"):  # printed exactly: compare as numbers
            if want[key] is not None:
                assert got[key] == pytest.approx(want[key], rel=1e-12), (key, got, want)
                want = {**want, key: got[key]}
        assert got == want
    # every layer's frequencies, from the same function the page draws with
    computed = page.evaluate(
        """([config, length]) => window.posencExplorer.math.describe(config, length).layers
            .map(l => [l.inv ? Array.from(l.inv) : null, l.alibiSlopes || null])""",
        [config, length],
    )
    for layer, (inv, slopes) in zip(described.layers, computed, strict=True):
        if layer.kind == "alibi":  # float64 on both sides
            np.testing.assert_allclose(slopes, layer.alibi_slopes, rtol=1e-12, atol=0)
        if layer.kind != "rope":
            assert inv is None
            continue
        np.testing.assert_allclose(inv, as_float64(layer.inv_freq), rtol=RTOL, atol=0)
    alibi = [layer for layer in described.layers if layer.kind == "alibi"]
    if alibi:  # the read-out: the heads and the first and last slope, to 6 digits
        shown = [page.locator(f'{PANEL} [data-out="alibi-{key}"]').inner_text()
                 for key in ("heads", "first", "last")]  # fmt: skip
        slopes = alibi[0].alibi_slopes
        assert int(shown[0]) == len(slopes)
        assert _number(shown[1]) == pytest.approx(slopes[0], rel=1e-5)
        assert _number(shown[2]) == pytest.approx(slopes[-1], rel=1e-5)
    # the pairs of every group of layers, as the table under the charts shows them
    rope = [layer for layer in described.layers if layer.kind == "rope"]
    groups = page.eval_on_selector_all("#pe-model-group option", "os => os.map(o => o.value)")
    assert bool(groups) == bool(rope)
    covered = set()
    for value in groups:
        if params(page)["group"] != int(value):
            page.locator("#pe-model-group").select_option(value)
            wait_params(page, group=int(value))
        pairs = cells(page, "pairs")
        theta = np.array([float(row[1][1]) for row in pairs])
        # the group's layers are the ones with exactly these frequencies
        members = [
            layer.index
            for layer in rope
            if np.allclose(theta, as_float64(layer.inv_freq), rtol=RTOL, atol=0)
        ]
        assert members, f"group {value} matches no layer"
        covered |= set(members)
        layer = next(layer for layer in rope if layer.index == members[0])
        # θ'/θ against the same head without scaling (p-RoPE: the whole head's frequencies)
        partial = layer.scaling.partial_rotary_factor
        unscaled = None if layer.rope_type == "proportional" or partial is None else {
            "partial_rotary_factor": partial}  # fmt: skip
        plain = posenc.rope_inv_freq(layer.head_dim, base=layer.rope_theta, scaling=unscaled)[0]
        ratio = np.array([np.nan if row[2][1] is None else float(row[2][1]) for row in pairs])
        want = as_float64(layer.inv_freq) / as_float64(plain)
        np.testing.assert_array_equal(np.isnan(ratio), np.isnan(want))
        np.testing.assert_allclose(ratio[~np.isnan(want)], want[~np.isnan(want)], rtol=2 * RTOL)
        wavelength = np.array([float(row[3][1]) for row in pairs])
        with np.errstate(divide="ignore"):  # p-RoPE's still pairs: θ = 0, an endless wavelength
            np.testing.assert_allclose(wavelength, 2 * math.pi / as_float64(layer.inv_freq),
                                       rtol=RTOL)  # fmt: skip
        turns = np.array([float(row[5][1]) for row in pairs])
        np.testing.assert_allclose(turns, length * as_float64(layer.inv_freq) / (2 * math.pi),
                                   rtol=RTOL)  # fmt: skip
        axes = [row[7][1] for row in pairs]
        want_axes = (
            [None] * len(pairs) if layer.mrope_axes is None else [str(a) for a in layer.mrope_axes]
        )
        assert axes == want_axes
        factor = float(page.get_attribute(PANEL, "data-attention-factor"))
        assert factor == pytest.approx(layer.attention_factor, rel=1e-12)
    assert covered == {layer.index for layer in rope}
    assert page.locator(f"{PANEL} [data-error]").is_hidden()
    return described


# ── the configs the build puts in the page ─────────────────────────────────────────────────


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_holds_posencs_released_configs(explorer, lang) -> None:
    page = explorer[lang]
    embedded = json.loads(page.locator("#pe-released-configs").get_attribute("data-configs"))
    assert [entry["name"] for entry in embedded] == list(NAMES)
    for entry in embedded:
        source = released_config(entry["name"])
        assert {key: entry[key] for key in ("model", "hub", "read", "revision", "config")} == {
            key: source[key] for key in ("model", "hub", "read", "revision", "config")
        }
    options = page.eval_on_selector_all("#pe-model-model option", "os => os.map(o => o.value)")
    assert options == [*NAMES, "pasted"]


# ── every released config, as posenc describes it ──────────────────────────────────────────


@pytest.mark.parametrize("name", NAMES)
def test_released_config_matches_describe(explorer, name) -> None:
    page = explorer["en"]
    pick(page, name)
    config = released_config(name)["config"]
    described = check_against_posenc(page, config)
    # the length starts at the context the config states
    assert params(page)["seqLen"] == (described.max_position_embeddings or 4096)
    # the call under the panel gives the same layers
    code = page.locator(f'{PANEL} code[data-out="python"]').inner_text()
    again = eval(code, {"posenc": posenc})  # noqa: S307  (our own page)
    assert [layer.kind for layer in again.layers] == [layer.kind for layer in described.layers]
    for a, b in zip(again.layers, described.layers, strict=True):
        assert a.inv_freq is None or torch.equal(a.inv_freq, b.inv_freq)
    # its source is linked
    assert (
        page.locator(f"{PANEL} a[data-source]").get_attribute("href")
        == released_config(name)["read"]
    )
    # the charts a RoPE model has; the ramp chart only where the scaling changes a pair
    rope = [layer for layer in described.layers if layer.kind == "rope"]
    wavelength = page.locator(f'{PANEL} .pe-plot[data-chart="model-wavelength"]')
    assert wavelength.is_visible() == bool(rope)
    if rope:
        assert wavelength.locator("circle").count() >= rope[0].rotary_dim // 2
        changed = any(layer.rope_type not in ("default",) for layer in rope)
        assert page.locator(f'{PANEL} .pe-plot[data-chart="model-ratio"]').is_visible() == changed


def test_length_dependent_frequencies_follow_the_length(explorer) -> None:
    """Dynamic NTK: at the trained length the frequencies are the default ones, past it the
    base grows; the page follows the length control as posenc follows seq_len."""
    page = explorer["en"]
    config = _tiny("llama", rope_scaling={"rope_type": "dynamic", "factor": 4.0})
    paste(page, config)
    assert params(page)["seqLen"] == 256
    check_against_posenc(page, config)
    ratios = [row[2][1] for row in cells(page, "pairs")]
    assert all(float(r) == 1 for r in ratios)
    page.locator("#pe-model-seqLen").fill("1000")
    wait_params(page, seqLen=1000)
    check_against_posenc(page, config)
    assert float(cells(page, "pairs")[-1][2][1]) < 0.5  # the slowest pair slowed down


PHI3 = {
    "model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
    "num_hidden_layers": 4, "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"type": "longrope", "short_factor": [1.0 + i / 100 for i in range(48)],
                     "long_factor": [2.0 + i / 10 for i in range(48)]},
}  # fmt: skip

PASTED = {
    "phi3-longrope-long": (PHI3, None),
    "phi3-longrope-short": (PHI3, 2048),
    "llama4-nope-and-step": (
        _tiny("llama4_text", head_dim=16, attention_chunk_size=64, rope_theta=500000.0,
              rope_scaling={"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 1.0, "original_max_position_embeddings": 64}),
        None,
    ),
    "smollm3-list": (_tiny("smollm3", no_rope_layers=[1, 0, 1, 1, 0, 1, 1, 1]), None),
    "command-r7b-shaped": (_tiny("cohere2", rope_theta=50000.0, sliding_window=32), None),
    "qwen3-vl-interleaved": (
        {"model_type": "qwen3_vl", "text_config": {
            "model_type": "qwen3_vl_text", "hidden_size": 4096, "num_attention_heads": 32,
            "head_dim": 128, "num_hidden_layers": 4, "max_position_embeddings": 262144,
            "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20],
                             "rope_type": "default"},
            "rope_theta": 5000000}},
        None,
    ),
    "deepseek-yarn-mscale": (
        {"model_type": "deepseek_v3", "num_hidden_layers": 3, "qk_rope_head_dim": 64,
         "max_position_embeddings": 163840, "rope_theta": 10000,
         "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                          "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                          "type": "yarn"}},
        None,
    ),
    "neox-odd-partial": ({**released_config("gpt-neox-20b")["config"], "rotary_pct": 0.3}, None),
    "gemma3-per-type-dict": (
        {"model_type": "gemma3_text", "hidden_size": 640, "num_attention_heads": 4,
         "head_dim": 256, "num_hidden_layers": 12, "max_position_embeddings": 32768,
         "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0,
                                                "rope_theta": 1e6},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
        None,
    ),
    "proportional": (
        _tiny("llama", head_dim=32, rope_parameters={
            "rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}),
        None,
    ),
    "mpt-12-heads": ({**released_config("mpt-7b")["config"], "n_heads": 12}, None),
    "gpt2-learned": ({"model_type": "gpt2"}, None),
}  # fmt: skip


@pytest.mark.parametrize(("config", "length"), PASTED.values(), ids=PASTED)
def test_pasted_config_matches_describe(explorer, config, length) -> None:
    page = explorer["en"]
    paste(page, config, length)
    described = check_against_posenc(page, config)
    kinds = {layer.kind for layer in described.layers}
    for kind in ("alibi", "learned"):
        assert page.locator(f'{PANEL} [data-show="{kind}"]').is_visible() == (kind in kinds)
    if "alibi" in kinds:
        slopes = described.layers[0].alibi_slopes
        shown = page.locator(f'{PANEL} [data-out="alibi-heads"]').inner_text()
        assert shown == str(len(slopes))
    assert page.locator(f"{PANEL} [data-released]").is_hidden()
    assert "json.load" in page.locator(f'{PANEL} code[data-out="python"]').inner_text()


def test_nope_and_local_layers_are_shown(explorer) -> None:
    """Llama 4's shape: NoPE layers are named as such, the RoPE layers carry their chunk."""
    page = explorer["en"]
    config, _ = PASTED["llama4-nope-and-step"]
    paste(page, config)
    layers = shown_layers(page)
    assert [layer["kind"] for layer in layers] == ["rope", "rope", "rope", "none"] * 2
    assert {layer["window"] for layer in layers if layer["kind"] == "rope"} == {64}
    texts = [row[3][0] for row in cells(page, "layers")]
    assert texts[3] == "none (NoPE)"
    assert page.locator(f'{PANEL} [data-out="none"]').inner_text() == "2"


# ── configs the panel cannot read ──────────────────────────────────────────────────────────


def shown_error(page) -> str:
    assert page.locator(f"{PANEL} [data-error]").is_visible()
    assert page.locator(f"{PANEL} [data-result]").is_hidden()
    return page.locator(f'{PANEL} [data-out="error"]').inner_text()


@pytest.mark.parametrize(("config", "error", "match"), BAD, ids=[m for _, _, m in BAD])
def test_malformed_config_shows_posencs_message(explorer, config, error, match) -> None:
    page = explorer["en"]
    paste(page, config)
    with pytest.raises(error) as raised:
        posenc.describe(config)
    assert shown_error(page) == str(raised.value)


@pytest.mark.parametrize("lang", LANGS)
def test_text_that_is_not_json_is_refused_then_a_good_config_read(explorer, lang) -> None:
    page = explorer[lang]
    paste(page, '{"model_type": "llama", "num_hidden_layers": 2,}')
    message = shown_error(page)
    assert message.startswith("config.json must be JSON")
    lead = page.locator(f"{PANEL} [data-error]").inner_text()
    assert ("读不了" in lead) == (lang == "zh")
    llama2 = released_config("llama-2-7b")["config"]
    paste(page, {**llama2, "rope_scaling": {"rope_type": "linear"}})
    assert "scaling['factor']" in shown_error(page)
    # fixed: the message goes, the layers come back
    config = {**llama2, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    paste(page, config)
    check_against_posenc(page, config)
    pick(page, "llama-3.1-8b")


# ── both languages, the keyboard, the phone ────────────────────────────────────────────────


@pytest.mark.parametrize("name", ["gemma-3-12b", "t5-base", "qwen2-vl-7b"])
def test_chinese_page_matches_describe(explorer, name) -> None:
    page = explorer["zh"]
    pick(page, name)
    check_against_posenc(page, released_config(name)["config"])
    texts = [row[3][0] for row in cells(page, "layers")]
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in t) or t in ("RoPE", "ALiBi") for t in texts)
    if name == "t5-base":
        assert cells(page, "layers")[0][0][0] == "编码器 0"
    option = page.locator("#pe-model-group option").first
    if option.count():
        assert "层" in option.inner_text() and "底数" in option.inner_text()
    pick(page, "llama-3.1-8b")


def test_panel_works_from_the_keyboard(explorer) -> None:
    page = explorer["en"]
    pick(page, "gemma-2-9b")
    page.focus("#pe-model-model")
    page.keyboard.press("ArrowDown")  # the next model in the list
    wait_params(page, model=NAMES[NAMES.index("gemma-2-9b") + 1])
    page.focus("#pe-model-group")
    page.keyboard.press("ArrowDown")  # Gemma 3: its second group of layers
    wait_params(page, group=1)
    page.focus("#pe-model-config")
    page.keyboard.press("Control+a")
    config = released_config("gpt-oss-20b")["config"]
    page.keyboard.insert_text(json.dumps(config))
    page.keyboard.press("Control+Enter")
    wait_params(page, model="pasted", text=json.dumps(config))
    check_against_posenc(page, config)
    pick(page, "llama-3.1-8b")


def test_panel_fits_a_360_px_phone(browser, site_url) -> None:
    from tests.browser.browsing import new_context

    context = new_context(
        browser, site_url, viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        watch = Watch(page)
        page.goto(EXPLORER.rel + "#your-model")
        open_panel(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        boxes = page.evaluate(
            """(s) => [...document.querySelectorAll(
                  s + ' :is(svg, input, select, textarea, button)')]
                .filter(e => e.offsetParent).map(e => e.getBoundingClientRect())
                .map(r => [r.left, r.right, r.height])""",
            PANEL,
        )
        assert boxes and all(0 <= left and right <= 360 for left, right, _ in boxes), boxes
        assert all(height >= 24 for _, _, height in boxes)
        assert not watch.problems
    finally:
        context.close()


def test_reading_a_pasted_config_makes_no_request(explorer) -> None:
    """The pasted text stays on the page: reading it, picking a model and changing the
    length ask nothing of any host, this one included."""
    page = explorer["en"]
    requests = []

    def record(request) -> None:
        requests.append(request)

    page.on("request", record)
    try:
        paste(page, released_config("gpt-oss-20b")["config"], 65536)
        pick(page, "qwen3-8b")
    finally:
        page.remove_listener("request", record)
    assert not requests, [r.url for r in requests]
    pick(page, "llama-3.1-8b")
