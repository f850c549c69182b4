"""Claims of chapter 4 "Relative position encodings" beyond its printed output.

The references are transformers' T5 and DeBERTa (built from small configurations, or on the
meta device where only shapes matter) and formulas written out from the papers, not posenc.
"""

from __future__ import annotations

import math
import runpy

import pytest
import torch
from transformers import DebertaConfig, DebertaModel, T5Config, T5Model
from transformers.models.deberta.modeling_deberta import DisentangledSelfAttention
from transformers.models.t5.modeling_t5 import T5Attention

from tools import layout

CHAPTER = layout.find_chapter("relative")


@pytest.fixture(scope="module")
def snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "relative.py"), run_name="snippet")


# -- section "The relative shift" --------------------------------------------------------------


@pytest.mark.parametrize(("q_len", "mem_len"), [(1, 0), (3, 5), (6, 2), (4, 3)])
def test_relative_shift_puts_distance_i_plus_mem_minus_j_in_column_j(
    snippet, q_len, mem_len
) -> None:
    """Transformer-XL's shift: row i of the (q_len, k_len) matrix whose column c holds distance
    k_len - 1 - c becomes the row whose column j holds distance (i + mem) - j, for j <= i + mem."""
    k_len = q_len + mem_len
    distances = torch.arange(k_len - 1, -1, -1, dtype=torch.float32).expand(q_len, k_len)
    shifted = snippet["rel_shift"](distances.clone())
    for i in range(q_len):
        for j in range(i + mem_len + 1):
            assert shifted[i, j] == i + mem_len - j


@pytest.mark.parametrize(("q_len", "mem_len"), [(3, 5), (4, 3), (5, 1)])
def test_relative_shift_fills_future_cells_with_the_pad_then_the_next_row(
    snippet, q_len, mem_len
) -> None:
    """Right of column mem + i, row i holds the padded zero, then the first entries of row i + 1
    of the product: the cells the causal mask removes."""
    k_len = q_len + mem_len
    tagged = 1 + torch.arange(q_len * k_len, dtype=torch.float32).view(q_len, k_len)  # no zeros
    shifted = snippet["rel_shift"](tagged.clone())
    for i in range(q_len - 1):
        assert shifted[i, mem_len + i + 1] == 0
        wrapped = shifted[i, mem_len + i + 2 :]
        assert torch.equal(wrapped, tagged[i + 1, : wrapped.numel()])
    assert (shifted[-1] != 0).all()  # the last query sees every key: nothing is left over


# -- section "T5" -------------------------------------------------------------------------------


def test_t5_last_buckets_start_at_91_and_113_not_128() -> None:
    """transformers' own bucket function: from distance 91 (encoder, either direction) and 113
    (decoder) on, every distance shares the last bucket; 128 is not where sharing starts."""
    distance = torch.arange(0, 1000)
    bucket = T5Attention._relative_position_bucket

    def first_of_last(relative: torch.Tensor, bidirectional: bool) -> int:
        b = bucket(relative, bidirectional=bidirectional, num_buckets=32, max_distance=128)
        return int(distance[b == b.max()][0])

    assert first_of_last(-distance, True) == first_of_last(distance, True) == 91
    assert first_of_last(-distance, False) == 113


def test_t5_offset_is_key_minus_query() -> None:
    """compute_bias feeds the buckets memory_position - context_position (j - i): in the decoder,
    a key 5 tokens in the past gets bucket 5 and a future key bucket 0."""
    attention = T5Attention(
        T5Config(num_heads=1, d_model=8, d_kv=8), has_relative_attention_bias=True
    )
    attention.is_decoder = True
    with torch.no_grad():
        attention.relative_attention_bias.weight.copy_(
            torch.arange(32.0)[:, None]
        )  # value = bucket
        bias = attention.compute_bias(8, 8)[0, 0]  # (q_len, k_len)
    assert bias[7, 2] == 5 and bias[2, 7] == 0


def test_t5_attention_does_not_scale_by_sqrt_d() -> None:
    attention = T5Attention(T5Config(num_heads=2, d_model=16, d_kv=8))
    assert attention.scaling == 1.0


