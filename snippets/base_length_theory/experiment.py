"""Chapter "Base, frequencies and length": does the RoPE base bound how far back a tiny model
retrieves, inside its trained length?

Men et al. (2024, arXiv:2405.14591, §4.3 and §5.3) predict that a model whose base is too
small for its training length retrieves only from the most recent tokens: past the first
distance m where B_m = Σ_i cos(m·θ_i) < 0, a random key scores as high as the matching key,
on average. This script tests that on the smallest model that can retrieve: one attention
head (32 dimensions, rotated with posenc), trained from scratch on one task at one length
(128 tokens), with five bases that put the first negative B_m at 5, 22, 41, 122 and 474
tokens. Whether a trained head stays inside the bound (it can weight its pairs unequally,
which the bound's "random vectors" do not) is what the run finds out.

The task: 127 "needle" tokens, each a (key, value) pair out of 16 keys and 16 values, then a
query token naming one key. Exactly one needle holds the queried key, at a distance m from
the query drawn uniformly from 1 to 127; the others hold other keys. The model must output
that needle's value: one attention step from the query to the needle, matched by content.

    python snippets/base_length_theory/experiment.py                 # tiny profile: seconds
    python snippets/base_length_theory/experiment.py --profile full  # rewrites results.json

One CPU thread; the results file records settings, seeds, hardware, software and CPU time.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch
from torch import nn

import posenc

RESULTS = Path(__file__).resolve().parent / "results.json"
KEYS, VALUES = 16, 16
NEEDLES = KEYS * VALUES  # token k * VALUES + v holds key k and value v
VOCAB = NEEDLES + KEYS  # then one query token per key
SEQ = 128  # 127 needles and the query
HEAD_DIM, DIM = 32, 64
BASES = (10.0, 50.0, 200.0, 1000.0, 10000.0)
NOPE = "none"  # the control: the same head without rotation, the task's ceiling here
BUCKETS = ((1, 8), (9, 16), (17, 32), (33, 64), (65, 96), (97, 127))  # distances, inclusive
PROFILES = {
    # about 2 min of CPU per model on one thread; evaluated at every checkpoint, so that the
    # results show whether the accuracy has stopped moving (at 4000 steps it had not)
    "full": dict(steps=12000, checkpoints=(3000, 6000, 9000, 12000), batch=64, lr=1e-2,
                 eval_batches=16, seeds=(0, 1, 2)),
    # seconds: checks the pipeline, not the numbers
    "tiny": dict(steps=20, checkpoints=(10, 20), batch=16, lr=1e-2, eval_batches=1, seeds=(0,)),
}  # fmt: skip


def batch(size: int, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """``(tokens (size, SEQ), answers (size,), distances (size,))`` of the retrieval task."""
    key = torch.randint(KEYS, (size,), generator=generator)
    value = torch.randint(VALUES, (size,), generator=generator)
    # distractors: any key but the queried one (shift by 1..KEYS-1), any value
    other = (key[:, None] + torch.randint(1, KEYS, (size, SEQ - 1), generator=generator)) % KEYS
    tokens = other * VALUES + torch.randint(VALUES, (size, SEQ - 1), generator=generator)
    distance = torch.randint(1, SEQ, (size,), generator=generator)  # 1 .. SEQ - 1
    rows = torch.arange(size)
    tokens[rows, SEQ - 1 - distance] = key * VALUES + value
    tokens = torch.cat([tokens, (NEEDLES + key)[:, None]], dim=1)
    return tokens, value, distance


class OneHead(nn.Module):
    """Embedding, one attention head from the last token to all earlier ones, readout."""

    def __init__(self, base: float | None):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.q, self.k, self.v = (nn.Linear(DIM, HEAD_DIM, bias=False) for _ in range(3))
        self.out = nn.Linear(HEAD_DIM, VALUES)
        self.rope = None if base is None else posenc.RotaryEmbedding(HEAD_DIM, base=base)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)  # (batch, seq, DIM)
        q = self.q(x[:, -1:])[:, None]  # (batch, 1 head, 1, HEAD_DIM), at position SEQ - 1
        k = self.k(x[:, :-1])[:, None]  # (batch, 1 head, SEQ - 1, HEAD_DIM), at 0 .. SEQ - 2
        if self.rope is not None:
            q, _ = self.rope(q, q, positions=torch.tensor([SEQ - 1]))
            k, _ = self.rope(k, k, positions=torch.arange(SEQ - 1))
        weights = torch.softmax((q @ k.transpose(-1, -2)) / HEAD_DIM**0.5, dim=-1)
        return self.out((weights @ self.v(x[:, :-1])[:, None])[:, 0, 0])  # (batch, VALUES)


def first_negative(base: float, limit: int = 10**4) -> int:
    """The first distance m with Σ_i cos(m·θ_i) < 0 for this head's frequencies."""
    theta = posenc.rope_inv_freq(HEAD_DIM, base)[0].double()
    m = torch.arange(limit + 1, dtype=torch.float64)
    return int((torch.cos(m[:, None] * theta).sum(-1) < 0).nonzero()[0])


