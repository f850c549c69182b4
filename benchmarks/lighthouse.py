"""Lighthouse scores of every page of the built site, both languages (mobile profile).

    python -m benchmarks.lighthouse          # site/ -> benchmarks/results/lighthouse.json
    python -m benchmarks.lighthouse --site /tmp/site --runs 3 --only chapters/05-rope/
    python -m benchmarks.lighthouse --compare-math   # and the two formula outputs compared
    make lighthouse                          # build the site, then measure every page

Method. The site is served on 127.0.0.1 the way the browser tests serve it (gzip, one thread
per request: ``tests/browser/server.py``), and Lighthouse (``node_modules/.bin/lighthouse``,
Debian's Chromium) loads each page ``--runs`` times in a row, one run at a time. Chromium runs
without paint holding (``LIGHTHOUSE_CHROMIUM_ARGS``: headless, it otherwise showed a loaded
page's first frame one or two whole seconds late). Lighthouse's mobile profile simulates a
slow phone on a slow network from the load it observed, so its
performance score of one page moves by about ±10 from run to run on a 2-core machine: a page
is judged by the median of its runs, never the best. Accessibility, best practices and SEO do
not depend on timing; they are taken from the first run (later runs measure performance only).
Every run records Lighthouse's ``benchmarkIndex`` (its measure of this machine's speed; a busy
machine scores lower) and the run records the 1-minute load average before and after.

``--compare-math`` builds the site a second time with the other formula output
(``POSENC_MATH_OUTPUT``, see ``tools/formulas.py``) and measures the formula-heaviest chapters in
both builds: bytes of the HTML, of its formulas, and Lighthouse's median. The results land in
``math_comparison`` (docs/reference/site-speed.md prints them); a later run without
``--compare-math`` keeps the committed comparison. The schema is in ``benchmarks/results.py``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import results as results_file
from tests.browser.browsing import CHROMIUM_ARGS, chromium_path
from tests.browser.server import SiteServer
from tools import formulas, layout

LIGHTHOUSE = layout.ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
BUDGETS = {"performance": 90, "accessibility": 95, "best-practices": 95, "seo": 95}
METRICS = {  # Lighthouse audit id -> our key (milliseconds, CLS unitless)
    "first-contentful-paint": "fcp_ms",
    "largest-contentful-paint": "lcp_ms",
    "total-blocking-time": "tbt_ms",
    "cumulative-layout-shift": "cls",
    "speed-index": "si_ms",
}
LANGS = ("en", "zh")
# Headless Chromium (no display) with paint holding on presented the first frame of a long
# page only on a once-a-second BeginFrame: the page had loaded and painted (main thread idle)
# at ~0.3 s, yet the first frame appeared at 1.2 s or 2.2 s, and Lantern turned that into a
# speed index of 3.5-4 s. Upstream: GoogleChrome/lighthouse#17148 and #17230 (observed paint
# late by whole seconds in headless runs, viz BeginFrame throttling, PSI included). Without
# paint holding the first frame comes at ~0.3 s in every run; what a phone shows does not
# depend on it (paint holding only keeps the previous page on screen while the next loads).
LIGHTHOUSE_CHROMIUM_ARGS = ["--disable-features=PaintHolding"]
# seconds one Lighthouse run may take before it is tried once more (a 2-core machine busy with
# other work needs more than an idle one for the notebooks' long pages)
RUN_TIMEOUT_S = int(os.environ.get("POSENC_LIGHTHOUSE_TIMEOUT", "180"))
# how many formula-heaviest English chapters --compare-math measures in both formula outputs
MATH_PAGES = 2


# ── The site's pages ────────────────────────────────────────────────────────


def page_kind(rel: str) -> str:
    """What a page is, from its address: home, chapter, reference, notebook, explorer, page."""
    base = rel.removeprefix("zh/")
    if not base:
        return "home"
    first = base.split("/", 1)[0]
    return {
        "chapters": "chapter",
        "notebooks": "notebook",
        "reference": "api" if base.startswith("reference/api") else "reference",
        "explorer": "explorer",
    }.get(first, "page")


def page_lang(rel: str) -> str:
    return "zh" if rel.startswith("zh/") or rel == "zh/" else "en"


def site_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as addresses relative to its root ("" is the home)."""
    found = []
    for index in site.rglob("index.html"):
        rel = index.parent.relative_to(site).as_posix()
        if rel.split("/", 1)[0] in ("assets", "search", "404"):
            continue
        found.append("" if rel == "." else rel + "/")
    return sorted(found, key=lambda rel: (rel.removeprefix("zh/"), rel.startswith("zh/")))


