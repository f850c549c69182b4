"""Claims of chapter 9 "Comparing and choosing": the model data the tables are drawn from."""

from __future__ import annotations

import json

import pytest

import posenc
from tools import layout

CHAPTER = layout.find_chapter("choosing")
MODELS = json.loads((CHAPTER.snippet_folder / "models.json").read_text(encoding="utf-8"))["models"]
ENCODINGS = {"learned", "T5 bias", "RoPE", "ALiBi"}


@pytest.mark.parametrize("model", MODELS, ids=[m["model"] for m in MODELS])
def test_every_model_row_is_complete_and_consistent(model: dict) -> None:
    assert model["config"], "each row names the config it was read from"
    assert model["encoding"] in ENCODINGS
    rotary = model["encoding"] == "RoPE"
    assert (model["theta"] is not None) == rotary and (model["layout"] is not None) == rotary
    assert model["alibi"] == (model["encoding"] == "ALiBi")
    if model["scaling"] is not None:
        assert rotary
        usable = {k: v for k, v in model["scaling"].items() if k != "only_if"}
        if usable["rope_type"] != "longrope":  # longrope needs its factor lists
            posenc.rope_inv_freq(128, base=model["theta"], scaling=usable)  # accepted as is
