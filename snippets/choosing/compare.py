"""Chapter "Comparing and choosing": one table, parameters counted by code and extrapolation
measured by the experiment of chapter 8 (its committed results).

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/choosing/compare.py
"""

# --8<-- [start:compare]
import json
from pathlib import Path

import posenc
from experiments.extrapolation.results import load

report = load("full")  # the experiment of chapter 8
perplexity = {name: entry["perplexity"] for name, entry in report["results"].items()}

# Parameters for a GPT-2-small-sized model: width 768, 12 heads of 64, context 1024.
modules = {
    "sinusoidal": posenc.SinusoidalPositionalEncoding(768),
    "learned": posenc.LearnedPositionalEmbedding(1024, 768),
    "t5": posenc.T5RelativeBias(12),  # one table per stack, shared by its layers
    "rope": posenc.RotaryEmbedding(64),
    "alibi": posenc.ALiBi(12),
}
parameters = {name: sum(p.numel() for p in m.parameters()) for name, m in modules.items()}
parameters["nope"] = 0

# which models use what (the next section): the released configs posenc ships, read by
# posenc.describe, and the rows of snippets/choosing/models.json that have no such config
MODELS = Path(posenc.__file__).resolve().parents[2] / "snippets/choosing/models.json"
family = {
    "learned": "learned",
    "T5 bias": "t5",
    "ALiBi": "alibi",
    "none (recurrent layers)": "nope",
}  # everything else rotates
users = {name: [] for name in ("nope", "sinusoidal", "learned", "t5", "rope", "alibi")}
for name in posenc.released_configs():
    kinds = posenc.describe(posenc.released_config(name)["config"]).kinds()
    kind = "rope" if "rope" in kinds else {"t5-bias": "t5"}.get(kinds[0], kinds[0])
    users[kind].append(posenc.released_config(name)["model"])
for m in json.loads(MODELS.read_text(encoding="utf-8"))["models"]:
    if "released" not in m:  # counted above, from its config
        users[family.get(m["encoding"], "rope")].append(m["model"])

METHODS = ("nope", "sinusoidal", "learned", "t5", "rope", "alibi")
COMPARE = {
    "en": {
        "header": (
            "method",
            "kind",
            "parameters",
            "acts",
            "extra work",
            "ppl 128",
            "ppl 1024",
            "1024 / 128",
            "used by",
        ),
        "nope": ("no position code", "none", "nowhere (causal mask only)", "none"),
        "sinusoidal": ("sinusoidal", "absolute", "added to the input once", "one (L, d) add"),
        "learned": ("learned table", "absolute", "added to the input once", "one (L, d) add"),
        "t5": (
            "T5 bias",
            "relative",
            "bias on the attention scores, every layer",
            "one (h, L, L) bias per stack, added in every layer",
        ),
        "rope": ("RoPE", "relative", "rotates q and k, every layer", "q, k rotation per layer"),
        "alibi": (
            "ALiBi",
            "relative",
            "bias on the attention scores, every layer",
            "one (h, L, L) bias added in every layer, or computed in a fused kernel",
        ),
        "transformer": "original Transformer (2017)",
        "many": "{} models of the next section",
        "hybrids": "{} (hybrids: order from recurrent layers)",
        "comma": ", ",
        "n/a": "n/a",
    },
    "zh": {
        "header": (
            "方法",
            "类型",
            "参数量",
            "作用在哪里",
            "额外计算",
            "困惑度 128",
            "困惑度 1024",
            "1024 / 128",
            "使用者",
        ),
        "nope": ("不加位置编码", "无", "无（只有因果掩码）", "无"),
        "sinusoidal": ("正弦位置编码", "绝对", "输入端加一次", "一次 (L, d) 加法"),
        "learned": ("可学习位置嵌入", "绝对", "输入端加一次", "一次 (L, d) 加法"),
        "t5": (
            "T5 偏置",
            "相对",
            "每层加在注意力分数上",
            "编码器、解码器各算一个 (h, L, L) 偏置，每层都加",
        ),
        "rope": ("RoPE", "相对", "每层旋转 q 和 k", "每层旋转一次 q、k"),
        "alibi": (
            "ALiBi",
            "相对",
            "每层加在注意力分数上",
            "一个 (h, L, L) 偏置每层都加，或在融合内核里现算",
        ),
        "transformer": "原始 Transformer（2017）",
        "many": "下一节的 {} 个模型",
        "hybrids": "{}（混合模型，顺序来自递推层）",
        "comma": "、",
        "n/a": "不能运行",
    },
}


def show_comparison(lang="en"):
    text = COMPARE[lang]
    print("| " + " | ".join(text["header"]) + " |")
    print("|---|---|--:|---|---|--:|--:|--:|---|")
    for name in METHODS:
        label, kind, where, cost = text[name]
        ppl = perplexity[name]
        short, long = ppl["128"], ppl["1024"]  # null where a method cannot run at that length
        used = users[name] if name != "sinusoidal" else [text["transformer"]]
        used = text["many"].format(len(used)) if len(used) > 3 else text["comma"].join(used)
        if name == "nope" and used:  # no position code in any layer: the hybrids of chapter 17
            used = text["hybrids"].format(used)
        cells = [
            label, kind, str(parameters[name]), where, cost, f"{short:.2f}",
            text["n/a"] if long is None else f"{long:.2f}",
            text["n/a"] if long is None else f"{long / short:.2f}",
            used or "-",
        ]  # fmt: skip
        print("| " + " | ".join(cells) + " |")


# rescaling RoPE at inference (chapter 8's runs): NTK-aware and YaRN cut its growth a lot,
# PI without fine-tuning hardly at all
rise = {
    n: perplexity[n]["1024"] / perplexity[n]["128"]
    for n in ("rope", "rope+pi", "rope+ntk", "rope+yarn")
}
assert (
    rise["rope+yarn"] < rise["rope+ntk"] < 0.65 * rise["rope"]
    and rise["rope+pi"] > 0.9 * rise["rope"]
)
# --8<-- [end:compare]

if __name__ == "__main__":
    show_comparison("en")
    show_comparison("zh")
