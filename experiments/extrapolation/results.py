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
"""

from __future__ import annotations

import json
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
