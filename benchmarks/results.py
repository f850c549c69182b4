"""The committed benchmark results: where they live, what a file holds, how to read one.

``benchmarks/bench.py`` writes ``benchmarks/results/<device>.json`` (``cpu.json``,
``cuda.json``); chapter 10's tables and figures read them with `load`. Schema 1::

    schema         1
    created        "2026-11-21T18:59:15Z" (UTC)
    smoke          false for a full run (a smoke run uses tiny sizes: not for the chapter)
    machine        {cpu, cpu_count, torch_threads, torch, python, platform, device, [gpu, ...]}
    method         how rounds are timed and ratios taken
    allocator      which allocator the run used
    load_average   {start, end}: the 1-minute load average around the run
    results        one row per (benchmark, layout, length, implementation):
                   {bench: "rope" | "alibi" | "alibi_decode" | "sinusoidal", device, dtype, shape,
                    seq_len, impl, floor, median_ms, q1_ms, q3_ms, ratio, [layout], [gb_per_s],
                    [bytes_moved], [bias_bytes], [peak_extra_bytes]}
    skipped        what did not run, and why

``ratio`` is the median over rounds of an implementation's time divided by the time of the
benchmark's ``floor`` (``copy`` for RoPE) in the same round.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA = 1
DIRECTORY = Path(__file__).resolve().parent / "results"
TOP_LEVEL = ("schema", "smoke", "machine", "allocator", "load_average", "results", "skipped")
ROW = ("bench", "device", "dtype", "shape", "seq_len", "impl", "floor", "median_ms", "ratio")


def path(device: str = "cpu") -> Path:
    """The committed results file of a device."""
    return DIRECTORY / f"{device}.json"


def validate(results: dict[str, Any], where: str = "results") -> dict[str, Any]:
    """Check the keys of a results dict against the schema; return it unchanged.

    Raises:
        ValueError: Another schema version, or a missing key (named, with the row).
    """
    if results.get("schema") != SCHEMA:
        raise ValueError(f"{where}: schema must be {SCHEMA}, got {results.get('schema')!r}")
    missing = [key for key in TOP_LEVEL if key not in results]
    if missing:
        raise ValueError(f"{where}: missing keys {missing}")
    for number, row in enumerate(results["results"]):
        if absent := [key for key in ROW if key not in row]:
            raise ValueError(f"{where}: row {number} ({row.get('impl')}) lacks {absent}")
    return results


def load(device: str = "cpu") -> dict[str, Any]:
    """The committed results of ``device``, checked against the schema.

    Raises:
        FileNotFoundError: No results for that device (``make bench`` writes them).
    """
    file = path(device)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make bench` on a {device} machine writes it")
    return load_file(file)


def load_file(file: Path) -> dict[str, Any]:
    """A results file anywhere (e.g. a measurement record under ``results/gpu/``), checked
    against the schema."""
    return validate(json.loads(Path(file).read_text(encoding="utf-8")), str(file))


def rows(results: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    """The rows whose fields equal ``match``: ``rows(r, bench="rope", layout="half")``."""
    return [r for r in results["results"] if all(r.get(k) == v for k, v in match.items())]


def row(results: dict[str, Any], **match: Any) -> dict[str, Any]:
    """The one row matching ``match``.

    Raises:
        LookupError: No row, or more than one, matches.
    """
    found = rows(results, **match)
    if len(found) != 1:
        raise LookupError(f"{len(found)} rows match {match}, expected exactly one")
    return found[0]


# ── Lighthouse scores of the site's pages ───────────────────────────────────
# ``benchmarks/lighthouse.py`` (``make lighthouse``) writes ``benchmarks/results/lighthouse.json``;
# docs/reference/site-speed.md's table reads it with `load_lighthouse`. Schema 1::
#
#     schema         1
#     created        "2026-11-23T14:00:00Z" (UTC)
#     machine        {cpu_count, platform, lighthouse, chromium, node}
#     method         how the pages were served and measured
#     runs           Lighthouse runs per page
#     math_output    the formula output the site was built with (tools/formulas.py)
#     budgets        {category: lowest acceptable score}
#     load_average   {start, end}: the 1-minute load average around the run
#     pages          one row per page and language:
#                    {page: "chapters/05-rope/" (address; "" is the home page, "zh/..." Chinese),
#                     lang: "en" | "zh", kind: "home" | "chapter" | "api" | "reference" |
#                     "notebook" | "explorer" | "page",
#                     bytes: {html, html_gzip, formulas}, transfer_bytes (everything the page
#                     loaded, as Lighthouse counted it, median over runs),
#                     scores: {performance (median over runs), accessibility, best-practices,
#                     seo}, performance_runs: [each run's score], metrics: {fcp_ms, lcp_ms,
#                     tbt_ms, cls, si_ms} (medians), benchmark_index: [each run's],
#                     below_budget: {category: [audits that did not score 1]}}
#     [math_comparison]  {chosen: output, modes: {output: {page: {bytes, transfer_bytes,
#                     performance, performance_runs, metrics, benchmark_index}}}}: the
#                     formula-heaviest chapters built with each formula output

LIGHTHOUSE_SCHEMA = 1
LIGHTHOUSE_TOP_LEVEL = (
    "schema",
    "created",
    "machine",
    "method",
    "runs",
    "math_output",
    "budgets",
    "load_average",
    "pages",
)
LIGHTHOUSE_ROW = (
    "page",
    "lang",
    "kind",
    "bytes",
    "scores",
    "performance_runs",
    "metrics",
    "transfer_bytes",
    "benchmark_index",
)


def lighthouse_path() -> Path:
    """The committed Lighthouse results of the site's pages."""
    return DIRECTORY / "lighthouse.json"


def validate_lighthouse(results: dict[str, Any], where: str = "lighthouse") -> dict[str, Any]:
    """Check a Lighthouse results dict against its schema; return it unchanged.

    Raises:
        ValueError: Another schema version, or a missing key (named, with the page).
    """
    if results.get("schema") != LIGHTHOUSE_SCHEMA:
        raise ValueError(
            f"{where}: schema must be {LIGHTHOUSE_SCHEMA}, got {results.get('schema')!r}"
        )
    if missing := [key for key in LIGHTHOUSE_TOP_LEVEL if key not in results]:
        raise ValueError(f"{where}: missing keys {missing}")
    for row in results["pages"]:
        if absent := [key for key in LIGHTHOUSE_ROW if key not in row]:
            raise ValueError(f"{where}: page {row.get('page')!r} lacks {absent}")
        if set(row["scores"]) != set(results["budgets"]):
            raise ValueError(f"{where}: page {row['page']!r} has scores {sorted(row['scores'])}")
    return results


def load_lighthouse(file: Path | None = None) -> dict[str, Any]:
    """The committed Lighthouse results, checked against the schema.

    Raises:
        FileNotFoundError: No results yet (``make lighthouse`` writes them).
    """
    file = file or lighthouse_path()
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make lighthouse` writes it")
    return validate_lighthouse(json.loads(file.read_text(encoding="utf-8")), str(file))
