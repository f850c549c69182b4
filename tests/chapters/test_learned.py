"""Claims of chapter 3 "Learned absolute embeddings" beyond its printed output."""

from __future__ import annotations

import runpy

import pytest
import torch
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

from tools import layout

CHAPTER = layout.find_chapter("learned")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "learned.py"), run_name="snippet")


def _parameters(model_class, config) -> int:
    with torch.device("meta"):  # shapes only: nothing is allocated or initialised
        model = model_class(config)
    return sum(p.numel() for p in model.parameters())


def test_parameter_counts_match_the_reference_models(snippet) -> None:
    """The chapter's share of position parameters rests on these totals: they must equal the
    models that transformers builds from the published configurations."""
    assert snippet["bert_params"]() == _parameters(BertModel, BertConfig())
    gpt2 = GPT2Config()  # GPT-2 small: 1024 positions, width 768, 12 layers
    assert snippet["gpt2_params"]() == _parameters(GPT2Model, gpt2)


def test_training_on_short_inputs_never_touches_the_later_rows(snippet) -> None:
    """Rows past the trained length keep their initial values: the model knows nothing there."""
    changed = snippet["changed"]
    assert changed[:64].all() and not changed[64:].any()