_FORMULA_START = re.compile(r'<span class="katex(?:-display)?">')
_SPAN = re.compile(r"<(/?)span\b")


def formula_bytes(text: str) -> int:
    """Bytes of a page's rendered formulas: each outermost ``katex``/``katex-display`` span,
    whatever it holds (MathML, KaTeX's HTML, or both)."""
    total, pos = 0, 0
    while start := _FORMULA_START.search(text, pos):
        depth, end = 0, start.start()
        for tag in _SPAN.finditer(text, start.start()):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = text.index(">", tag.end()) + 1
                break
        total += len(text[start.start() : end].encode("utf-8"))
        pos = max(end, start.end())
    return total


def math_pages(site: Path, count: int = MATH_PAGES) -> list[str]:
    """The ``count`` English chapters of a built site with the most formula bytes, heaviest
    first."""
    chapters = [
        rel for rel in site_pages(site) if page_kind(rel) == "chapter" and page_lang(rel) == "en"
    ]
    weight = {
        rel: formula_bytes((site / rel / "index.html").read_text("utf-8")) for rel in chapters
    }
    return sorted(chapters, key=lambda rel: (-weight[rel], rel))[:count]


def page_bytes(site: Path, rel: str) -> dict[str, int]:
    """Bytes of a page's HTML: raw, gzip-compressed (as served), and of its formulas alone."""
    data = (site / rel / "index.html").read_bytes()
    return {
        "html": len(data),
        "html_gzip": len(gzip.compress(data, compresslevel=6, mtime=0)),
        "formulas": formula_bytes(data.decode("utf-8")),
    }


# ── Lighthouse ──────────────────────────────────────────────────────────────


def run_lighthouse(
    url: str, report: Path, categories=CATEGORIES, chrome: str | None = None
) -> dict:
    """One Lighthouse run (mobile profile) of ``url``; the parsed JSON report."""
    chrome = chrome or chromium_path()
    if chrome is None:
        raise RuntimeError("Chromium not found (make browser-deps installs it)")
    if not LIGHTHOUSE.exists():
        raise RuntimeError("node_modules/.bin/lighthouse missing: run `make install` (npm ci)")
    flags = " ".join(["--headless=new", *CHROMIUM_ARGS, *LIGHTHOUSE_CHROMIUM_ARGS])
    run = subprocess.run(
        [
            str(LIGHTHOUSE),
            url,
            "--quiet",
            "--output=json",
            f"--output-path={report}",
            f"--chrome-flags={flags}",
            "--only-categories=" + ",".join(categories),
            # a picture of the whole page, taken after the measurement and used by no audit
            # that is scored: ~2 s of each run on a long chapter
            "--disable-full-page-screenshot",
        ],
        env={**os.environ, "CHROME_PATH": chrome},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    if run.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}: {run.stderr[-2000:]}")
    return json.loads(report.read_text(encoding="utf-8"))


def scores(result: dict) -> dict[str, int]:
    """The 0-100 score of each category a report has."""
    return {key: round(100 * (cat["score"] or 0)) for key, cat in result["categories"].items()}


def failing_audits(result: dict, category: str) -> list[str]:
    """The weighted audits of a category that did not score 1, as ``id (score)``."""
    return [
        f"{a['id']} ({a['score']})"
        for ref in result["categories"][category]["auditRefs"]
        if ref["weight"] > 0
        for a in [result["audits"][ref["id"]]]
        if a["score"] is not None and a["score"] < 1
    ]


