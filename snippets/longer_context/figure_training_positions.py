"""Figure: the position ids training shows, for a model trained on 64 tokens that should read
512: plain training (0 .. 63), PoSE (two chunks of consecutive ids, the second pushed right by
a random skip) and randomized positions (64 sorted ids drawn from 0 .. 511). Right: the share
of 2000 training examples that hold a query-key pair at each distance.

Saved twice with the same data: longer-context-training-positions.svg (English labels) and
longer-context-training-positions.zh.svg (Chinese labels).
"""

import random

import matplotlib.pyplot as plt
import torch

from snippets.figures import save_each_language

LABELS = {
    "en": {
        "plain": "plain", "pose": "PoSE", "random": "randomized",
        "x": "position id", "distance": "distance between query and key",
        "share": "share of examples", "window": "target window 0 .. 511",
    },
    "zh": {
        "plain": "普通训练", "pose": "PoSE", "random": "随机位置",
        "x": "位置编号", "distance": "query 与 key 的距离",
        "share": "含该距离的样本比例", "window": "目标窗口 0 .. 511",
    },
}  # fmt: skip
TRAIN, TARGET, EXAMPLES, SHOWN = 64, 512, 2000, 3
COLOURS = {"plain": "0.45", "pose": "#dd8452", "random": "#4c72b0"}


def pose_ids(rng: random.Random) -> torch.Tensor:
    """As in dwzhu-pku/PoSE src/train_pose.py (and longer_context.py's pose_position_ids)."""
    first = rng.randint(1, (TRAIN + 1) // 2)
    skip = rng.randint(0, TARGET - TRAIN)
    ids = torch.arange(TRAIN)
    ids[first:] += skip
    return ids


def random_ids(g: torch.Generator) -> torch.Tensor:
    return torch.randperm(TARGET, generator=g)[:TRAIN].sort().values


def distance_share(draw) -> torch.Tensor:
    """Share of EXAMPLES examples holding at least one pair at each distance 0 .. TARGET - 1."""
    held = torch.zeros(TARGET)
    for _ in range(EXAMPLES):
        ids = draw()
        diffs = (ids[:, None] - ids[None, :]).flatten()
        held += torch.bincount(diffs[diffs >= 0], minlength=TARGET)[:TARGET].clamp(max=1)
    return held / EXAMPLES


def draw_training_positions(labels: dict) -> plt.Figure:
    rng, g = random.Random(0), torch.Generator().manual_seed(0)
    rows = [("plain", torch.arange(TRAIN))]
    rows += [("pose", pose_ids(rng)) for _ in range(SHOWN)]
    rows += [("random", random_ids(g)) for _ in range(SHOWN)]
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(7.2, 3.0), layout="constrained", gridspec_kw={"width_ratios": [1.3, 1]}
    )
    for y, (kind, ids) in enumerate(rows):
        left.eventplot(ids.numpy(), lineoffsets=-y, linelengths=0.7, linewidths=0.8,
                       colors=COLOURS[kind])  # fmt: skip
    left.set_yticks([-y for y in range(len(rows))])
    left.set_yticklabels([labels[kind] for kind, _ in rows], fontsize=8)
    left.set_xlim(-5, TARGET + 5)
    left.set_xlabel(labels["x"])
    left.set_title(labels["window"], fontsize=9)

    rng, g = random.Random(1), torch.Generator().manual_seed(1)
    distance = torch.arange(TARGET)
    right.plot(distance, (distance < TRAIN).float(), color=COLOURS["plain"], lw=1.2, label=labels["plain"])  # fmt: skip
    right.plot(distance, distance_share(lambda: pose_ids(rng)), color=COLOURS["pose"], lw=1.2, label=labels["pose"])  # fmt: skip
    right.plot(distance, distance_share(lambda: random_ids(g)), color=COLOURS["random"], lw=1.2, label=labels["random"])  # fmt: skip
    right.set_xlabel(labels["distance"])
    right.set_ylabel(labels["share"])
    right.set_ylim(-0.03, 1.05)
    right.legend(fontsize=8, frameon=False, loc="center", bbox_to_anchor=(0.42, 0.55))
    return fig


save_each_language(draw_training_positions, "longer-context-training-positions.svg", LABELS)
