"""Claims of chapter 15 "Positions at inference time" (docs/chapters/15-positions-at-inference*.md)
that no printed output on the page shows, checked against transformers 5.23 where the page
speaks of it.

Run only this chapter's tests: make test-chapter NAME=positions-at-inference
"""

from __future__ import annotations

import runpy

import pytest
import torch
import transformers
from transformers import (
    DataCollatorWithFlattening,
    GPT2Config,
    GPT2LMHeadModel,
    GptOssConfig,
    LlamaConfig,
    LlamaForCausalLM,
    cache_utils,
    masking_utils,
)
from transformers.modeling_flash_attention_utils import (
    _is_packed_sequence,
    prepare_fa_kwargs_from_position_ids,
)
from transformers.models.gpt_oss import modeling_gpt_oss

from posenc.positions import packed_positions, positions_from_mask
from tools import layout

CHAPTER = layout.find_chapter("positions-at-inference")
SNIPPETS = CHAPTER.snippet_folder


@pytest.fixture(scope="module")
def page():
    """The chapter's code, run once as the page runs it."""
    return runpy.run_path(str(SNIPPETS / "positions_at_inference.py"), run_name="snippet")


def tiny_llama(**rope) -> LlamaForCausalLM:
    """A random Llama; weights 10x the default spread, so that attention depends on position."""
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16,
        pad_token_id=0, bos_token_id=1, eos_token_id=63, initializer_range=0.2, **rope,
    )  # fmt: skip
    return LlamaForCausalLM(config).eval()


PROMPT = torch.tensor([[5, 9, 2, 7]])
BATCH = torch.tensor([[0, 0, 0, 5, 9, 2, 7], [3, 8, 6, 4, 1, 9, 2]])
MASK = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]])


# ── left padding ─────────────────────────────────────────────────────────────


def test_transformers_5_fills_padded_positions_with_0():
    assert transformers.__version__.startswith("5.")
    model = tiny_llama()
    positions = model._prepare_position_ids_for_generation(BATCH, {"attention_mask": MASK})
    assert positions[0, :3].tolist() == [0, 0, 0] and positions[0, 3:].tolist() == [0, 1, 2, 3]


@torch.no_grad()
def test_rope_llama_ignores_a_uniform_shift_but_gpt2_does_not():
    """Without position_ids, both models number tokens by their index (L375-378 in Llama,
    L569-572 in GPT-2). RoPE only sees distances, so the padded prompt's logits stay those of
    the prompt alone; GPT-2's learned table sees the shifted positions."""
    llama = tiny_llama()
    alone = llama(PROMPT).logits[0]
    padded = llama(BATCH, attention_mask=MASK).logits[0, 3:]  # positions 3..6 from the index
    torch.testing.assert_close(padded, alone, atol=1e-5, rtol=0)

    torch.manual_seed(0)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4)).eval()
    alone = gpt2(PROMPT).logits[0]
    shifted = gpt2(BATCH, attention_mask=MASK).logits[0, 3:]
    assert (shifted - alone).abs().max() > 0.01
    fixed = gpt2(BATCH, attention_mask=MASK, position_ids=positions_from_mask(MASK)).logits[0, 3:]
    torch.testing.assert_close(fixed, alone, atol=1e-5, rtol=0)


@torch.no_grad()
def test_generate_continues_a_prompt_the_same_alone_and_in_a_padded_batch():
    model = tiny_llama()
    kwargs = dict(max_new_tokens=6, min_new_tokens=6, do_sample=False)
    alone = model.generate(PROMPT, attention_mask=torch.ones_like(PROMPT), **kwargs)[0, 4:]
    batched = model.generate(BATCH, attention_mask=MASK, **kwargs)[0, 7:]
    assert torch.equal(alone, batched)


@torch.no_grad()
def test_dynamic_ntk_makes_a_row_depend_on_its_neighbours():
    """transformers takes the current length from the largest position id in the batch
    (modeling_rope_utils.dynamic_frequency_update), so a long neighbour changes the frequencies
    of a short prompt once it passes max_position_embeddings (16 here)."""
    generator = torch.Generator().manual_seed(0)
    short = torch.randint(1, 60, (1, 12), generator=generator)  # 12 tokens: within the 16
    neighbour = torch.randint(1, 60, (1, 40), generator=generator)  # 40 tokens: beyond
    batch = torch.cat((torch.cat((torch.zeros(1, 28, dtype=torch.long), short), -1), neighbour))
    mask = (batch != 0).long()
    gaps = {}
    for name, rope in (("dynamic", {"rope_type": "dynamic", "factor": 2.0}), ("default", {})):
        model = tiny_llama(rope_parameters={"rope_theta": 1e4, **rope} if rope else None)
        alone = model(short, use_cache=False).logits[0]
        in_batch = model(
            batch, attention_mask=mask, position_ids=positions_from_mask(mask), use_cache=False
        ).logits[0, 28:]
        gaps[name] = (in_batch - alone).abs().max().item()
    assert gaps["dynamic"] > 0.1 and gaps["default"] < 1e-4