def measure_page(
    url: str, runs: int, workdir: Path, chrome: str | None = None, more_if_below: int = 0
) -> dict:
    """``runs`` Lighthouse runs of one page: median scores, every performance score, the
    median of each timing metric, bytes transferred and each run's benchmarkIndex.

    ``more_if_below``: when the median performance of the ``runs`` falls below the budget,
    that many runs more, and the median of all of them. A page's simulated score moves by
    about ±10 between runs on a 2-core machine, so a page that scores 98 most of the time
    sometimes has two low runs out of three (seen: a median of 88, runs of 98 and 88, on a page
    committed at 98);
    more runs decide what three cannot, and a page really below the budget stays below it
    in the median of five. Every run counts: none is dropped or retried for its score."""
    reports = []

    def run(number: int) -> None:
        categories = CATEGORIES if number == 0 else ("performance",)
        report = workdir / f"run{number}.json"
        try:
            reports.append(run_lighthouse(url, report, categories, chrome=chrome))
        except (subprocess.TimeoutExpired, RuntimeError):
            # a machine busy with something else (a run past its time, or Chromium's DevTools
            # protocol not answering in time, seen on the API pages under load): once more
            reports.append(run_lighthouse(url, report, categories, chrome=chrome))

    for number in range(runs):
        run(number)
    if statistics.median(scores(r)["performance"] for r in reports) < BUDGETS["performance"]:
        for number in range(runs, runs + more_if_below):
            run(number)
    first = reports[0]
    performance = [scores(r)["performance"] for r in reports]
    summary = scores(first)
    summary["performance"] = round(statistics.median(performance))
    metrics = {
        key: round(statistics.median(r["audits"][audit]["numericValue"] for r in reports), 3)
        for audit, key in METRICS.items()
    }
    return {
        "scores": summary,
        "performance_runs": performance,
        "metrics": metrics,
        "transfer_bytes": round(
            statistics.median(r["audits"]["total-byte-weight"]["numericValue"] for r in reports)
        ),
        "benchmark_index": [
            round(r.get("environment", {}).get("benchmarkIndex", 0)) for r in reports
        ],
        "below_budget": {
            key: failing_audits(first if key != "performance" else reports[-1], key)
            for key, budget in BUDGETS.items()
            if summary[key] < budget
        },
    }


# ── The whole site ──────────────────────────────────────────────────────────


def _versions(chrome: str | None) -> dict[str, str]:
    def output(*command: str) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    return {
        "lighthouse": output(str(LIGHTHOUSE), "--version"),
        "chromium": output(chrome, "--version") if chrome else "",
        "node": output("node", "--version"),
    }


def measure_site(
    site: Path,
    runs: int,
    only: list[str] | None = None,
    log=print,
    on_row=None,
    exact: bool = False,
) -> list[dict[str, object]]:
    """Every page of ``site`` (or those whose address contains one of ``only``; with
    ``exact``, those whose address is one of ``only``)."""
    chrome = chromium_path()
    pages = [
        p
        for p in site_pages(site)
        if not only or (p in only if exact else any(o in p for o in only))
    ]
    rows = []
    with SiteServer(site) as server, tempfile.TemporaryDirectory() as tmp:
        for number, rel in enumerate(pages, 1):
            started = time.monotonic()
            measured = measure_page(server.url + rel, runs, Path(tmp), chrome)
            row = {
                "page": rel,
                "lang": page_lang(rel),
                "kind": page_kind(rel),
                "bytes": page_bytes(site, rel),
                **measured,
            }
            rows.append(row)
            if on_row:
                on_row(rows)
            log(
                f"[{number}/{len(pages)}] {rel or '(home)'}: "
                + ", ".join(f"{k} {v}" for k, v in row["scores"].items())
                + f"  performance runs {row['performance_runs']}"
                + f"  benchmarkIndex {row['benchmark_index']}"
                + f"  ({time.monotonic() - started:.0f} s)"
            )
    return rows


def build_site(destination: Path, math_output: str) -> None:
    """Build the site with one formula output into ``destination`` (for --compare-math)."""
    env = {**os.environ, "POSENC_MATH_OUTPUT": math_output, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(destination)],
        cwd=layout.ROOT,
        env=env,
        check=True,
    )