def evaluate(model: OneHead, seed: int, eval_batches: int) -> dict[str, float]:
    """Accuracy by distance bucket on held-out batches (the same ones at every checkpoint)."""
    held_out = torch.Generator().manual_seed(10_000 + seed)  # evaluation: never trained on
    correct = torch.zeros(SEQ)
    count = torch.zeros(SEQ)
    with torch.no_grad():
        for _ in range(eval_batches):
            tokens, answers, distance = batch(256, held_out)
            hit = (model(tokens).argmax(-1) == answers).float()
            correct.index_add_(0, distance, hit)
            count.index_add_(0, distance, torch.ones_like(hit))
    return {
        f"{lo}-{hi}": round(float(correct[lo : hi + 1].sum() / count[lo : hi + 1].sum()), 4)
        for lo, hi in BUCKETS
    }


def train_one(base: float, seed: int, cfg: dict) -> dict:
    torch.manual_seed(seed)  # initial weights: the same for every base
    model = OneHead(base)
    data = torch.Generator().manual_seed(seed)  # training batches: the same for every base
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    curve = {}
    for step in range(1, cfg["steps"] + 1):
        tokens, answers, _ = batch(cfg["batch"], data)
        loss = nn.functional.cross_entropy(model(tokens), answers)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step in cfg["checkpoints"]:
            curve[str(step)] = evaluate(model, seed, cfg["eval_batches"])
    return {"seed": seed, "final_loss": round(loss.item(), 4), "accuracy": curve[str(step)],
            "by_step": curve}  # fmt: skip


def run(profile: str = "tiny", log=print, bases=(*BASES, None)) -> dict:
    """Every base of ``bases`` (None: no rotation), every seed of the profile."""
    torch.set_num_threads(1)
    cfg = PROFILES[profile]
    began, began_cpu = time.perf_counter(), time.process_time()
    results = {}
    for base in bases:
        runs = []
        for seed in cfg["seeds"]:
            cpu = time.process_time()
            entry = train_one(base, seed, cfg) | {"cpu_seconds": 0.0}
            entry["cpu_seconds"] = round(time.process_time() - cpu, 1)
            runs.append(entry)
            log(f"base {NOPE if base is None else f'{base:g}':>7} seed {seed}: {entry['accuracy']}")
        key = NOPE if base is None else f"{base:g}"
        results[key] = {"first_negative": None if base is None else first_negative(base),
                        "runs": runs}  # fmt: skip
    return {
        "profile": profile,
        "config": cfg | {"keys": KEYS, "values": VALUES, "seq": SEQ, "head_dim": HEAD_DIM,
                         "dim": DIM, "bases": list(BASES), "buckets": [list(b) for b in BUCKETS],
                         "checkpoints": list(cfg["checkpoints"])},
        "hardware": {"cpu": platform.processor() or platform.machine(), "threads": 1},
        "software": {"python": platform.python_version(), "torch": torch.__version__},
        "wall_seconds": round(time.perf_counter() - began, 1),
        "cpu_seconds": round(time.process_time() - began_cpu, 1),
        "results": results,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=tuple(PROFILES), default="tiny")
    parser.add_argument(
        "--only-control",
        action="store_true",
        help="run only the control without rotation and add it to the committed results",
    )
    args = parser.parse_args(argv)
    report = run(args.profile, bases=(None,) if args.only_control else (*BASES, None))
    if args.profile == "full" and args.only_control:  # the bases' runs stay as they were
        committed = json.loads(RESULTS.read_text())
        same = json.loads(json.dumps(report["config"]))  # tuples as the file holds them: lists
        assert committed["config"] == same, "the control needs the same settings"
        committed["results"][NOPE] = report["results"][NOPE]
        committed["control_cpu_seconds"] = report["cpu_seconds"]
        report = committed
    if args.profile == "full":
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {RESULTS} in {report['wall_seconds']} s ({report['cpu_seconds']} s CPU)")
    return report


if __name__ == "__main__":
    main()
