"""Budgets: Lighthouse scores (mobile profile) and page weight.

Measuring every page takes longer than ``make test`` can afford (about 40 s a page for three
runs): ``make lighthouse`` measures all of them and commits ``benchmarks/results/lighthouse.json``.
Here, the heaviest page of each kind (a chapter in each language, the API reference, the
explorer, a notebook) is measured again, by the median of three runs, never the best: the
simulated mobile score of one page moves by about ±10 from run to run on a 2-core machine.
When that median falls below the performance budget, two runs more decide, by the median of
all five (three runs once gave a median of 88 for a page committed at 98).
The committed results must cover every page of the built site and meet the budgets; every
page's committed scores, and the scores measured here, are printed at the end of the run
("browser budgets").

Every budget is hard for the committed results. Measured here, accessibility, best practices
and SEO are hard too; performance is judged when this machine is about as fast as the one
that measured the committed results (Lighthouse's ``benchmarkIndex``, at least
``COMPARABLE_SPEED`` of theirs): the simulated score starts from the work it observes, so on a
machine half as fast every page scores lower for that reason alone (docs/reference/site-speed.md).
On a slower machine a page below the performance budget reports an expected failure with both
speeds and its numbers. For the same reason each page is measured with no other test of the
run beside it (tests/machine.py: `make test` runs two processes), and under `make stress`,
which keeps every core busy on purpose, performance is reported, not judged.
"""

from __future__ import annotations

import os
import statistics
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks import results as results_file
from benchmarks.lighthouse import (
    BUDGETS,
    LIGHTHOUSE,
    measure_page,
    page_kind,
    site_pages,
)
from tests import machine
from tests.browser import sitepages
from tests.browser.browsing import REPORT, chromium_path, new_context

pytestmark = pytest.mark.browser

RUNS = int(os.environ.get("POSENC_LIGHTHOUSE_RUNS", "3"))
# performance measured here is judged against the budget when this machine's benchmarkIndex
# is at least this share of the committed results' (their median over every run)
COMPARABLE_SPEED = 0.9
CHAPTER_WEIGHT_BUDGET = 1_500_000  # bytes, everything transferred, math font included


def _size(rel: str) -> int:
    return (sitepages.SITE / rel / "index.html").stat().st_size


def heaviest_pages() -> dict[str, str]:
    """The largest page (HTML bytes) of each kind: {"chapter (en)": "chapters/05-rope/", ...}."""
    if not sitepages.built():
        return {}
    groups: dict[str, list[str]] = {}
    for rel in site_pages(sitepages.SITE):
        kind = page_kind(rel)
        if kind == "chapter":
            groups.setdefault(f"chapter ({sitepages.Page(rel).lang})", []).append(rel)
        elif kind in ("api", "explorer", "notebook"):
            groups.setdefault(kind, []).append(rel)
    return {label: max(rels, key=_size) for label, rels in groups.items()}


HEAVIEST = heaviest_pages()


def _line(page: str, scores: dict, extra: str = "") -> str:
    shown = ", ".join(f"{key} {scores[key]}" for key in BUDGETS)
    return f"{page or '(home)'}: {shown}{extra}"


# Pages measured at the same time, each by RUNS runs in a row. Lighthouse mostly waits on the
# page; two at once scored as one at a time (medians 97-99 either way, 110 s instead of 175 s
# for the five pages on this 2-core machine), five at once took the API page to 89.
PAGES_AT_ONCE = 2


@pytest.fixture(scope="module")
def measured(site_url, tmp_path_factory, request) -> dict[str, dict]:
    """Every heaviest page measured, with no other test of this run beside the measurements
    (tests/machine.py): the simulated score counts what else the machine was doing."""
    if not LIGHTHOUSE.exists():
        pytest.fail("node_modules/.bin/lighthouse missing: run `make install` (npm ci)")
    if chromium_path() is None:
        pytest.skip("Chromium not found")

    def measure(label: str) -> dict:
        workdir = tmp_path_factory.mktemp("lh")
        return measure_page(site_url + HEAVIEST[label], RUNS, workdir, more_if_below=2)

    labels = sorted(HEAVIEST)
    with machine.alone(machine.run_folder(request)):
        with ThreadPoolExecutor(PAGES_AT_ONCE) as pool:
            return dict(zip(labels, pool.map(measure, labels), strict=True))


