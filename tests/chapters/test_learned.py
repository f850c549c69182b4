"""Claims of chapter 3 "Learned absolute embeddings" beyond its printed output.

The references are Hugging Face's GPT-2 and BERT (transformers, built from their default
configurations, which are GPT-2 small and BERT-base), not posenc: tiny models are built with
random weights, or on the meta device where only shapes matter.
"""

from __future__ import annotations

import runpy

import pytest
import torch
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

import posenc
from tools import layout

CHAPTER = layout.find_chapter("learned")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "learned.py"), run_name="snippet")


def _on_meta(model_class, config) -> torch.nn.Module:
    with torch.device("meta"):  # shapes only: nothing is allocated or initialised
        return model_class(config)


def _tiny_gpt2(n_positions: int) -> GPT2Model:
    config = GPT2Config(n_positions=n_positions, n_embd=16, n_layer=1, n_head=2, vocab_size=50)
    config.bos_token_id = config.eos_token_id = 0  # inside the tiny vocabulary
    return GPT2Model(config).eval()


def _tiny_bert(max_positions: int) -> BertModel:
    config = BertConfig(
        max_position_embeddings=max_positions,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        vocab_size=50,
    )
    return BertModel(config).eval()


# -- section "GPT-2 and BERT" ------------------------------------------------------------------


def test_gpt2_and_bert_store_a_learned_table_with_one_row_per_position() -> None:
    """GPT-2: `wpe`, n_positions = 1024 rows; BERT: `position_embeddings`, 512 rows. Both are
    trainable parameters saved in the checkpoint; the sinusoidal encoding saves none."""
    gpt2, bert = GPT2Config(), BertConfig()
    assert (gpt2.n_positions, gpt2.max_position_embeddings) == (1024, 1024)
    assert bert.max_position_embeddings == 512
    gpt2_weights = dict(_on_meta(GPT2Model, gpt2).named_parameters())
    bert_weights = dict(_on_meta(BertModel, bert).named_parameters())
    assert gpt2_weights["wpe.weight"].shape == (1024, 768)
    assert bert_weights["embeddings.position_embeddings.weight"].shape == (512, 768)
    # BERT adds a third table, the segment (token type) embeddings
    assert bert_weights["embeddings.token_type_embeddings.weight"].shape == (2, 768)
    assert list(posenc.SinusoidalPositionalEncoding(768).parameters()) == []


def test_hugging_face_initialises_the_position_tables_with_std_0_02() -> None:
    """initializer_range = 0.02 for both (OpenAI's own GPT-2 code used 0.01 for wpe), and
    posenc's table uses the same 0.02."""
    torch.manual_seed(0)
    gpt2 = GPT2Model(GPT2Config(n_layer=1, vocab_size=8))  # full 1024 x 768 table
    bert = BertModel(BertConfig(num_hidden_layers=1, vocab_size=8))  # full 512 x 768 table
    ours = posenc.LearnedPositionalEmbedding(max_positions=1024, dim=768)
    for weight in (gpt2.wpe.weight, bert.embeddings.position_embeddings.weight, ours.weight):
        assert weight.mean().abs() < 1e-3
        assert weight.std().item() == pytest.approx(0.02, rel=0.01)


def test_bert_truncated_normal_has_a_spread_of_about_0_018() -> None:
    """Google's BERT draws N(0, 0.02^2) and redraws values beyond two standard deviations
    (TensorFlow's truncated_normal_initializer): the spread left is about 0.018, not 0.02."""
    torch.manual_seed(0)
    values = torch.nn.init.trunc_normal_(torch.empty(512, 768), std=0.02, a=-0.04, b=0.04)
    assert values.abs().max() <= 0.04
    assert round(values.std().item(), 3) == 0.018


# -- section "What it learns" ------------------------------------------------------------------


def test_training_on_short_inputs_never_touches_the_later_rows(snippet) -> None:
    """Rows past the trained length keep their initial values: the model knows nothing there."""
    changed = snippet["changed"]
    assert changed[:64].all() and not changed[64:].any()


