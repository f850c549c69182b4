"""Chapter "Comparison and choosing": which model uses what, rendered from models.json.

Run it from the repository: python snippets/choosing/models.py
"""

# --8<-- [start:models]
import json
from pathlib import Path

import posenc

# snippets/choosing/models.json, in the repository posenc is installed from (make install)
MODELS = Path(posenc.__file__).resolve().parents[2] / "snippets/choosing/models.json"
models = json.loads(MODELS.read_text())["models"]


def cell(value, uncertain=False):
    text = "-" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))
    return text + ("?" if uncertain else "")


def scaling_text(scaling):
    if scaling is None:
        return "-"
    factor = scaling.get("factor")
    return scaling["rope_type"] + (f" x{factor:g}" if factor else "")


print("| model | encoding | context | base θ | scaling | layout | rotary | ALiBi |")
print("|---|---|--:|--:|---|---|--:|---|")
for m in models:
    unsure = set(m["uncertain"])
    row = [
        m["model"],
        m["encoding"],
        cell(m["context"], "context" in unsure),
        cell(m["theta"], "theta" in unsure),
        scaling_text(m["scaling"]),
        cell(m["layout"]),
        cell(m["rotary_fraction"]),
        "yes" if m["alibi"] else "no",
    ]
    print("| " + " | ".join(row) + " |")
# --8<-- [end:models]

# --8<-- [start:check]
# Every scaling dict in the data is one posenc (and Hugging Face) accepts as it is.
for m in models:
    scaling = m["scaling"]
    if scaling is None or scaling["rope_type"] == "longrope":  # longrope needs its factor lists
        continue
    usable = {k: v for k, v in scaling.items() if k != "only_if"}
    inv_freq, factor = posenc.rope_inv_freq(128, base=m["theta"], scaling=usable)
    print(
        f"{m['model']:<14} {scaling['rope_type']:<7} slowest θ = {inv_freq[-1]:.3e}, "
        f"attention factor {factor:g}"
    )
# --8<-- [end:check]

# --8<-- [start:notes]
for m in models:
    print(f"{m['model']}: {m['note']}")
# --8<-- [end:notes]
