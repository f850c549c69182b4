"""Chapter "Comparing and choosing": the models whose released config posenc does not ship,
rendered from models.json, and the notes, lengths and scaling dicts of every row.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/choosing/models.py
"""

# --8<-- [start:models]
import json
from pathlib import Path

import posenc

# snippets/choosing/models.json, in the repository posenc is installed from (make install)
MODELS = Path(posenc.__file__).resolve().parents[2] / "snippets/choosing/models.json"
models = json.loads(MODELS.read_text(encoding="utf-8"))["models"]

LABELS = {
    "en": {
        "header": (
            "model",
            "encoding",
            "context",
            "base θ",
            "scaling",
            "layout",
            "rotary",
            "layers",
        ),
        "encoding": {
            "learned": "learned",
            "T5 bias": "T5 bias",
            "none (recurrent layers)": "none (order from recurrent layers)",
        },
        "default": "{} (default)",
        "not read": "not read",
        "global layers": "{} (global)",
        "opt-in": "{} (opt-in)",
        "all": "all",
        "part": "{} of {}",
        "interleaved": " interleaved",
        "alike": "all alike",
        "every": "all: {}",
        "ratio": "{} (ratio only)",
        "attention": {"global": "global", "local": "local {}", "chunked": "chunks of {}"},
        "comma": ", ",
        "colon": ": ",
    },
    "zh": {
        "header": ("模型", "编码", "上下文长度", "底数 θ", "缩放", "排布", "旋转维度", "各层"),
        "encoding": {
            "learned": "可学习",
            "T5 bias": "T5 偏置",
            "RoPE (MLA)": "RoPE（MLA）",
            "none (recurrent layers)": "无（顺序来自递推层）",
        },
        "default": "{}（默认值）",
        "not read": "未读到",
        "global layers": "{}（全局层）",
        "opt-in": "{}（需开启）",
        "all": "全部",
        "part": "{1} 维中的 {0}",
        "interleaved": " 交错",
        "alike": "每层相同",
        "every": "每层：{}",
        "ratio": "{}（只知比例）",
        "attention": {"global": "全局", "local": "窗口 {}", "chunked": "分块 {}"},
        "comma": "，",
        "colon": "：",
    },
}


def number(x):
    return "-" if x is None else f"{x:g}" if x != int(x) else str(int(x))


def unread(m, key, text, cell):
    """The cell, or 'not read' where the released config's key could not be read here."""
    return text["not read"] if key in m.get("unread", ()) else cell


def scaling_cell(m, text):
    scaling = m["scaling"]
    if scaling is None:
        return unread(m, "rope_scaling", text, "-")
    kind = scaling.get("rope_type", scaling.get("type"))
    factor = scaling.get("factor")
    cell = kind + (f" ×{factor:g}" if factor else "")
    if m["layers"] and any("theta" in group for group in m["layers"]):
        cell = text["global layers"].format(cell)  # per-layer bases: scaling on the global ones
    if m.get("scaling_when"):
        cell = text["opt-in"].format(cell)
    return cell


def rotary_cell(m, text):
    if m["rotary_dim"] is None:
        return "-"
    if m["rotary_dim"] < m["head_dim"]:
        return text["part"].format(m["rotary_dim"], m["head_dim"])
    cell = text["all"]
    if axes := m.get("axes"):
        sections = "/".join(str(n) for n in axes["sections"])
        cell += (
            text["comma"]
            + "t/h/w "
            + sections
            + (text["interleaved"] if axes["interleaved"] else "")
        )
    return cell


def layers_cell(m, text):
    if m["layers"] is None:
        return text["alike"]
    groups = []
    for group in m["layers"]:
        if group["attention"] == "none":  # a recurrent or linear-attention layer, named
            words = group["mixer"]
        else:
            where = text["attention"][group["attention"]].format(group.get("span"))
            words = ("RoPE " if group["rope"] else "NoPE ") + where
        if "theta" in group:
            words += f" θ {number(group['theta'])}"
        groups.append(words if len(m["layers"]) == 1 else f"{group['n']}× {words}")
    if len(groups) == 1:
        return text["every"].format(groups[0])
    cell = text["comma"].join(groups)
    return cell if m["num_layers"] else text["ratio"].format(cell)  # no count: a ratio


def show_models(lang="en"):
    text = LABELS[lang]
    print("| " + " | ".join(text["header"]) + " |")
    print("|---|---|--:|--:|---|---|---|---|")
    for m in models:
        if "released" in m:  # its row is computed from the committed config (released.py)
            continue
        context = unread(m, "max_position_embeddings", text, number(m["context"]))
        if m.get("context_default"):
            context = text["default"].format(context)
        row = [
            m["model"],
            text["encoding"].get(m["encoding"], m["encoding"]),
            context,
            unread(m, "rope_theta", text, number(m["theta"])),
            scaling_cell(m, text),
            m["layout"] or "-",
            rotary_cell(m, text),
            layers_cell(m, text),
        ]
        print("| " + " | ".join(row) + " |")


def show_notes(lang="en"):
    text = LABELS[lang]
    for m in models:
        print(m["model"] + text["colon"] + m["note" if lang == "en" else "note_zh"])


# --8<-- [end:models]

# --8<-- [start:context]
CONTEXT = {
    "en": "{model:<16} max_position_embeddings {config:>6}, trained at {trained:>5}: {ratio:g} times",
    "zh": "{model:<16} max_position_embeddings {config:>6}，为训练长度 {trained:>5} 的 {ratio:g} 倍",
}


def show_context(lang="en"):
    for m in models:
        if "trained" in m:
            trained = m["trained"]["length"]
            assert m["context"] > trained  # the config's length is not the trained length
            ratio = round(m["context"] / trained, 2)
            print(
                CONTEXT[lang].format(
                    model=m["model"], config=m["context"], trained=trained, ratio=ratio
                )
            )


# --8<-- [end:context]

# --8<-- [start:check]
CHECK = {
    "en": ("{:<16} {:<9} d = {:<4} slowest θ = {:.3e}, attention factor {:.4g}", "not run: {}"),
    "zh": ("{:<16} {:<9} d = {:<4} 最慢频率 {:.3e}，注意力因子 {:.4g}", "未运行：{}"),
}
SKIP = {
    "en": {"factors": "the 48 short and 48 long factors are not copied into the data file"},
    "zh": {"factors": "数据文件没有抄录 48 个 short_factor 和 48 个 long_factor"},
}


def show_scaling(lang="en"):
    line, skipped = CHECK[lang]
    for m in models:
        scaling = m["scaling"]
        if scaling is None:
            continue
        kind = scaling.get("rope_type", scaling.get("type"))
        start = f"{m['model']:<16} {kind:<9} d = {m['rotary_dim']:<4} "
        if kind == "longrope" and "long_factor" not in scaling:
            print(start + skipped.format(SKIP[lang]["factors"]))
            continue
        try:  # the dict exactly as the config writes it, the rotated width of the model
            inv_freq, factor = posenc.rope_inv_freq(m["rotary_dim"], m["theta"], scaling=scaling)
        except ValueError as error:
            print(start + skipped.format(error))
            continue
        print(line.format(m["model"], kind, m["rotary_dim"], inv_freq[-1].item(), factor))


# --8<-- [end:check]

if __name__ == "__main__":
    for lang in ("en", "zh"):
        show_models(lang)
        show_notes(lang)
        show_context(lang)
        show_scaling(lang)
