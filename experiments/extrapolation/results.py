"""The experiment's committed results: where they live, what a file holds, how to read one.

``train.py`` writes ``results/<profile>.json``; only ``full.json`` is committed (chapter 8's
table and figure read it, chapter 9 compares methods with it). Schema::

    profile        "full" or "quick"
    config         {dim, heads, layers, batch, steps, lr, eval_tokens, train_len, eval_lengths,
                    seed, vocab, corpus}
    hardware       {cpu, threads, device}
    software       {python, torch}
    wall_seconds, cpu_seconds
    results        {method: {trained_as, train_seconds, final_train_loss,
                             perplexity: {length: value or null},
                             perplexity_beyond_128: {length: value or null}}}

A perplexity is null where a method cannot run at that length (learned positions past the
table).

``seeds.py`` writes ``results/seeds.json`` (full profile) or ``results/seeds-quick.json``
(quick profile): the same models over several seeds, with passkey retrieval. Until the full
profile has been run and committed, chapter 8 shows the committed quick profile, labelled as a
pipeline check (``committed_seeds``). Schema::

    profile        "full" or "quick"
    config         {lm: {the train.py profile}, seeds, retrieval: {steps, batch, lr, examples,
                    digits, depths, chance}, train_len, eval_lengths, vocab, corpus}
    hardware       {cpu, threads, device, jobs}
    software       {python, torch}
    wall_seconds   the whole run; cpu_seconds: the sum over its jobs
    runs           {method: {seed: {trained_as, final_train_loss, retrieval_final_loss,
                                    cpu_seconds,
                                    perplexity: {length: value or null},
                                    perplexity_beyond_128: {length: value or null},
                                    retrieval: {length: accuracy or null},
                                    retrieval_by_depth: {length: {depth: accuracy} or null}}}}

``spread`` summarises one method at one length over the seeds: (mean, min, max).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

DIRECTORY = Path(__file__).resolve().parent / "results"
# the methods, in the order tables and figures show them, with their display names
LABELS = {
    "nope": "none (NoPE)",
    "sinusoidal": "sinusoidal",
    "learned": "learned",
    "t5": "T5 bias",
    "rope": "RoPE",
    "rope+pi": "RoPE + PI",
    "rope+ntk": "RoPE + NTK",
    "rope+yarn": "RoPE + YaRN",
    "alibi": "ALiBi",
}
TOP_LEVEL = ("profile", "config", "hardware", "software", "wall_seconds", "results")
METHOD = ("trained_as", "final_train_loss", "perplexity", "perplexity_beyond_128")


def path(profile: str = "full") -> Path:
    return DIRECTORY / f"{profile}.json"


def validate(report: dict[str, Any], where: str = "report") -> dict[str, Any]:
    """Check a report's keys; every method has a perplexity at every evaluation length.

    Raises:
        ValueError: A missing key or length, named.
    """
    if missing := [key for key in TOP_LEVEL if key not in report]:
        raise ValueError(f"{where}: missing keys {missing}")
    if set(report["results"]) != set(LABELS):
        raise ValueError(f"{where}: methods {sorted(report['results'])}, expected {sorted(LABELS)}")
    lengths = {str(n) for n in report["config"]["eval_lengths"]}
    for method, entry in report["results"].items():
        if absent := [key for key in METHOD if key not in entry]:
            raise ValueError(f"{where}: method {method!r} lacks {absent}")
        if set(entry["perplexity"]) != lengths:
            raise ValueError(
                f"{where}: method {method!r} has perplexities at {sorted(entry['perplexity'])}, "
                f"expected {sorted(lengths)}"
            )
    return report


def load(profile: str = "full") -> dict[str, Any]:
    """The results of a profile, checked.

    Raises:
        FileNotFoundError: The profile has not been run (``make experiment`` runs "full").
    """
    file = path(profile)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make experiment` writes results/full.json")
    return validate(json.loads(file.read_text(encoding="utf-8")), str(file))


SEEDS_TOP_LEVEL = (
    "profile", "config", "hardware", "software", "wall_seconds", "cpu_seconds", "runs",
)  # fmt: skip
RUN = ("trained_as", "final_train_loss", "perplexity", "perplexity_beyond_128", "retrieval",
       "retrieval_by_depth")  # fmt: skip


def seeds_path(profile: str = "full") -> Path:
    return DIRECTORY / ("seeds.json" if profile == "full" else f"seeds-{profile}.json")


def validate_seeds(report: dict[str, Any], where: str = "report") -> dict[str, Any]:
    """Check a seeds report: every method, every seed, a value or null at every length.

    Raises:
        ValueError: A missing key, method, seed or length, named.
    """
    if missing := [key for key in SEEDS_TOP_LEVEL if key not in report]:
        raise ValueError(f"{where}: missing keys {missing}")
    if set(report["runs"]) != set(LABELS):
        raise ValueError(f"{where}: methods {sorted(report['runs'])}, expected {sorted(LABELS)}")
    seeds = {str(s) for s in report["config"]["seeds"]}
    lengths = {str(n) for n in report["config"]["eval_lengths"]}
    for method, by_seed in report["runs"].items():
        if set(by_seed) != seeds:
            raise ValueError(f"{where}: method {method!r} has seeds {sorted(by_seed)}")
        for seed, run in by_seed.items():
            if absent := [key for key in RUN if key not in run]:
                raise ValueError(f"{where}: method {method!r} seed {seed} lacks {absent}")
            for key in RUN[2:]:
                if set(run[key]) != lengths:
                    raise ValueError(
                        f"{where}: method {method!r} seed {seed}: {key} at {sorted(run[key])}, "
                        f"expected {sorted(lengths)}"
                    )
    return report


def load_seeds(profile: str = "full") -> dict[str, Any]:
    """The seeds results of a profile, checked.

    Raises:
        FileNotFoundError: The profile has not been run (``make experiment`` runs "full").
    """
    file = seeds_path(profile)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make experiment` writes results/seeds.json")
    return validate_seeds(json.loads(file.read_text(encoding="utf-8")), str(file))


def spread(
    report: dict[str, Any], method: str, length: int, key: str = "perplexity"
) -> tuple[float, float, float] | None:
    """(mean, min, max) over the seeds of ``key`` for one method at one length; None where the
    method cannot run there."""
    values = [run[key][str(length)] for run in report["runs"][method].values()]
    if not values or any(v is None for v in values):
        return None
    return statistics.fmean(values), min(values), max(values)


def committed_seeds() -> dict[str, Any]:
    """results/seeds.json once the full profile has been run, else the committed quick profile
    (results/seeds-quick.json: a pipeline check whose numbers measure nothing)."""
    return load_seeds("full" if seeds_path("full").is_file() else "quick")
