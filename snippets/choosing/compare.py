"""Chapter "Comparison and choosing": one table, parameters counted by code and extrapolation
measured by the experiment of chapter 8 (its committed results).

Run it from the repository: python snippets/choosing/compare.py
"""

# --8<-- [start:compare]
import json
from pathlib import Path

import posenc
from experiments.extrapolation.results import load

report = load("full")  # the experiment of chapter 8

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

# which models use what: snippets/choosing/models.json, in the repository posenc is installed from
MODELS = Path(posenc.__file__).resolve().parents[2] / "snippets/choosing/models.json"
models = json.loads(MODELS.read_text())["models"]
encoding_key = {"learned": "learned", "T5 bias": "t5", "RoPE": "rope", "ALiBi": "alibi"}
users = {key: [] for key in ("nope", "sinusoidal", "learned", "t5", "rope", "alibi")}
for m in models:
    users[encoding_key[m["encoding"]]].append(m["model"])
users["sinusoidal"].append("original Transformer (2017)")

facts = {  # kind, where it acts, extra work per forward pass (L tokens, width d, h heads)
    "nope": ("none", "nowhere (causal mask only)", "none"),
    "sinusoidal": ("absolute", "added to the input once", "one (L, d) add"),
    "learned": ("absolute", "added to the input once", "one (L, d) add"),
    "t5": ("relative", "bias on the logits, every layer", "(h, L, L) bias per layer"),
    "rope": ("relative", "rotates q and k, every layer", "q, k rotation per layer"),
    "alibi": ("relative", "bias on the logits, every layer", "(h, L, L) bias, or fused"),
}
print("| method | kind | parameters | acts | cost | ppl 128 | ppl 1024 | 1024 / 128 | used by |")
print("|---|---|--:|---|---|--:|--:|--:|---|")
for name, (kind, where, cost) in facts.items():
    ppl = report["results"][name]["perplexity"]
    at_1024 = ppl["1024"]
    ratio = "n/a" if at_1024 is None else f"{at_1024 / ppl['128']:.2f}"
    long = "n/a" if at_1024 is None else f"{at_1024:.2f}"
    cells = [name, kind, f"{parameters[name]:,}", where, cost, f"{ppl['128']:.2f}", long, ratio]
    print("| " + " | ".join(cells + [", ".join(users[name]) or "-"]) + " |")
# --8<-- [end:compare]

# --8<-- [start:sinusoidal_claim]
growth = {
    name: report["results"][name]["perplexity"]["1024"]
    / report["results"][name]["perplexity"]["128"]
    for name in ("sinusoidal", "nope", "alibi")
}
assert growth["sinusoidal"] > growth["nope"] > growth["alibi"]
print(
    f"growth 128 -> 1024: sinusoidal x{growth['sinusoidal']:.2f}, "
    f"no encoding x{growth['nope']:.2f}, ALiBi x{growth['alibi']:.2f}"
)
# --8<-- [end:sinusoidal_claim]