def compare_math(
    site: Path, runs: int, log=print, already: list[dict] | None = None
) -> dict[str, object]:
    """The formula-heaviest chapters (English) in this build's formula output and in KaTeX's
    HTML + MathML (``katex-html``), built here into a temporary folder. Rows of ``already``
    (this run's measurements of ``site``) are reused instead of measured again."""
    chosen = formulas.output_mode()
    other = "katex-html" if chosen != "katex-html" else formulas.DEFAULT_OUTPUT
    wanted = math_pages(site)
    measured: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        other_site = Path(tmp) / "site"
        log(f"building the site with POSENC_MATH_OUTPUT={other} for the comparison ...")
        build_site(other_site, other)
        for mode, where in ((chosen, site), (other, other_site)):
            reused = [r for r in already or [] if r["page"] in wanted] if mode == chosen else []
            todo = [page for page in wanted if page not in {r["page"] for r in reused}]
            rows = reused + (
                measure_site(where, runs, only=todo, log=log, exact=True) if todo else []
            )
            measured[mode] = {
                row["page"]: {
                    "bytes": row["bytes"],
                    "transfer_bytes": row["transfer_bytes"],
                    "performance": row["scores"]["performance"],
                    "performance_runs": row["performance_runs"],
                    "metrics": row["metrics"],
                    "benchmark_index": row["benchmark_index"],
                }
                for row in rows
                if row["page"] in wanted
            }
    return {"chosen": chosen, "modes": measured}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=layout.site_dir(), help="the built site")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page")
    parser.add_argument("--only", nargs="*", help="only pages whose address contains these")
    parser.add_argument("--out", type=Path, default=results_file.lighthouse_path())
    parser.add_argument(
        "--compare-math", action="store_true", help="also measure the other formula output"
    )
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"error: {args.site}/index.html not found: build the site first (make build)")
        return 1
    started = _dt.datetime.now(_dt.UTC)
    load_start = os.getloadavg()[0]
    chrome = chromium_path()
    previous: dict = {}
    if args.out.is_file():
        # a partial run (--only) updates the pages it measures and keeps the others' scores;
        # any run keeps the committed formula comparison unless it measures a new one
        previous = results_file.load_lighthouse(args.out)
    built = set(site_pages(args.site))

    def write(measured: list[dict], math_comparison: dict | None = None) -> list[dict]:
        kept = {
            row["page"]: row
            for row in (previous.get("pages", []) if args.only else [])
            if row["page"] in built
        }
        kept.update({row["page"]: row for row in measured})
        pages = [kept[rel] for rel in sorted(kept, key=lambda r: (r.removeprefix("zh/"), r))]
        results = {
            "schema": results_file.LIGHTHOUSE_SCHEMA,
            "created": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "machine": {
                "cpu_count": os.cpu_count(),
                "platform": platform.platform(),
                **_versions(chrome),
            },
            "method": (
                f"Lighthouse mobile profile (simulated slow 4G and 4x CPU slowdown), "
                f"{args.runs} runs per page one after another, site served by "
                "tests/browser/server.py with gzip; Chromium headless with "
                + " ".join(LIGHTHOUSE_CHROMIUM_ARGS)
                + " (see benchmarks/lighthouse.py); performance is the median of the runs, "
                "the other categories come from the first run"
            ),
            "runs": args.runs,
            "math_output": formulas.output_mode(),
            "budgets": BUDGETS,
            "load_average": {
                "start": round(load_start, 2),
                "end": round(os.getloadavg()[0], 2),
            },
            "pages": pages,
        }
        comparison = math_comparison or previous.get("math_comparison")
        if comparison:
            results["math_comparison"] = comparison
        results_file.validate_lighthouse(results, str(args.out))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", "utf-8")
        return pages

    # written after every page, so an interrupted run keeps what it measured
    measured = measure_site(args.site, args.runs, args.only, on_row=write)
    comparison = compare_math(args.site, args.runs, already=measured) if args.compare_math else None
    pages = write(measured, comparison)
    below = [
        f"{row['page'] or '(home)'} {key} {row['scores'][key]}"
        for row in pages
        for key, budget in BUDGETS.items()
        if row["scores"][key] < budget
    ]
    print(f"wrote {args.out} ({len(pages)} pages)")
    if below:
        print("below budget: " + "; ".join(below))
    return 0


if __name__ == "__main__":
    sys.exit(main())