def test_with_weight_decay_the_unseen_rows_only_shrink() -> None:
    """AdamW decays every parameter each step, so unseen rows do change, but only by a common
    factor (1 - lr * wd) per step: they keep their random direction and learn nothing."""
    torch.manual_seed(0)
    table = posenc.LearnedPositionalEmbedding(max_positions=128, dim=16)
    before = table.weight.detach().clone()
    lr, weight_decay, steps = 0.01, 0.1, 20
    optimizer = torch.optim.AdamW(table.parameters(), lr=lr, weight_decay=weight_decay)
    for _ in range(steps):
        loss = table(torch.randn(8, 64, 16)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    after = table.weight.detach()
    shrink = (1 - lr * weight_decay) ** steps
    torch.testing.assert_close(after[64:], before[64:] * shrink)
    assert not torch.allclose(after[:64], before[:64] * shrink)  # the trained rows moved


# -- section "Past the end of the table" -------------------------------------------------------


def test_hugging_face_gpt2_has_no_length_check() -> None:
    """GPT2Model passes the position ids straight to `wpe`: 1025 tokens fail with the bare
    embedding error on CPU; 1024 tokens, the last row included, run."""
    model = _tiny_gpt2(n_positions=1024)
    with torch.no_grad():
        model(torch.zeros(1, 1024, dtype=torch.long))
        with pytest.raises(IndexError, match="index out of range in self") as error:
            model(torch.zeros(1, 1025, dtype=torch.long))
    assert "position" not in str(error.value)


def test_hugging_face_gpt2_places_a_cached_token_at_the_cache_length() -> None:
    """The exercise: with a KV cache of n tokens the new token sits at position n, so a table of
    P rows takes P - 1 cached tokens and fails at P (as posenc's `offset` does)."""
    model = _tiny_gpt2(n_positions=8)
    with torch.no_grad():
        for cached, fits in ((7, True), (8, False)):
            past = model(torch.zeros(1, cached, dtype=torch.long), use_cache=True)
            step = torch.zeros(1, 1, dtype=torch.long)
            if fits:
                model(step, past_key_values=past.past_key_values)
            else:
                with pytest.raises(IndexError, match="index out of range"):
                    model(step, past_key_values=past.past_key_values)


def test_hugging_face_bert_fails_with_a_shape_error() -> None:
    """BertModel slices its position ids from a stored range of max_position_embeddings, so 600
    tokens fail on a shape mismatch (600 against 512) whose message does not mention positions."""
    model = _tiny_bert(max_positions=512)
    with torch.no_grad():
        model(torch.zeros(1, 512, dtype=torch.long))
        with pytest.raises(RuntimeError) as error:
            model(torch.zeros(1, 600, dtype=torch.long))
    message = str(error.value)
    assert "expanded size of the tensor (600) must match the existing size (512)" in message
    assert "position" not in message
    # with token_type_ids (a BERT tokenizer's default) it fails one step later, at the sum
    ids = torch.zeros(1, 600, dtype=torch.long)
    with torch.no_grad(), pytest.raises(RuntimeError) as error:
        model(ids, token_type_ids=torch.zeros_like(ids))
    message = str(error.value)
    assert "size of tensor a (600) must match the size of tensor b (512)" in message
    assert "position" not in message


# -- section "What it costs" -------------------------------------------------------------------


def test_parameter_counts_match_the_reference_models(snippet) -> None:
    """The chapter's share of position parameters rests on these totals: they must equal the
    models that transformers builds from the published configurations."""

    def count(model: torch.nn.Module) -> int:
        return sum(p.numel() for p in model.parameters())

    assert snippet["bert_params"]() == count(_on_meta(BertModel, BertConfig()))
    gpt2 = GPT2Config()  # GPT-2 small: 1024 positions, width 768, 12 layers
    assert snippet["gpt2_params"]() == count(_on_meta(GPT2Model, gpt2))


# Published widths: BERT paper §3 (H = 768, 1024), GPT-2 paper Table 2 (d_model 768 to 1600);
# contexts: BERT max_position_embeddings 512, GPT-2 n_ctx 1024 (all four sizes).
PUBLISHED = {
    "BERT-base": (512, 768),
    "BERT-large": (512, 1024),
    "GPT-2 small": (1024, 768),
    "GPT-2 medium": (1024, 1024),
    "GPT-2 large": (1024, 1280),
    "GPT-2 XL": (1024, 1600),
}


def test_the_table_sizes_are_the_published_ones(snippet) -> None:
    assert snippet["models"] == PUBLISHED
    for name, (positions, width) in PUBLISHED.items():
        if name.startswith("GPT-2"):
            config = GPT2Config(n_positions=positions, n_embd=width, n_layer=1, n_head=16)
            table = _on_meta(GPT2Model, config).wpe.weight
        else:
            config = BertConfig(
                max_position_embeddings=positions,
                hidden_size=width,
                num_hidden_layers=1,
                num_attention_heads=16,
            )
            table = _on_meta(BertModel, config).embeddings.position_embeddings.weight
        assert table.numel() == snippet["table_sizes"][name]
