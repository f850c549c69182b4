"""A passkey retrieval test for the tiny models: find four digits hidden in a long text.

Each example is a window of the corpus (the filler) with a needle ``$dddd`` written into it
at some depth, and the same marker ``$`` at the very end: the model must continue with the
four digits of the needle. Every other ``$`` of the filler is replaced, so the marker only
occurs twice. With ``L`` input tokens the sequence is::

    filler ... $ d1 d2 d3 d4 ... filler ... $ d1 d2 d3 d4
    ^0         ^needle                      ^L-4       (the last digit is the target of L-1)

The model reads ``L`` tokens and is scored on its predictions of the last four digits (teacher
forcing: the argmax at each of the four positions, given the true digits before it). An
example counts as retrieved when all four are right; chance is ``10 ** -4``. Depth 0 puts the
needle at the start of the window (farthest from the question), depth 1 right before it.

The language models of ``train.py`` have never seen this format, so each one is fine-tuned on
it first, at the training length only (random depths, filler from the training text), with the
loss on the four answer digits; then it is evaluated at the training length and beyond, on
filler from the held-out text, with the same examples for every method and seed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from experiments.extrapolation.corpus import ALPHABET
from experiments.extrapolation.train import update

MARK = "$"
DIGITS = 4
CHANCE = 10.0**-DIGITS  # four random digits
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)  # where the needle sits between the start and the question
_INDEX = {ch: i for i, ch in enumerate(ALPHABET)}
MARK_ID = _INDEX[MARK]
DIGIT_IDS = torch.tensor([_INDEX[str(d)] for d in range(10)])
NEEDLE = 1 + DIGITS  # "$dddd"


def batch(
    text_ids: torch.Tensor, length: int, depths: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Examples of ``length`` input tokens: (inputs (B, length), answer digits (B, DIGITS)).

    ``depths`` (B,) in [0, 1]: 0 puts the needle at position 0, 1 right before the question.
    """
    count = depths.shape[0]
    total = length + 1  # inputs plus the last target
    start = torch.randint(0, len(text_ids) - total, (count,), generator=generator)
    seq = torch.stack([text_ids[s : s + total] for s in start.tolist()]).clone()
    seq[seq == MARK_ID] = _INDEX["?"]  # the marker appears only where we put it
    digits = DIGIT_IDS[torch.randint(0, 10, (count, DIGITS), generator=generator)]
    question = total - NEEDLE  # position of the final "$"
    last_start = question - NEEDLE  # the needle may end right before the question
    where = torch.round(depths * last_start).long()
    rows = torch.arange(count)
    seq[rows, where] = MARK_ID
    for i in range(DIGITS):
        seq[rows, where + 1 + i] = digits[:, i]
    seq[:, question] = MARK_ID
    seq[:, question + 1 :] = digits
    return seq[:, :-1], digits


def answer_logits(model, inputs: torch.Tensor) -> torch.Tensor:
    """Logits (B, DIGITS, vocab) of the four answer positions."""
    return model(inputs)[:, -DIGITS:]


def fine_tune(
    model, train_ids: torch.Tensor, train_len: int, *, steps: int, batch_size: int, lr: float,
    seed: int,
) -> list[float]:  # fmt: skip
    """Teach the retrieval format at the training length (the loss is on the answer only)."""
    generator = torch.Generator().manual_seed(10_000 + seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    model.train()
    for step in range(steps):
        depths = torch.rand(batch_size, generator=generator)
        inputs, digits = batch(train_ids, train_len, depths, generator)
        for group in opt.param_groups:  # warm-up over the first 10 %, then constant
            group["lr"] = lr * min(1.0, (step + 1) / max(1, steps // 10))
        logits = answer_logits(model, inputs)
        loss = F.cross_entropy(logits.flatten(0, 1), digits.flatten())
        losses.append(update(model, opt, loss))
    return losses


@torch.no_grad()
def evaluate(model, valid_ids: torch.Tensor, length: int, examples: int) -> dict:
    """Accuracy at one length: all four digits right, per depth and over all depths.

    The examples depend only on ``length`` (fixed generator), so every model sees the same.
    """
    model.eval()
    generator = torch.Generator().manual_seed(length)
    per_depth = {}
    for depth in DEPTHS:
        inputs, digits = batch(valid_ids, length, torch.full((examples,), depth), generator)
        hits = []
        for chunk_in, chunk_digits in zip(inputs.split(8), digits.split(8), strict=True):
            predicted = answer_logits(model, chunk_in).argmax(-1)
            hits.append((predicted == chunk_digits).all(-1))
        per_depth[f"{depth:g}"] = torch.cat(hits).float().mean().item()
    model.train()
    return {"accuracy": sum(per_depth.values()) / len(per_depth), "by_depth": per_depth}
