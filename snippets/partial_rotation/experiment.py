"""Chapter "Partial and proportional rotation": tiny character LMs with full, partial and p-RoPE.

The model, corpus, learning-rate schedule and evaluation are chapter 8's
(``experiments/extrapolation``, reused through its functions, not copied), in a smaller
configuration (``PROFILES``: 2 heads, 400 steps); between the variants only the RoPE of every
layer changes, through ``TinyLM.set_rope_scaling`` before training. Each variant is trained with
three seeds (initial weights and batches) at length 128 and evaluated at 128 to 1024.

    python snippets/partial_rotation/experiment.py                 # tiny profile: seconds, prints only
    python snippets/partial_rotation/experiment.py --profile full  # rewrites results.json (~10 min CPU)

or side by side, one process per set of variants, then merged:

    python snippets/partial_rotation/experiment.py --profile full --variants rope,nope --part a.json
    python snippets/partial_rotation/experiment.py --profile full --variants neox_0.25 --part b.json
    python snippets/partial_rotation/experiment.py --merge a.json b.json

One CPU thread per run; the results file records settings, hardware, software and CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from experiments.extrapolation.corpus import ALPHABET, load_splits
from experiments.extrapolation.model import TinyLM
from experiments.extrapolation.train import (
    EVAL_LENGTHS,
    TRAIN_LEN,
    evaluate,
    fit,
    hardware,
)

RESULTS = Path(__file__).resolve().parent / "results.json"
PROFILES = {
    # under a minute of CPU time per model on one thread; head_dim = 64 / 2 = 32
    "full": dict(dim=64, heads=2, layers=2, batch=16, steps=400, lr=3e-3, eval_tokens=16384),
    # seconds: checks the pipeline, not the numbers
    "tiny": dict(dim=32, heads=2, layers=1, batch=4, steps=20, lr=3e-3, eval_tokens=1024),
}
SEEDS = {"full": (0, 1, 2), "tiny": (0,)}
# name -> (TinyLM method, RoPE scaling dict in transformers' rope_parameters convention)
VARIANTS = {
    "rope": ("rope", None),
    "neox_0.25": ("rope", {"partial_rotary_factor": 0.25}),
    "prope_0.75": ("rope", {"rope_type": "proportional", "partial_rotary_factor": 0.75}),
    "prope_0.25": ("rope", {"rope_type": "proportional", "partial_rotary_factor": 0.25}),
    "nope": ("nope", None),
}


def build(variant: str, cfg: dict, seed: int) -> TinyLM:
    """Chapter 8's TinyLM with this variant's RoPE; same initial weights for every variant."""
    method, scaling = VARIANTS[variant]
    torch.manual_seed(seed)
    model = TinyLM(
        method, vocab=len(ALPHABET), dim=cfg["dim"], heads=cfg["heads"], layers=cfg["layers"],
        train_len=TRAIN_LEN,
    )  # fmt: skip
    if method == "rope":
        model.set_rope_scaling(scaling)  # RoPE has no weights: the initial weights stay
    return model


def train(variant: str, train_ids: torch.Tensor, cfg: dict, seed: int) -> tuple[TinyLM, list]:
    """Chapter 8's training loop (experiments/extrapolation/train.py), one variant, one seed."""
    model = build(variant, cfg, seed)
    return model, fit(model, train_ids, cfg, seed)


def run(profile: str = "tiny", variants=tuple(VARIANTS), log=print) -> dict:
    torch.set_num_threads(1)
    cfg = PROFILES[profile]
    train_ids, valid_ids = load_splits()
    began, began_cpu = time.perf_counter(), time.process_time()
    results = {}
    for variant in variants:
        results[variant] = []
        for seed in SEEDS[profile]:
            cpu = time.process_time()
            model, losses = train(variant, train_ids, cfg, seed)
            perplexity = {
                str(n): round(evaluate(model, valid_ids, n, cfg["eval_tokens"])["all"], 4)
                for n in EVAL_LENGTHS
            }
            entry = {
                "seed": seed,
                "cpu_seconds": round(time.process_time() - cpu, 1),
                "final_train_loss": round(sum(losses[-20:]) / len(losses[-20:]), 4),
                "perplexity": perplexity,
            }
            results[variant].append(entry)
            log(f"{variant:>10} seed {seed}: {entry['cpu_seconds']:5.1f} s CPU, {perplexity}")
    return {
        "profile": profile,
        "config": cfg | {"train_len": TRAIN_LEN, "eval_lengths": list(EVAL_LENGTHS),
                         "seeds": list(SEEDS[profile]), "vocab": len(ALPHABET),
                         "corpus": "experiments/extrapolation/data/corpus.txt"},
        "variants": {name: {"method": m, "scaling": s} for name, (m, s) in VARIANTS.items()
                     if name in variants},
        "hardware": hardware(),
        "software": {"python": platform.python_version(), "torch": torch.__version__},
        "wall_seconds": round(time.perf_counter() - began, 1),
        "cpu_seconds": round(time.process_time() - began_cpu, 1),
        "results": results,
    }  # fmt: skip


def merge(parts: list[dict]) -> dict:
    """One report from runs of disjoint sets of variants (run side by side as processes)."""
    report = dict(parts[0], results={}, variants={})
    for part in parts:
        assert part["profile"] == report["profile"] and part["config"] == report["config"]
        report["results"] |= part["results"]
        report["variants"] |= part["variants"]
    report["results"] = {name: report["results"][name] for name in VARIANTS}
    report["variants"] = {name: report["variants"][name] for name in VARIANTS}
    report["wall_seconds"] = max(part["wall_seconds"] for part in parts)
    report["cpu_seconds"] = round(sum(part["cpu_seconds"] for part in parts), 1)
    report["processes"] = len(parts)
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=tuple(PROFILES), default="tiny")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated subset")
    parser.add_argument("--part", type=Path, help="write this subset's report here")
    parser.add_argument("--merge", type=Path, nargs="+", help="merge parts into results.json")
    args = parser.parse_args(argv)
    if args.merge:
        report = merge([json.loads(path.read_text()) for path in args.merge])
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        return report
    report = run(args.profile, tuple(args.variants.split(",")))
    if args.part:
        args.part.write_text(json.dumps(report, indent=1) + "\n")
    elif args.profile == "full":
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {RESULTS} in {report['wall_seconds']} s ({report['cpu_seconds']} s CPU)")
    return report


if __name__ == "__main__":
    main()
