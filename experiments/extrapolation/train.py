"""Train one tiny character LM per position method at length 128, evaluate at 128..1024.

    python -m experiments.extrapolation.train            # full profile -> results/full.json
    python -m experiments.extrapolation.train --quick    # pipeline check -> results/quick.json
    python -m experiments.extrapolation.train --rivals   # chapter 21 -> results/rivals.json

Everything runs on one CPU thread with fixed seeds. The results file records the settings, the
hardware, the software versions and how long each part took; the chapter's table and figure are
drawn from the committed results/full.json.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import posenc
from benchmarks.machine import cpu_name
from experiments.extrapolation import results as results_file
from experiments.extrapolation.corpus import ALPHABET, load_splits
from experiments.extrapolation.model import METHODS, RIVALS, TinyLM

PROFILES = {
    # about 4 minutes of CPU time on one core (more wall-clock time on a busy machine)
    "full": dict(dim=64, heads=4, layers=2, batch=16, steps=800, lr=3e-3, eval_tokens=16384),
    # seconds: checks the pipeline end to end, not the numbers
    "quick": dict(dim=32, heads=2, layers=1, batch=4, steps=30, lr=3e-3, eval_tokens=1024),
}
TRAIN_LEN = 128
EVAL_LENGTHS = (128, 256, 512, 1024)
SEED = 0


def rope_variants(length: int, head_dim: int, base: float = 10000.0) -> dict[str, dict]:
    """Inference-time RoPE settings for an evaluation length; s = length / TRAIN_LEN."""
    s = length / TRAIN_LEN
    if s <= 1:
        none = dict(scaling=None, base=base)
        return {"rope+pi": none, "rope+ntk": none, "rope+yarn": none}
    return {
        # position interpolation: positions squeezed by s (all frequencies / s)
        "rope+pi": dict(scaling={"rope_type": "linear", "factor": s}, base=base),
        # NTK-aware: base' = base * s^(d/(d-2)), fixed for this length
        "rope+ntk": dict(scaling=None, base=base * s ** (head_dim / (head_dim - 2))),
        # YaRN: per-frequency ramp plus attention temperature 0.1 ln s + 1
        "rope+yarn": dict(
            scaling={
                "rope_type": "yarn",
                "factor": s,
                "original_max_position_embeddings": TRAIN_LEN,
            },
            base=base,
        ),
    }


def learning_rate(step: int, steps: int, peak: float) -> float:
    warmup = max(1, steps // 20)
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine to 10 %


def train(
    method: str, train_ids: torch.Tensor, cfg: dict, seed: int = SEED
) -> tuple[TinyLM, list[float]]:
    torch.manual_seed(seed)  # same initial weights (where shapes agree) for every method
    model = TinyLM(
        method, vocab=len(ALPHABET), dim=cfg["dim"], heads=cfg["heads"], layers=cfg["layers"],
        train_len=TRAIN_LEN,
    )  # fmt: skip
    return model, fit(model, train_ids, cfg, seed)


def fit(model: torch.nn.Module, train_ids: torch.Tensor, cfg: dict, seed: int) -> list[float]:
    """The training loop: AdamW, warm-up and cosine schedule, clipped gradients; the batches
    depend on the seed only, so every model trained with one seed sees the same data.
    Returns the loss of every step (the model is trained in place)."""
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    data_rng = torch.Generator().manual_seed(seed)  # same batches for every method
    losses = []
    for step in range(cfg["steps"]):
        start = torch.randint(
            0, len(train_ids) - TRAIN_LEN - 1, (cfg["batch"],), generator=data_rng
        )
        window = torch.stack([train_ids[s : s + TRAIN_LEN + 1] for s in start.tolist()])
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, cfg["steps"], cfg["lr"])
        logits = model(window[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), window[:, 1:].flatten())
        losses.append(update(model, opt, loss))
    return losses


def update(model: torch.nn.Module, opt: torch.optim.Optimizer, loss: torch.Tensor) -> float:
    """One optimiser step on ``loss``, gradients clipped to norm 1 (every training loop of the
    experiments: language model, retrieval fine-tuning, chapter 12's variants); the loss."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


@torch.no_grad()
def evaluate(model: TinyLM, valid_ids: torch.Tensor, length: int, eval_tokens: int) -> dict:
    """Perplexity on non-overlapping windows of `length` tokens from the held-out text.

    ``all``: over every predicted token of each window. ``beyond``: only over the tokens at
    positions >= TRAIN_LEN (None at the training length).
    """
    model.eval()
    count = max(1, eval_tokens // length)
    windows = torch.stack([valid_ids[i * length : i * length + length + 1] for i in range(count)])
    nll = torch.stack(
        [F.cross_entropy(model(w[None, :-1])[0], w[1:], reduction="none") for w in windows]
    )  # (count, length): one window at a time keeps memory small at 1024
    model.train()
    beyond = nll[:, TRAIN_LEN:]
    return {
        "all": math.exp(nll.mean().item()),
        "beyond": math.exp(beyond.mean().item()) if beyond.numel() else None,
    }


@torch.no_grad()
def learned_positions(model: TinyLM, valid_ids: torch.Tensor, eval_tokens: int) -> dict | None:
    """What a rival learned about positions (chapter 21), None for a method without such
    parameters (chapter 8's six, xPos).

    ``kerple``: r1, r2 per head, clamped as the module clamps them before each use. ``fire``:
    per layer, |c| and the threshold L. ``cope``: per layer, the mean gate of each head over
    the causal pairs of the held-out text at each evaluation length, the share of those pairs
    whose counted position reaches the last row of the table (the clamp), and the norm of every
    row of the table (it starts at zero: a row training never reached stays near zero).
    """
    if model.method == "kerple":
        eps = 0.01  # posenc.Kerple clamps both to at least 0.01 before each use
        return {"r1": [round(v, 4) for v in model.kerple.r1.clamp(min=eps).tolist()],
                "r2": [round(v, 4) for v in model.kerple.r2.clamp(min=eps).tolist()]}  # fmt: skip
    if model.method == "fire":
        return {"layers": [{"c": round(f.c.abs().item(), 4), "L": round(f.threshold.item(), 2)}
                           for f in model.fire]}  # fmt: skip
    if model.method != "cope":
        return None
    last = model.cope[0].num_positions - 1
    sums: list[dict[str, torch.Tensor]] = [{} for _ in model.cope]

    def hook(layer):
        def record(module, args, output):
            scores = args[1]  # (B, heads, T, T): q·k / sqrt(d), the gates' logits
            seq = scores.shape[-1]
            causal = torch.ones(seq, seq, dtype=torch.bool).tril()
            gates = torch.sigmoid(scores) * causal
            positions = posenc.cope_positions(scores)
            acc = sums[layer]
            acc["pairs"] = acc.get("pairs", 0) + causal.sum() * scores.shape[0]
            acc["gates"] = acc.get("gates", 0) + gates.sum(dim=(0, 2, 3))
            clamped = ((positions >= last) & causal).sum(dim=(0, 2, 3))
            acc["clamped"] = acc.get("clamped", 0) + clamped

        return record

    handles = [m.register_forward_hook(hook(i)) for i, m in enumerate(model.cope)]
    layers = [{"mean_gate": {}, "clamped_share": {}} for _ in model.cope]
    try:
        for length in EVAL_LENGTHS:
            for acc in sums:
                acc.clear()
            count = max(1, eval_tokens // length)
            for i in range(count):
                model(valid_ids[i * length : i * length + length][None])
            for layer, acc in enumerate(sums):
                pairs = acc["pairs"].item()
                layers[layer]["mean_gate"][str(length)] = [
                    round(v / pairs, 4) for v in acc["gates"].tolist()
                ]
                layers[layer]["clamped_share"][str(length)] = [
                    round(v / pairs, 4) for v in acc["clamped"].tolist()
                ]
    finally:
        for handle in handles:
            handle.remove()
    for layer, cope in zip(layers, model.cope, strict=True):
        layer["row_norms"] = [round(v, 4) for v in cope.pos_emb.norm(dim=0).tolist()]
    return {"last_row": last, "layers": layers}


def hardware() -> dict:
    return {"cpu": cpu_name(), "threads": torch.get_num_threads(), "device": "cpu"}


def run(profile: str, out: Path, methods=METHODS, log=print) -> dict:
    """Train and evaluate ``methods`` (chapter 8's ``METHODS`` or chapter 21's ``RIVALS``, not
    a mix: each set has its own results file) with one profile; write the report to ``out``."""
    rivals = tuple(methods) == RIVALS
    if not rivals and tuple(methods) != METHODS:
        raise ValueError(f"methods must be {METHODS} or {RIVALS}, got {methods!r}")
    torch.set_num_threads(1)
    cfg = PROFILES[profile]
    train_ids, valid_ids = load_splits()
    began, began_cpu = time.perf_counter(), time.process_time()
    results = {}
    for method in methods:
        t0 = time.perf_counter()
        model, losses = train(method, train_ids, cfg)
        train_seconds = time.perf_counter() - t0
        variants = (
            {method: {}}
            if method != "rope"
            else {"rope": {}, "rope+pi": {}, "rope+ntk": {}, "rope+yarn": {}}
        )
        for length in EVAL_LENGTHS:
            if method == "learned" and length > TRAIN_LEN:
                variants[method][str(length)] = None  # no table row past position 127
                continue
            if method == "rope":
                settings = {"rope": dict(scaling=None, base=10000.0)} | rope_variants(
                    length, model.head_dim
                )
            else:
                settings = {method: None}
            for name, setting in settings.items():
                if setting is not None:
                    model.set_rope_scaling(setting["scaling"], base=setting["base"])
                variants[name][str(length)] = evaluate(model, valid_ids, length, cfg["eval_tokens"])
            if method == "rope":
                model.set_rope_scaling(None)
        for name, table in variants.items():
            results[name] = {
                "trained_as": method,
                "train_seconds": round(train_seconds, 1),
                "final_train_loss": round(sum(losses[-20:]) / len(losses[-20:]), 4),
                "perplexity": {
                    k: (None if v is None else round(v["all"], 4)) for k, v in table.items()
                },
                "perplexity_beyond_128": {
                    k: (None if v is None or v["beyond"] is None else round(v["beyond"], 4))
                    for k, v in table.items()
                },
            }
        if rivals:  # chapter 21: what the rival learned about positions (None for xPos)
            model.eval()
            results[method]["learned_positions"] = learned_positions(
                model, valid_ids, cfg["eval_tokens"]
            )
            model.train()
        loss = results[method]["final_train_loss"]
        log(f"{method:>10}: train {train_seconds:6.1f} s, loss {loss:.3f}, ", end="")
        log(f"ppl {results[method]['perplexity']}", flush=True)
    report = {
        "profile": profile,
        "config": cfg | {"train_len": TRAIN_LEN, "eval_lengths": list(EVAL_LENGTHS), "seed": SEED,
                         "vocab": len(ALPHABET), "corpus": "data/corpus.txt"},
        "hardware": hardware(),
        "software": {"python": platform.python_version(), "torch": torch.__version__},
        "wall_seconds": round(time.perf_counter() - began, 1),
        "cpu_seconds": round(time.process_time() - began_cpu, 1),
        "results": results,
    }  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results_file.validate(report, rivals=rivals), indent=1) + "\n")
    log(f"wrote {out} in {report['wall_seconds']} s")
    return report


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny pipeline check (seconds)")
    parser.add_argument(
        "--rivals", action="store_true", help="chapter 21's methods: " + ", ".join(RIVALS)
    )
    parser.add_argument("--out", type=Path, help="results file (default results/<profile>.json)")
    args = parser.parse_args(argv)
    profile = "quick" if args.quick else "full"
    methods = RIVALS if args.rivals else METHODS
    return run(profile, args.out or results_file.path(profile, args.rivals), methods)


if __name__ == "__main__":
    main()
