"""The page "How fast the site loads" (docs/reference/site-speed.md): the Lighthouse pipeline
behind its tables (benchmarks/lighthouse.py).

Lighthouse itself is not run here (tests/browser/test_lighthouse.py does, in `make test`);
these tests replace it with fixed reports and check what the page says about the method.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import lighthouse
from benchmarks import results as results_file
from tools import formulas


def _report(performance: float) -> dict:
    """A Lighthouse JSON report reduced to the fields benchmarks/lighthouse.py reads."""
    audits = {audit: {"numericValue": 1000.0} for audit in lighthouse.METRICS}
    audits["total-byte-weight"] = {"numericValue": 300_000.0}
    categories = {
        key: {"score": performance if key == "performance" else 1.0, "auditRefs": []}
        for key in lighthouse.CATEGORIES
    }
    return {"categories": categories, "audits": audits, "environment": {"benchmarkIndex": 900}}


def test_a_page_is_judged_by_the_median_of_its_runs(monkeypatch, tmp_path: Path) -> None:
    """'each page is loaded three times in a row and judged by the median of its runs, never
    the best': runs of 50, 90, 70 give 70 (the best would be 90); runs of 20, 80, 90 give 80
    (the mean would be 63)."""
    for runs, median in (((0.5, 0.9, 0.7), 70), ((0.2, 0.8, 0.9), 80)):
        scores = iter(runs)
        monkeypatch.setattr(
            lighthouse, "run_lighthouse", lambda *a, s=scores, **k: _report(next(s))
        )
        measured = lighthouse.measure_page("http://x/", len(runs), tmp_path, chrome="chromium")
        assert measured["performance_runs"] == [round(100 * r) for r in runs]
        assert measured["scores"]["performance"] == median
        assert len(measured["benchmark_index"]) == len(runs)  # recorded for every run


def test_runs_below_the_budget_are_decided_by_more_runs(monkeypatch, tmp_path: Path) -> None:
    """With ``more_if_below``, a median of three below the performance budget takes that many
    runs more and the median of all: 98, 88, 88 then 97, 96 gives 96; a page truly below
    the budget (80, 85, 95, then 84, 86) stays below it (85); a median at or above the budget
    takes no extra run (92, 88, 95: three runs, 92)."""
    cases = (
        ((0.98, 0.88, 0.88, 0.97, 0.96), 5, 96),
        ((0.80, 0.85, 0.95, 0.84, 0.86), 5, 85),
        ((0.92, 0.88, 0.95, 0.10, 0.10), 3, 92),
    )
    for runs, used, median in cases:
        scores = iter(runs)
        monkeypatch.setattr(
            lighthouse, "run_lighthouse", lambda *a, s=scores, **k: _report(next(s))
        )
        measured = lighthouse.measure_page("http://x/", 3, tmp_path, more_if_below=2)
        assert measured["performance_runs"] == [round(100 * r) for r in runs[:used]]
        assert measured["scores"]["performance"] == median


def test_budgets_are_those_the_page_states() -> None:
    assert lighthouse.BUDGETS == {
        "performance": 90, "accessibility": 95, "best-practices": 95, "seo": 95,
    }  # fmt: skip


def _fake_site(root: Path) -> Path:
    for rel in ("", "zh/", "chapters/05-rope/", "zh/chapters/05-rope/", "reference/api/",
                "explorer/", "notebooks/rope/", "assets/x/", "search/", "404/"):  # fmt: skip
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel / "index.html").write_text(
            '<p><span class="katex"><math><mi>x</mi></math></span></p>', encoding="utf-8"
        )
    return root


def test_every_page_in_both_languages_and_its_kind(tmp_path: Path) -> None:
    """`make lighthouse` measures every page in both languages; `make test` picks the
    heaviest page of each kind: a chapter per language, the API reference, the explorer, a
    notebook."""
    pages = lighthouse.site_pages(_fake_site(tmp_path))
    assert pages == ["", "zh/", "chapters/05-rope/", "zh/chapters/05-rope/", "explorer/",
                     "notebooks/rope/", "reference/api/"]  # fmt: skip
    kinds = {p: (lighthouse.page_kind(p), lighthouse.page_lang(p)) for p in pages}
    assert kinds["zh/chapters/05-rope/"] == ("chapter", "zh")
    assert kinds["reference/api/"] == ("api", "en")
    assert kinds["explorer/"][0] == "explorer" and kinds["notebooks/rope/"][0] == "notebook"
    makefile = (results_file.DIRECTORY.parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "-m benchmarks.lighthouse $(LIGHTHOUSE_ARGS)" in makefile  # no --only by default


def test_formula_bytes_count_the_whole_outermost_formula() -> None:
    formula = (
        '<span class="katex-display"><span class="katex"><math><mi>x</mi></math></span></span>'
    )
    page = f"<p>a {formula} b <span>not math</span></p>"
    assert lighthouse.formula_bytes(page) == len(formula.encode())
    assert lighthouse.formula_bytes(page + page) == 2 * len(formula.encode())


def test_math_pages_are_the_formula_heaviest_english_chapters(tmp_path: Path) -> None:
    """'the two formula-heaviest chapters': by formula bytes, English chapters only."""
    formula = '<span class="katex"><math><mi>x</mi></math></span>'
    for rel, count in (("chapters/01-a/", 1), ("chapters/02-b/", 5), ("chapters/03-c/", 3),
                       ("zh/chapters/01-a/", 9), ("reference/api/", 9)):  # fmt: skip
        (tmp_path / rel).mkdir(parents=True)
        (tmp_path / rel / "index.html").write_text(formula * count, encoding="utf-8")
    assert lighthouse.math_pages(tmp_path) == ["chapters/02-b/", "chapters/03-c/"]


def test_compare_math_builds_a_valid_other_output(monkeypatch, tmp_path: Path) -> None:
    """--compare-math builds the site with KaTeX's HTML and MathML (a mode tools/formulas.py
    knows) and measures only the English formula-heaviest chapters, reusing this run's."""
    monkeypatch.delenv("POSENC_MATH_OUTPUT", raising=False)
    assert formulas.output_mode() == "mathml"  # the site ships MathML alone
    built, measured = [], []

    def build_site(destination: Path, math_output: str) -> None:
        assert math_output in formulas.OUTPUTS
        built.append(math_output)
        _fake_site(destination)

    def measure_site(site, runs, only=None, log=print, on_row=None, exact=False):
        pages = [p for p in lighthouse.site_pages(site) if p in only] if exact else []
        measured.extend(pages)
        return [_row(p) for p in pages]

    monkeypatch.setattr(lighthouse, "build_site", build_site)
    monkeypatch.setattr(lighthouse, "measure_site", measure_site)
    site = _fake_site(tmp_path / "site")
    already = [_row("chapters/05-rope/")]
    comparison = lighthouse.compare_math(site, 1, log=lambda *a: None, already=already)
    assert built == ["katex-html"]
    assert comparison["chosen"] == "mathml" and set(comparison["modes"]) == {"mathml", "katex-html"}
    assert not any(p.startswith("zh/") for p in measured)
    assert measured.count("chapters/05-rope/") == 1  # only in the other build: reused here