def test_t5_base_has_one_bias_table_per_stack_768_numbers() -> None:
    """Only block 0 of the encoder and block 0 of the decoder own a (32, heads) table; the
    encoder's is bidirectional, the decoder's causal; cross-attention has none."""
    config = T5Config(
        vocab_size=16, d_model=24, d_kv=2, d_ff=8, num_heads=12, num_layers=3, num_decoder_layers=3
    )
    model = T5Model(config)
    tables = {
        name: tuple(p.shape)
        for name, p in model.named_parameters()
        if "relative_attention_bias" in name
    }
    assert tables == {
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": (32, 12),
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight": (32, 12),
    }
    assert sum(math.prod(shape) for shape in tables.values()) == 768
    assert not model.encoder.block[0].layer[0].SelfAttention.is_decoder  # bidirectional buckets
    assert model.decoder.block[0].layer[0].SelfAttention.is_decoder  # causal buckets
    cross = model.decoder.block[0].layer[1].EncDecAttention
    assert not cross.has_relative_attention_bias


def test_t5_one_stack_matches_the_comparison_row(snippet) -> None:
    row = {english: count for english, _, count in snippet["rows"]}
    assert row["T5 bias, one stack"] == 32 * 12 == snippet["per_stack"]
    assert snippet["both_stacks"] == 768


# -- section "DeBERTa" --------------------------------------------------------------------------


def _hf_deberta_bias(snippet) -> torch.Tensor:
    """transformers' content->position + position->content for the snippet's vectors."""
    d, k_span, n = snippet["d"], snippet["k_span"], snippet["n"]
    config = DebertaConfig(
        hidden_size=d,
        num_attention_heads=1,
        relative_attention=True,
        pos_att_type=["c2p", "p2c"],
        max_relative_positions=k_span,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    attention = DisentangledSelfAttention(config).eval()
    with torch.no_grad():
        attention.pos_proj.weight.copy_(snippet["w_kr"].T)  # K_r = P W_kr
        attention.pos_q_proj.weight.copy_(snippet["w_qr"].T)  # Q_r = P W_qr
        attention.pos_q_proj.bias.zero_()
        i = torch.arange(n)
        relative = (i[:, None] - i[None, :])[None]  # transformers' build_relative_position: i - j
        return attention.disentangled_att_bias(
            snippet["q_c"][None, None],
            snippet["k_c"][None, None],
            relative,
            snippet["P"],
            scale_factor=3,
        )[0, 0]


def test_transformers_deberta_indexes_position_to_content_with_delta_i_j(snippet) -> None:
    """The released code's p2c is K^c_j . Q^r_delta(i,j), the index of c2p, not the paper's
    delta(j, i). transformers scales only the p2c term inside (the query is scaled before)."""
    hf = _hf_deberta_bias(snippet)
    d = snippet["d"]
    code = snippet["c2p"] + snippet["p2c_code"] / math.sqrt(3 * d)
    paper = snippet["c2p"] + snippet["p2c"] / math.sqrt(3 * d)
    assert torch.allclose(hf, code, atol=1e-5)
    assert not torch.allclose(hf, paper, atol=1e-3)


def test_deberta_delta_counts_query_minus_key(snippet) -> None:
    """delta(i, j) = k + s for a key s tokens in the past, capped at 2k - 1 (equation 3)."""
    delta, k_span = snippet["delta"], snippet["k_span"]
    query = torch.tensor(5)
    for s in range(6):
        assert int(delta(query, query - s)) == min(k_span + s, 2 * k_span - 1)


def test_deberta_parameter_count_against_transformers() -> None:
    """P (2k x d, k = 512) plus W_qr and W_kr per layer, for 12 layers of width 768: what
    transformers' DebertaModel holds for position, less the bias its pos_q_proj adds."""
    config = DebertaConfig(
        relative_attention=True, pos_att_type=["c2p", "p2c"], max_relative_positions=512
    )
    with torch.device("meta"):
        model = DebertaModel(config)
    position = {
        name: p.numel()
        for name, p in model.named_parameters()
        if "rel_embeddings" in name or "pos_proj" in name or "pos_q_proj" in name
    }
    biases = sum(n for name, n in position.items() if name.endswith("pos_q_proj.bias"))
    assert biases == 12 * 768
    assert sum(position.values()) - biases == 2 * 512 * 768 + 12 * 2 * 768 * 768 == 14_942_208
    assert config.num_hidden_layers == 12 and config.hidden_size == 768


# -- section "Shaw et al." ---------------------------------------------------------------------


def test_shaw_rows_follow_j_minus_i_not_i_minus_j(snippet) -> None:
    """The pair (query 0, key 7) uses row 2K (offset +K), the pair (query 7, key 0) row 0."""
    rel_k, K = snippet["rel_k"], snippet["K"]
    with torch.no_grad():
        a = rel_k(8)
    assert torch.equal(a[0, 7], rel_k.weight[2 * K]) and torch.equal(a[7, 0], rel_k.weight[0])
