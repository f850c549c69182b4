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
                   {bench: "rope" | "alibi" | "sinusoidal", device, dtype, shape, seq_len, impl,
                    floor, median_ms, q1_ms, q3_ms, ratio, [layout], [gb_per_s], [bytes_moved],
                    [bias_bytes], [peak_extra_bytes]}
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
    return validate(json.loads(file.read_text(encoding="utf-8")), str(file))


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