@pytest.mark.alone_on_the_machine
@pytest.mark.parametrize("label", sorted(HEAVIEST))
def test_heaviest_page_of_each_kind(label, measured) -> None:
    rel = HEAVIEST[label]
    measured = measured[label]
    scores = measured["scores"]
    REPORT.append(
        f"Lighthouse {label}, "
        + _line(
            rel,
            scores,
            f" (performance runs {measured['performance_runs']}, median"
            f" {scores['performance']}; machine benchmarkIndex {measured['benchmark_index']}"
            f"; {measured['transfer_bytes'] / 1e3:.0f} kB transferred)",
        )
    )
    misses = [
        f"{key} {scores[key]} < {budget}; audits below 1: {measured['below_budget'].get(key, [])}"
        for key, budget in BUDGETS.items()
        if scores[key] < budget
    ]
    hard = [miss for miss in misses if not miss.startswith("performance ")]
    assert not hard, f"{rel}:\n  " + "\n  ".join(hard)
    if misses and os.environ.get("POSENC_CORES_KEPT_BUSY") == "1":  # set by tools/stress.py
        pytest.xfail(f"{rel}: {misses[0]}, measured while every core was kept busy on purpose")
    if misses:
        speed = statistics.median(measured["benchmark_index"])
        committed = _committed_speed()
        if speed < COMPARABLE_SPEED * committed:
            pytest.xfail(
                f"{rel}: {misses[0]}, measured on a machine slower (benchmarkIndex {speed:.0f})"
                f" than the committed results' ({committed:.0f}): not comparable"
            )
    assert not misses, f"{rel}:\n  " + "\n  ".join(misses)


def _committed_speed() -> float:
    """The median benchmarkIndex of every run behind the committed results."""
    pages = results_file.load_lighthouse()["pages"]
    return statistics.median(index for row in pages for index in row["benchmark_index"])


def test_committed_results_cover_every_page_within_budget() -> None:
    """benchmarks/results/lighthouse.json: every page of the built site, each within the
    budgets by the median of its runs. docs/reference/site-speed.md prints its table."""
    if not sitepages.built():
        pytest.skip("site not built")
    results = results_file.load_lighthouse()
    rows = {row["page"]: row for row in results["pages"]}
    REPORT.append(
        f"Lighthouse, committed results ({results['created']}, median of {results['runs']} "
        f"runs, math output {results['math_output']}, load average "
        f"{results['load_average']['start']}-{results['load_average']['end']}):"
    )
    for page, row in rows.items():
        REPORT.append(
            "  "
            + _line(
                page,
                row["scores"],
                f" (runs {row['performance_runs']}, benchmarkIndex "
                f"{round(statistics.median(row['benchmark_index']))}, "
                f"{row['bytes']['html_gzip'] / 1e3:.0f} kB HTML gzip)",
            )
        )
    built = set(site_pages(sitepages.SITE))
    missing, stale = sorted(built - set(rows)), sorted(set(rows) - built)
    below = [
        f"{page or '(home)'} {key} {row['scores'][key]} < {budget}"
        for page, row in rows.items()
        for key, budget in BUDGETS.items()
        if row["scores"][key] < budget
    ]
    assert not stale, f"scores of pages the site no longer has: {stale} (`make lighthouse`)"
    assert not missing, (
        f"{len(missing)} pages without committed scores, e.g. {missing[:3]}; measure them "
        "with `python -m benchmarks.lighthouse --only PAGE ...` (or all: `make lighthouse`)"
    )
    assert not below, "below budget: " + "; ".join(below)


@pytest.mark.skipif("chapter (en)" not in HEAVIEST, reason="no chapter in the built site")
@pytest.mark.parametrize("lang", sitepages.LANGS)
def test_chapter_page_weight(browser, site_url, lang) -> None:
    """All bytes a reader downloads for the heaviest chapter, scrolled to the end (lazy images
    too, the search index, the math font)."""
    chapter = sitepages.Page(HEAVIEST["chapter (en)"]).in_lang(lang)
    context = new_context(browser, site_url)
    try:
        page = context.new_page()
        requests = []
        page.on("requestfinished", lambda request: requests.append(request))
        page.goto(chapter.rel, wait_until="networkidle")
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_load_state("networkidle")
        # the search index arrives 3 s after load (overrides/main.html): count it too
        page.wait_for_timeout(3500)
        page.wait_for_load_state("networkidle")
        total = 0
        for request in requests:
            sizes = request.sizes()
            total += sizes["responseBodySize"] + sizes["responseHeadersSize"]
    finally:
        context.close()
    REPORT.append(
        f"page weight {chapter}: {total / 1e6:.2f} MB in {len(requests)} requests "
        f"(budget {CHAPTER_WEIGHT_BUDGET / 1e6:.1f} MB)"
    )
    assert total <= CHAPTER_WEIGHT_BUDGET
