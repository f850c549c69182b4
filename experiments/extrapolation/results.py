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

Chapter 21 runs four rivals of RoPE (``RIVAL_LABELS``) through the same code, profile, seeds,
evaluation lengths and passkey test: ``train.py --rivals`` writes ``results/rivals.json`` and
``seeds.py --rivals`` writes ``results/rivals-seeds.json`` (quick profile: ``rivals-quick.json``
and ``rivals-seeds-quick.json``, not committed), in the schemas above with the rivals as the
methods; ``load``, ``load_seeds`` and the validators take ``rivals=True`` for them. Chapter 8's
files stay as they were. In ``rivals.json`` each method also has ``learned_positions`` (what
``train.learned_positions`` measures after training; null for xPos): KERPLE's ``r1``, ``r2`` per
head; FIRE's ``layers`` [{c, L}]; CoPE's ``last_row`` and ``layers`` [{mean_gate: {length: per
head}, clamped_share: {length: per head}, row_norms: per row of the table}].

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
# chapter 21: the rivals, in the order its table shows them
RIVAL_LABELS = {"xpos": "xPos", "kerple": "KERPLE (log)", "fire": "FIRE", "cope": "CoPE"}
TOP_LEVEL = ("profile", "config", "hardware", "software", "wall_seconds", "results")
METHOD = ("trained_as", "final_train_loss", "perplexity", "perplexity_beyond_128")


def labels(rivals: bool = False) -> dict[str, str]:
    """The methods of a results file and their display names: chapter 8's, or the rivals'."""
    return RIVAL_LABELS if rivals else LABELS


def path(profile: str = "full", rivals: bool = False) -> Path:
    if rivals:
        return DIRECTORY / ("rivals.json" if profile == "full" else f"rivals-{profile}.json")
    return DIRECTORY / f"{profile}.json"


def validate(report: dict[str, Any], where: str = "report", rivals: bool = False) -> dict[str, Any]:
    """Check a report's keys; every method has a perplexity at every evaluation length.

    Raises:
        ValueError: A missing key or length, named.
    """
    if missing := [key for key in TOP_LEVEL if key not in report]:
        raise ValueError(f"{where}: missing keys {missing}")
    expected = labels(rivals)
    if set(report["results"]) != set(expected):
        raise ValueError(
            f"{where}: methods {sorted(report['results'])}, expected {sorted(expected)}"
        )
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


def load(profile: str = "full", rivals: bool = False) -> dict[str, Any]:
    """The results of a profile, checked (``rivals=True``: chapter 21's rivals).

    Raises:
        FileNotFoundError: The profile has not been run (``make experiment`` runs "full",
            ``make experiment-rivals`` the rivals).
    """
    file = path(profile, rivals)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make experiment` writes results/full.json")
    return validate(json.loads(file.read_text(encoding="utf-8")), str(file), rivals)


SEEDS_TOP_LEVEL = (
    "profile", "config", "hardware", "software", "wall_seconds", "cpu_seconds", "runs",
)  # fmt: skip
RUN = ("trained_as", "final_train_loss", "perplexity", "perplexity_beyond_128", "retrieval",
       "retrieval_by_depth")  # fmt: skip


def seeds_path(profile: str = "full", rivals: bool = False) -> Path:
    name = "rivals-seeds" if rivals else "seeds"
    return DIRECTORY / (f"{name}.json" if profile == "full" else f"{name}-{profile}.json")


def validate_seeds(
    report: dict[str, Any], where: str = "report", rivals: bool = False
) -> dict[str, Any]:
    """Check a seeds report: every method, every seed, a value or null at every length.

    Raises:
        ValueError: A missing key, method, seed or length, named.
    """
    if missing := [key for key in SEEDS_TOP_LEVEL if key not in report]:
        raise ValueError(f"{where}: missing keys {missing}")
    expected = labels(rivals)
    if set(report["runs"]) != set(expected):
        raise ValueError(f"{where}: methods {sorted(report['runs'])}, expected {sorted(expected)}")
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


def load_seeds(profile: str = "full", rivals: bool = False) -> dict[str, Any]:
    """The seeds results of a profile, checked (``rivals=True``: chapter 21's rivals).

    Raises:
        FileNotFoundError: The profile has not been run (``make experiment`` runs "full").
    """
    file = seeds_path(profile, rivals)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make experiment` writes results/seeds.json")
    return validate_seeds(json.loads(file.read_text(encoding="utf-8")), str(file), rivals)


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
