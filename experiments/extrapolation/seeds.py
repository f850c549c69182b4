"""The experiment over several seeds, with perplexity and passkey retrieval.

    python -m experiments.extrapolation.seeds           # full profile -> results/seeds.json
    python -m experiments.extrapolation.seeds --quick   # pipeline check -> seeds-quick.json
    python -m experiments.extrapolation.seeds --jobs 2  # two models at a time, one thread each
    python -m experiments.extrapolation.seeds --rivals  # chapter 21 -> results/rivals-seeds.json

For every seed and every position method: train the language model of ``train.py`` (the seed
sets the initial weights and the batches; seed 0 is the model of results/full.json), measure its
perplexity at 128..1024, then fine-tune it on the passkey format at length 128 (retrieval.py)
and measure retrieval accuracy at 128..1024. The RoPE model is also measured with PI,
NTK-aware scaling and YaRN applied at inference, as in ``train.py``.

Each (seed, method) is one job on one CPU thread; a finished job is kept in results/runs/ so
an interrupted run resumes where it stopped. The results file records the settings, the
hardware, the software versions, the wall-clock time and the CPU time of every job.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from experiments.extrapolation import results as results_file
from experiments.extrapolation import retrieval, train
from experiments.extrapolation.corpus import ALPHABET, load_splits
from experiments.extrapolation.model import METHODS, RIVALS

PROFILES = {
    # the language models of train.py's full profile, three seeds: 18 models, each fine-tuned
    # on passkeys; an estimated 30 min of CPU time (not yet measured). A trial with the RoPE
    # model (seed 0) and 400 steps of 32 reached only 7.5 % at length 128, its loss still
    # falling: hence 1000 steps; the tests ask for >= 50 % at 128 from every model.
    "full": dict(
        lm=train.PROFILES["full"], seeds=(0, 1, 2),
        retrieval=dict(steps=1000, batch=16, lr=2e-3, examples=16),
    ),
    # seconds: checks the pipeline end to end, not the numbers
    "quick": dict(
        lm=train.PROFILES["quick"], seeds=(0, 1),
        retrieval=dict(steps=5, batch=4, lr=1e-3, examples=2),
    ),
}  # fmt: skip
RUNS = results_file.DIRECTORY / "runs"


def _variants(method: str, length: int, head_dim: int) -> dict[str, dict | None]:
    """The names measured for a method at a length, with the RoPE setting to use (or None)."""
    if method != "rope":
        return {method: None}
    return {"rope": dict(scaling=None, base=10000.0)} | train.rope_variants(length, head_dim)


def _fingerprint(*parts: object, files: tuple[str, ...]) -> str:
    """A hash of settings and source files: a kept result is reused only if both are equal."""
    h = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    for name in files:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()[:16]


LM_FILES = ("train.py", "model.py", "corpus.py")
ALL_FILES = (*LM_FILES, "retrieval.py")  # not this file: plumbing changes keep the jobs


def language_model(profile: str, seed: int, method: str, train_ids, valid_ids, runs_dir=RUNS):
    """Train and measure one language model, or load it from results/runs/ if kept.

    Returns (model, runs with perplexities, final training loss, CPU seconds spent on it).
    """
    cfg = PROFILES[profile]["lm"]
    file = runs_dir / profile / f"seed{seed}-{method}.pt"
    fingerprint = _fingerprint(cfg, seed, method, files=LM_FILES)
    model = train.TinyLM(
        method, vocab=len(ALPHABET), dim=cfg["dim"], heads=cfg["heads"], layers=cfg["layers"],
        train_len=train.TRAIN_LEN,
    )  # fmt: skip
    if file.is_file():
        kept = torch.load(file, weights_only=True)
        if kept["fingerprint"] == fingerprint:
            model.load_state_dict(kept["state"])
            return model, kept["runs"], kept["loss"], kept["cpu"]
    began = time.process_time()
    model, losses = train.train(method, train_ids, cfg, seed=seed)
    runs: dict[str, dict] = {}
    for length in train.EVAL_LENGTHS:
        for name, setting in _variants(method, length, model.head_dim).items():
            run = runs.setdefault(name, {"perplexity": {}, "perplexity_beyond_128": {}})
            if method == "learned" and length > train.TRAIN_LEN:
                run["perplexity"][str(length)] = None  # no table row past position 127
                run["perplexity_beyond_128"][str(length)] = None
                continue
            if setting is not None:
                model.set_rope_scaling(setting["scaling"], base=setting["base"])
            got = train.evaluate(model, valid_ids, length, cfg["eval_tokens"])
            run["perplexity"][str(length)] = round(got["all"], 4)
            beyond = got["beyond"]  # None at the training length
            run["perplexity_beyond_128"][str(length)] = None if beyond is None else round(beyond, 4)
        model.set_rope_scaling(None)
    loss = round(sum(losses[-20:]) / len(losses[-20:]), 4)
    cpu = time.process_time() - began
    file.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"fingerprint": fingerprint, "state": model.state_dict(), "runs": runs, "loss": loss,
         "cpu": cpu}, file,
    )  # fmt: skip
    return model, runs, loss, cpu


def job(profile: str, seed: int, method: str, runs_dir: Path = RUNS) -> dict:
    """Train, measure, fine-tune, measure: one method, one seed. {name: run} for its names."""
    torch.set_num_threads(1)
    ret = PROFILES[profile]["retrieval"]
    train_ids, valid_ids = load_splits()
    model, runs, lm_loss, lm_cpu = language_model(
        profile, seed, method, train_ids, valid_ids, runs_dir
    )
    began = time.process_time()
    torch.manual_seed(seed)
    ft_losses = retrieval.fine_tune(
        model, train_ids, train.TRAIN_LEN, steps=ret["steps"], batch_size=ret["batch"],
        lr=ret["lr"], seed=seed,
    )  # fmt: skip
    for run in runs.values():
        run |= {"retrieval": {}, "retrieval_by_depth": {}}
    for length in train.EVAL_LENGTHS:
        for name, setting in _variants(method, length, model.head_dim).items():
            if method == "learned" and length > train.TRAIN_LEN:
                runs[name]["retrieval"][str(length)] = None
                runs[name]["retrieval_by_depth"][str(length)] = None
                continue
            if setting is not None:
                model.set_rope_scaling(setting["scaling"], base=setting["base"])
            got = retrieval.evaluate(model, valid_ids, length, ret["examples"])
            runs[name]["retrieval"][str(length)] = round(got["accuracy"], 4)
            runs[name]["retrieval_by_depth"][str(length)] = got["by_depth"]
        model.set_rope_scaling(None)
    cpu = lm_cpu + time.process_time() - began
    for run in runs.values():
        run |= {
            "trained_as": method,
            "final_train_loss": lm_loss,
            "retrieval_final_loss": round(sum(ft_losses[-20:]) / len(ft_losses[-20:]), 4),
            "cpu_seconds": round(cpu, 1),
        }
    return runs


def _run_job(args: tuple[str, int, str, Path]) -> tuple[int, str, dict]:
    profile, seed, method, runs_dir = args
    settings = PROFILES[profile]
    fingerprint = _fingerprint(settings["lm"], settings["retrieval"], seed, method,
                               files=ALL_FILES)  # fmt: skip
    file = runs_dir / profile / f"seed{seed}-{method}.json"
    if file.is_file():
        kept = json.loads(file.read_text())
        if kept["fingerprint"] == fingerprint:
            return seed, method, kept["runs"]
    runs = job(profile, seed, method, runs_dir)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"fingerprint": fingerprint, "runs": runs}) + "\n")
    return seed, method, runs


def run(
    profile: str, out: Path, *, jobs: int = 1, runs_dir: Path = RUNS, log=print,
    rivals: bool = False,
) -> dict:  # fmt: skip
    """Every (seed, method) of the profile: chapter 8's methods, or chapter 21's with
    ``rivals=True`` (the same settings, seeds, lengths and passkeys, another results file)."""
    settings = PROFILES[profile]
    config = {
        "lm": settings["lm"], "seeds": list(settings["seeds"]),
        "retrieval": settings["retrieval"] | {
            "digits": retrieval.DIGITS, "depths": list(retrieval.DEPTHS),
            "chance": retrieval.CHANCE,
        },
        "train_len": train.TRAIN_LEN, "eval_lengths": list(train.EVAL_LENGTHS),
        "vocab": len(ALPHABET), "corpus": "data/corpus.txt",
    }  # fmt: skip
    methods = RIVALS if rivals else METHODS
    tasks = [(profile, s, m, runs_dir) for s in settings["seeds"] for m in methods]
    began = time.perf_counter()
    runs: dict[str, dict[str, dict]] = {}
    cpu = 0.0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for seed, method, got in pool.map(_run_job, tasks):
            for name, run_ in got.items():
                runs.setdefault(name, {})[str(seed)] = run_
            cpu += got[method]["cpu_seconds"]
            log(f"seed {seed} {method:>10}: {got[method]['cpu_seconds']:6.1f} s CPU, "
                f"ppl {got[method]['perplexity']}, passkey {got[method]['retrieval']}",
                flush=True)  # fmt: skip
    report = {
        "profile": profile,
        "config": config,
        "hardware": train.hardware() | {"threads": 1, "jobs": jobs},
        "software": {"python": platform.python_version(), "torch": torch.__version__},
        "wall_seconds": round(time.perf_counter() - began, 1),
        "cpu_seconds": round(cpu, 1),  # the sum over the jobs (one thread each)
        "runs": {name: runs[name] for name in results_file.labels(rivals)},
    }  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results_file.validate_seeds(report, rivals=rivals), indent=1) + "\n")
    log(f"wrote {out} in {report['wall_seconds']} s ({report['cpu_seconds']} s of CPU time)")
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny pipeline check (seconds)")
    parser.add_argument("--jobs", type=int, default=1, help="models trained at the same time")
    parser.add_argument("--out", type=Path, help="results file (default results/seeds.json)")
    parser.add_argument("--runs", type=Path, default=RUNS, help="where finished jobs are kept")
    parser.add_argument(
        "--rivals", action="store_true", help="chapter 21's methods: " + ", ".join(RIVALS)
    )
    args = parser.parse_args(argv)
    profile = "quick" if args.quick else "full"
    default = results_file.seeds_path(profile, args.rivals)
    return run(profile, args.out or default, jobs=args.jobs, runs_dir=args.runs, rivals=args.rivals)


if __name__ == "__main__":
    main()
