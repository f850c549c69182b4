"""Figure: the Forgetting Transformer's decay seen from the last query: constant gates give
ALiBi's straight lines, gates computed from the tokens give steps where a head forgets.

Saved twice with the same data: rope-rivals-forgetting.svg (English labels) and
rope-rivals-forgetting.zh.svg (Chinese labels).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "constant": "constant gate f = {f:.3f} (ALiBi, m = {m})",
        "tokens": "gates from the tokens (one head)",
        "x": "key j (the query is the last token, i = {i})",
        "y": "bias D_ij = sum of log f_t, j < t <= i",
        "left": "constant gates",
        "right": "data-dependent gates",
        "gate": "gate f_t",
    },
    "zh": {
        "constant": "常数门 f = {f:.3f}（ALiBi，m = {m}）",
        "tokens": "由 token 算出的门（一个头）",
        "x": "key j（query 是最后一个 token，i = {i}）",
        "y": "偏置 D_ij = Σ log f_t，j < t <= i",
        "left": "常数遗忘门",
        "right": "依赖数据的遗忘门",
        "gate": "门 f_t",
    },
}


def draw_forgetting(labels):
    T = 64
    i = T - 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    for head in (1, 3, 5):
        m = posenc.alibi_slope_values(8)[head - 1]
        f = torch.exp(torch.tensor(-m, dtype=torch.float64))
        c = (f.log() * torch.ones(T, dtype=torch.float64)).cumsum(0)
        label = labels["constant"].format(f=float(f), m=f"1/{round(1 / m)}")
        left.plot(range(T), c[i] - c, label=label)
    torch.manual_seed(1)
    logits = 3 + torch.randn(T, dtype=torch.float64)  # mostly open gates ...
    logits[[20, 45]] = -4.0  # ... and two tokens where the head forgets
    log_f = torch.nn.functional.logsigmoid(logits)
    c = log_f.cumsum(0)
    right.plot(range(T), c[i] - c, color="C3", label=labels["tokens"])
    gate = right.twinx()
    gate.bar(range(T), log_f.exp(), color="gray", alpha=0.3, width=0.8)
    gate.set_ylim(0, 4)
    gate.set_yticks([0, 0.5, 1])
    gate.set_ylabel(labels["gate"], color="gray")
    for ax, title in ((left, labels["left"]), (right, labels["right"])):
        ax.set_xlabel(labels["x"].format(i=i))
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, loc="lower right")
    left.set_ylabel(labels["y"])
    return fig


save_each_language(draw_forgetting, "rope-rivals-forgetting.svg", LABELS)
