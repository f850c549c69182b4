"""The committed results of the SmolLM2 experiment: where they live, what a file holds, how to
read one.

``run.py`` writes ``results/<profile>.json`` ("full" is committed; chapter 19 reads it).
Schema::

    profile        "full" or "quick"
    config         the profile (lengths, trained, rounds, depths, bin, probe_every, budget,
                   seed), methods {name: {base, scaling}}, factor, model {package, file,
                   trained_length, base, head_dim}, needle, question, intro, digits,
                   text {file, tokens, sha256}, sink_tokens
    hardware       {cpu, threads}
    software       {python, torch, transformers}
    wall_seconds   the last run (model loading included); unit_seconds: the forward passes
                   of every kept unit, whichever run did them; seconds_by_threads: the same
                   by the number of torch threads they ran on ({threads: seconds})
    rounds         {length: rounds in which every method finished that length}
    passkey        {method: {length: {depth: {found, count, digits, logprob, distance}}}}:
                   needles found out of count; digits: mean number of the five digits that
                   were the most likely token; logprob: mean log-probability of the five
                   digits; distance: mean number of tokens from the needle to the end of the
                   question (the last three null if count is 0)
    perplexity     {method: {starts, perplexity, tokens}}: at the longest length, perplexity
                   of the filler tokens whose position is in [start, start + bin)
    attention      {method: {queries, sink, entropy}}: at the longest length, for the query
                   positions ``queries``, per layer: attention mass on the first sink_tokens
                   tokens and entropy (nats), mean over heads and rounds

Dynamic NTK is computed only past the trained length; below it its entries are plain RoPE's
(the same frequencies).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

DIRECTORY = Path(__file__).resolve().parent / "results"
LABELS = {  # the methods, in the order tables and figures show them
    "none": "plain RoPE",
    "linear": "PI (linear)",
    "ntk": "NTK-aware",
    "dynamic": "dynamic NTK",
    "yarn": "YaRN",
    "llama3": "Llama 3",
}
TOP_LEVEL = ("profile", "config", "hardware", "software", "wall_seconds", "seconds_by_threads",
             "rounds", "passkey", "perplexity", "attention")  # fmt: skip


def path(profile: str = "full") -> Path:
    return DIRECTORY / f"{profile}.json"


def validate(report: dict[str, Any], where: str = "report") -> dict[str, Any]:
    """Check a report's keys: every method, every length, every depth.

    Raises:
        ValueError: A missing key, method, length or depth, named.
    """
    if missing := [key for key in TOP_LEVEL if key not in report]:
        raise ValueError(f"{where}: missing keys {missing}")
    if set(report["passkey"]) != set(LABELS):
        raise ValueError(f"{where}: methods {sorted(report['passkey'])}, expected {sorted(LABELS)}")
    lengths = {str(n) for n in report["config"]["lengths"]}
    depths = {str(d) for d in report["config"]["depths"]}
    for method, by_length in report["passkey"].items():
        if set(by_length) != lengths:
            raise ValueError(f"{where}: {method!r} has lengths {sorted(by_length)}")
        for length, cells in by_length.items():
            if set(cells) != depths:
                raise ValueError(f"{where}: {method!r} at {length} has depths {sorted(cells)}")
    for key in ("perplexity", "attention"):
        if report[key] and set(report[key]) != set(LABELS):
            raise ValueError(f"{where}: {key} for {sorted(report[key])}")
    return report


def write(report: dict[str, Any], file: Path) -> None:
    validate(report, str(file))
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def load(profile: str = "full") -> dict[str, Any]:
    """The results of a profile, checked.

    Raises:
        FileNotFoundError: The profile has not been run (``make smollm2`` runs "full").
    """
    file = path(profile)
    if not file.is_file():
        raise FileNotFoundError(f"{file} not found: `make smollm2` writes results/full.json")
    return validate(json.loads(file.read_text(encoding="utf-8")), str(file))


def found(report: dict[str, Any], method: str, length: int) -> tuple[int, int]:
    """(needles found, needles asked) for a method at a length, over every depth."""
    cells = report["passkey"][method][str(length)].values()
    return sum(c["found"] for c in cells), sum(c["count"] for c in cells)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion k/n (the usual one for small n)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