def _row(page: str) -> dict:
    return {
        "page": page, "lang": lighthouse.page_lang(page), "kind": lighthouse.page_kind(page),
        "bytes": {"html": 1, "html_gzip": 1, "formulas": 1}, "transfer_bytes": 1,
        "scores": {key: 100 for key in lighthouse.BUDGETS}, "performance_runs": [100],
        "metrics": {}, "benchmark_index": [900], "below_budget": {},
    }  # fmt: skip


def test_a_full_run_replaces_the_pages_and_keeps_the_formula_comparison(
    monkeypatch, tmp_path: Path
) -> None:
    site = _fake_site(tmp_path / "site")
    out = tmp_path / "lighthouse.json"
    old = {"chosen": "mathml", "modes": {"mathml": {}, "katex-html": {}}}
    monkeypatch.setattr(lighthouse, "chromium_path", lambda: None)
    monkeypatch.setattr(lighthouse, "_versions", lambda chrome: {})

    def measure_site(site, runs, only=None, log=print, on_row=None, exact=False):
        pages = [p for p in lighthouse.site_pages(site) if not only or any(o in p for o in only)]
        rows = [_row(p) for p in pages]
        on_row(rows)
        return rows

    monkeypatch.setattr(lighthouse, "measure_site", measure_site)
    assert lighthouse.main(["--site", str(site), "--out", str(out), "--only", "chapters"]) == 0
    first = results_file.load_lighthouse(out)
    assert [r["page"] for r in first["pages"]] == ["chapters/05-rope/", "zh/chapters/05-rope/"]
    results = json.loads(out.read_text(encoding="utf-8"))
    results["math_comparison"] = old
    out.write_text(json.dumps(results), encoding="utf-8")
    assert lighthouse.main(["--site", str(site), "--out", str(out)]) == 0
    full = results_file.load_lighthouse(out)
    assert len(full["pages"]) == len(lighthouse.site_pages(site))
    assert full["math_comparison"] == old
    assert set(full["load_average"]) == {"start", "end"}


def test_committed_lighthouse_results_hold_the_heaviest_page_of_each_kind() -> None:
    """The chapter prints benchmarks/results/lighthouse.json and says it holds every page: at
    least every kind of page in both languages (chapters, API reference, explorer, notebooks,
    home), and the formula comparison of both outputs."""
    results = results_file.load_lighthouse()
    kinds = {(row["kind"], row["lang"]) for row in results["pages"]}
    expected = {"chapter", "api", "explorer", "notebook", "home", "reference"}
    assert {(kind, lang) for kind in expected for lang in ("en", "zh")} <= kinds
    comparison = results["math_comparison"]
    assert comparison["chosen"] == results["math_output"] == "mathml"
    assert set(comparison["modes"]) == {"mathml", "katex-html"}
    assert len(comparison["modes"]["mathml"]) == lighthouse.MATH_PAGES == 2
    assert all(page.startswith("chapters/") for page in comparison["modes"]["mathml"])