# ── packing ──────────────────────────────────────────────────────────────────


def test_boundaries_match_transformers_flash_attention_kwargs(page):
    """The page's cu_seqlens are what transformers hands flash_attn_varlen_func."""
    (cu_q, cu_k), (max_q, max_k) = prepare_fa_kwargs_from_position_ids(page["reset"])
    assert cu_q.tolist() == cu_k.tolist() == page["cu_seqlens"].tolist() == [0, 5, 12]
    assert int(max_q) == int(max_k) == 7
    collator = DataCollatorWithFlattening(return_flash_attn_kwargs=True)
    batch = collator([{"input_ids": page["doc_a"].tolist()}, {"input_ids": page["doc_b"].tolist()}])
    assert batch["cu_seq_lens_q"].tolist() == [0, 5, 12] and batch["max_length_q"] == 7
    assert torch.equal(batch["position_ids"], page["reset"])


def test_running_positions_are_one_document_for_transformers(page):
    """A packed row numbered 0..11 carries no boundary: both detectors see one sequence."""
    running = page["running"]
    assert masking_utils.find_packed_sequence_indices(running) is None
    assert not _is_packed_sequence(running, batch_size=1)
    assert _is_packed_sequence(page["reset"], batch_size=1)


def test_packing_without_reset_is_exact_only_because_rope_is_relative(page):
    """The page's table: with the per-document mask, running positions change nothing for
    RoPE; the exercise shows that an absolute encoding needs the reset."""
    assert page["packing"]["running", "block"] < 1e-5
    assert packed_positions([5, 7]).tolist() == page["reset"][0].tolist()


# ── caches ───────────────────────────────────────────────────────────────────


def test_stale_keys_all_claim_the_last_cache_position(page):
    """The page's explanation of the stale policy, by bookkeeping alone: each key keeps the
    position it was rotated at; a new token is rotated at the current cache length."""
    sinks, window = page["SINKS"], page["WINDOW"]
    rotated_at = []  # per cached token: the position its key was rotated at
    for _ in range(page["stream"].shape[1]):
        rotated_at.append(len(rotated_at))  # the new token: next position in the cache
        if len(rotated_at) > sinks + window:
            rotated_at = rotated_at[:sinks] + rotated_at[-window:]
    assert rotated_at == [0, 1, 2, 3] + [sinks + window] * window


def test_sinkcache_is_gone_from_transformers_5():
    assert not hasattr(transformers, "SinkCache")
    assert not hasattr(cache_utils, "SinkCache")


def test_stepwise_bfloat16_drift_grows_with_the_number_of_steps(tmp_path, monkeypatch):
    """The drift figure: one re-rotation by n stays at the rounding of one cast, n re-rotations
    by 1 grow with n; in float32 the two coincide."""
    monkeypatch.chdir(tmp_path)  # the script saves its figures into the working directory
    figure = runpy.run_path(str(SNIPPETS / "figure_drift.py"), run_name="figure")
    n, curves = figure["N"], figure["CURVES"]
    steps, once = curves["bfloat16", "steps"], curves["bfloat16", "once"]
    assert n[-1] == 512 and steps[-1] > 20 * steps[n.index(16)]
    assert max(once) < 0.05 and steps[-1] > 20 * max(once)
    torch.testing.assert_close(
        torch.tensor(curves["float32", "steps"]), torch.tensor(curves["float32", "once"]),
        atol=1e-3, rtol=0,
    )  # fmt: skip


# ── gpt-oss: learned sinks, not sink tokens ─────────────────────────────────


def test_gpt_oss_sink_is_a_logit_in_the_denominator_with_no_value():
    torch.manual_seed(0)
    heads, seq, dim = 2, 5, 8
    module = torch.nn.Module()
    module.sinks = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    module.num_key_value_groups = 1
    module.training = False
    q, k, v = torch.randn(3, 1, heads, seq, dim)
    out, weights = modeling_gpt_oss.eager_attention_forward(module, q, k, v, None, scaling=1.0)
    scores = q @ k.transpose(-1, -2)
    expected = scores.exp() / (
        scores.exp().sum(-1, keepdim=True) + module.sinks.exp()[:, None, None]
    )
    torch.testing.assert_close(weights, expected, atol=1e-6, rtol=0)
    assert (weights.sum(-1) < 1).all()  # the sink takes a share and adds no value
    torch.testing.assert_close(out, (expected @ v).transpose(1, 2), atol=1e-6, rtol=0)


def test_gpt_oss_alternates_sliding_and_full_layers():
    config = GptOssConfig(num_hidden_layers=4)
    assert config.sliding_window == 128
    assert config.layer_types == ["sliding_attention", "full_attention"] * 2
