"""posenc.positions: position ids at inference time, checked against transformers.

References: ``GenerationMixin._prepare_position_ids_for_generation`` and the positions
``generate`` feeds a model step by step; ``DataCollatorWithFlattening`` (positions and
``seq_idx``); ``masking_utils.find_packed_sequence_indices`` and its mask functions; RoPE
recomputed from scratch with Llama's and GPT-J's own rotation code; the re-rotation tables of
transformers' former ``SinkCache``.
"""
# ruff: noqa: E501  (the bad-input table reads best one case per line)

import pytest
import torch
from transformers import DataCollatorWithFlattening, LlamaConfig, LlamaForCausalLM, masking_utils
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama

import posenc
from posenc.positions import (
    document_causal_mask,
    document_ids,
    packed_positions,
    positions_from_mask,
    rerotate,
    sink_window_keep,
)

MASKS = [
    torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]]),  # left padding
    torch.tensor([[1, 1, 1, 0, 0], [1, 0, 1, 0, 1]]),  # right padding, holes
    torch.tensor([[0, 0, 0], [1, 1, 1]]),  # an all-padding row
]


def tiny_llama(**overrides) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        pad_token_id=0, bos_token_id=1, eos_token_id=63, **overrides,
    )  # fmt: skip
    return LlamaForCausalLM(config).eval()


# ── positions_from_mask ──────────────────────────────────────────────────────


@pytest.mark.parametrize("mask", MASKS, ids=["left", "right", "all-pad"])
def test_positions_from_mask_match_generate(mask):
    model = tiny_llama()
    ids = torch.ones_like(mask)
    expected = model._prepare_position_ids_for_generation(ids, {"attention_mask": mask})
    assert torch.equal(positions_from_mask(mask), expected)
    assert torch.equal(positions_from_mask(mask.bool()), expected)


def test_positions_generate_feeds_the_model():
    """Every step of transformers' generate: prompt positions from the mask, then last + 1."""
    model = tiny_llama()
    mask = torch.tensor([[0, 0, 0, 1, 1], [1, 1, 1, 1, 1]])
    ids = torch.tensor([[0, 0, 0, 5, 9], [7, 3, 8, 2, 4]])
    seen = []
    hook = model.model.register_forward_pre_hook(
        lambda module, args, kwargs: seen.append(kwargs["position_ids"].clone()), with_kwargs=True
    )
    try:
        model.generate(
            ids, attention_mask=mask, max_new_tokens=4, do_sample=False, min_new_tokens=4
        )
    finally:
        hook.remove()
    fed = torch.cat(seen, dim=-1)  # prompt, then one position per new token
    full_mask = torch.cat((mask, torch.ones(2, 3, dtype=torch.long)), dim=-1)  # 3 tokens fed back
    assert torch.equal(fed, positions_from_mask(full_mask))


def test_pad_position_changes_only_masked_entries():
    mask = MASKS[0]
    zero, one = positions_from_mask(mask), positions_from_mask(mask, pad_position=1)
    assert torch.equal(zero[mask == 1], one[mask == 1])
    assert (one[mask == 0] == 1).all() and (zero[mask == 0] == 0).all()


def test_kept_mask_gives_streamingllm_positions():
    # StreamingLLM §3.2: cache [0, 1, 2, 3, 6, 7, 8] decoding the 9th -> [0, 1, ..., 7]
    kept = torch.tensor([1, 1, 1, 1, 0, 0, 1, 1, 1, 1])
    assert positions_from_mask(kept)[kept == 1].tolist() == list(range(8))


# ── packing ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("start", [0, 2])
def test_packed_positions_match_data_collator_with_flattening(start):
    lengths = [3, 1, 5, 2]
    features = [{"input_ids": list(range(10, 10 + n))} for n in lengths]
    collator = DataCollatorWithFlattening(position_ids_start=start, return_seq_idx=True)
    batch = collator(features)
    assert torch.equal(packed_positions(lengths, start=start)[None], batch["position_ids"])
    if start == 0:
        # the document index read back from the positions is the collator's seq_idx
        assert torch.equal(document_ids(batch["position_ids"]), batch["seq_idx"].long())


@pytest.mark.parametrize(
    "positions",
    [
        torch.tensor([[0, 1, 2, 0, 1, 0, 1, 2, 3]]),
        torch.tensor([[0, 1, 2, 3], [0, 1, 0, 1]]),
        torch.tensor([[5, 6, 7, 2, 3, 0]]),  # documents need not start at 0
        torch.tensor([[0, 0, 0, 0]]),  # one-token documents
    ],
)
def test_document_ids_match_transformers(positions):
    expected = masking_utils.find_packed_sequence_indices(positions)
    if expected is None:  # transformers' shortcut for "one document per row"
        expected = torch.zeros_like(positions)
    assert torch.equal(document_ids(positions), expected)
    assert torch.equal(document_ids(positions[0]), expected[0])


def test_document_causal_mask_matches_transformers_mask_functions():
    positions = packed_positions([3, 4, 2])[None]
    documents = document_ids(positions)
    mask_fn = masking_utils.and_masks(
        masking_utils.causal_mask_function, masking_utils.packed_sequence_mask_function(documents)
    )
    seq = positions.shape[-1]
    expected = torch.tensor(
        [
            [bool(mask_fn(0, 0, torch.tensor(i), torch.tensor(j))) for j in range(seq)]
            for i in range(seq)
        ]
    )
    actual = document_causal_mask(documents)
    assert actual.shape == (1, 1, seq, seq)
    assert torch.equal(actual[0, 0], expected)
    assert torch.equal(document_causal_mask(documents[0]), expected)


def test_packed_llama_equals_separate_runs():
    """transformers' SDPA path builds the mask from reset positions alone (no attention_mask)."""
    model = tiny_llama()
    docs = [torch.tensor([5, 9, 2, 7]), torch.tensor([3, 8, 6]), torch.tensor([4, 4, 1, 9, 2])]
    packed = torch.cat(docs)[None]
    positions = packed_positions([len(d) for d in docs])[None]
    # no cache: transformers looks for packed documents only without one (masking_utils L876-881)
    logits = model(packed, position_ids=positions, use_cache=False).logits[0]
    separate = torch.cat([model(d[None]).logits[0] for d in docs])
    torch.testing.assert_close(logits, separate, atol=1e-5, rtol=0)


# ── sink cache ───────────────────────────────────────────────────────────────


@pytest.mark.parametrize("seq_len", [0, 3, 12, 13, 40])
def test_sink_window_keep_matches_start_and_recent_slices(seq_len):
    sinks, window = 4, 8
    # StreamingLLM's StartRecentKVCache: k[:, :, :start] and k[:, :, seq - recent:]
    kept = sorted(set(range(min(sinks, seq_len))) | set(range(max(seq_len - window, 0), seq_len)))
    assert (
        torch.arange(seq_len)[sink_window_keep(seq_len, sinks=sinks, window=window)].tolist()
        == kept
    )


# ── rerotate ─────────────────────────────────────────────────────────────────


def llama_rotate(k, positions, head_dim, base=10000.0):
    config = LlamaConfig(
        hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim,
        rope_parameters={"rope_type": "default", "rope_theta": base},
    )  # fmt: skip
    cos, sin = modeling_llama.LlamaRotaryEmbedding(config)(k, positions)
    return modeling_llama.apply_rotary_pos_emb(k, k, cos, sin)[1]


@pytest.mark.parametrize("delta", [1, 37, 1000, -5])
def test_rerotate_equals_rotating_from_scratch_half(delta):
    torch.manual_seed(0)
    k = torch.randn(2, 3, 6, 64)
    positions = torch.tensor(
        [[1000, 1001, 1002, 1003, 1004, 1005], [2000, 2003, 2004, 2010, 2011, 2015]]
    )
    stored = llama_rotate(k, positions, 64)
    expected = llama_rotate(k, positions - delta, 64)
    actual = rerotate(stored, delta, posenc.default_inv_freq(64))
    torch.testing.assert_close(actual, expected, atol=2e-4, rtol=0)


def test_rerotate_per_key_shift():
    torch.manual_seed(0)
    k = torch.randn(2, 3, 6, 64)
    positions = torch.tensor([[0, 1, 2, 3, 9, 10], [0, 1, 2, 3, 20, 21]])
    after = torch.tensor([[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5]])  # sinks stay, the rest close up
    stored = llama_rotate(k, positions, 64)
    actual = rerotate(stored, positions - after, posenc.default_inv_freq(64))
    torch.testing.assert_close(actual, llama_rotate(k, after, 64), atol=1e-5, rtol=0)
    # one shift for the whole batch, per key: (seq,)
    shared = rerotate(stored[:1], positions[0] - after[0], posenc.default_inv_freq(64))
    torch.testing.assert_close(shared, actual[:1], atol=0, rtol=0)


@pytest.mark.parametrize("rotary_dim", [32, 16])
def test_rerotate_interleaved_matches_gptj(rotary_dim):
    torch.manual_seed(0)
    k = torch.randn(1, 2, 5, 32)
    positions = torch.arange(50, 55)[None]

    def gptj(p):
        table = modeling_gptj.create_sinusoidal_positions(128, rotary_dim)
        sin, cos = torch.split(table[p], rotary_dim // 2, dim=-1)
        x = k.transpose(1, 2)  # GPT-J works in (batch, seq, heads, dim)
        rotated = modeling_gptj.apply_rotary_pos_emb(x[..., :rotary_dim], sin, cos)
        return torch.cat((rotated, x[..., rotary_dim:]), dim=-1).transpose(1, 2)

    inv_freq = posenc.default_inv_freq(rotary_dim)
    actual = rerotate(gptj(positions), 20, inv_freq, layout="interleaved")
    torch.testing.assert_close(actual, gptj(positions - 20), atol=1e-5, rtol=0)
    assert torch.equal(actual[..., rotary_dim:], k[..., rotary_dim:])  # pass-through untouched


def test_rerotate_matches_sinkcache_tables():
    """transformers 4.52 SinkCache._get_rerotation_cos_sin: cos/sin of (shifted - original)."""
    head_dim, window, new = 16, 10, 1
    config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim)
    cos, sin = modeling_llama.LlamaRotaryEmbedding(config)(
        torch.zeros(1), torch.arange(window)[None]
    )
    cos, sin = cos[0], sin[0]
    sinks = 4
    # https://github.com/huggingface/transformers/blob/v4.52.4/src/transformers/cache_utils.py#L1119-L1139
    original_cos, shifted_cos = cos[sinks + new :], cos[sinks:-new]
    original_sin, shifted_sin = sin[sinks + new :], sin[sinks:-new]
    rerotation_cos = original_cos * shifted_cos + original_sin * shifted_sin
    rerotation_sin = -original_sin * shifted_cos + original_cos * shifted_sin
    torch.manual_seed(0)
    keys = torch.randn(1, 2, window - sinks - new, head_dim)
    expected = keys * rerotation_cos + modeling_llama.rotate_half(keys) * rerotation_sin
    torch.testing.assert_close(
        rerotate(keys, new, posenc.default_inv_freq(head_dim)), expected, atol=1e-6, rtol=0
    )


def test_rerotate_keeps_dtype_and_composes():
    torch.manual_seed(0)
    k = torch.randn(1, 2, 4, 16, dtype=torch.bfloat16)
    inv_freq = posenc.default_inv_freq(16)
    out = rerotate(k, 3, inv_freq)
    assert out.dtype == torch.bfloat16 and out.shape == k.shape
    k32 = k.float()
    torch.testing.assert_close(
        rerotate(rerotate(k32, 3, inv_freq), -3, inv_freq), k32, atol=1e-6, rtol=0
    )
    torch.testing.assert_close(
        rerotate(rerotate(k32, 2, inv_freq), 5, inv_freq),
        rerotate(k32, 7, inv_freq),
        atol=1e-6,
        rtol=0,
    )


# ── no host reads: every function runs on tensors without values ─────────────


def test_no_value_reads_on_meta_tensors():
    mask = torch.ones(2, 5, dtype=torch.long, device="meta")
    assert positions_from_mask(mask).device.type == "meta"
    positions = torch.zeros(2, 5, dtype=torch.long, device="meta")
    assert document_causal_mask(document_ids(positions)).shape == (2, 1, 5, 5)
    k = torch.empty(1, 2, 5, 16, device="meta")
    inv_freq = torch.empty(8, device="meta")
    assert rerotate(k, positions[:1], inv_freq).shape == k.shape


# ── bad input ────────────────────────────────────────────────────────────────

k4 = torch.randn(1, 2, 3, 8)
inv4 = posenc.default_inv_freq(8)

BAD = [
    ("mask of floats", lambda: positions_from_mask(torch.ones(2, 3)), TypeError, "attention_mask must be an integer"),
    ("mask not a tensor", lambda: positions_from_mask([[1, 1]]), TypeError, "attention_mask must be a torch.Tensor"),
    ("mask of rank 3", lambda: positions_from_mask(torch.ones(1, 2, 3, dtype=torch.long)), ValueError, "attention_mask must have 1 or 2 dimensions"),
    ("mask with a 2", lambda: positions_from_mask(torch.tensor([[0, 1, 2]])), ValueError, "attention_mask must hold only 0 and 1"),
    ("negative pad_position", lambda: positions_from_mask(torch.ones(1, 2, dtype=torch.long), pad_position=-1), ValueError, "pad_position"),
    ("lengths a tensor", lambda: packed_positions(torch.tensor([2, 3])), TypeError, "lengths must be a list"),
    ("lengths empty", lambda: packed_positions([]), ValueError, "lengths must hold"),
    ("length zero", lambda: packed_positions([2, 0]), ValueError, r"lengths\[1\]"),
    ("length a float", lambda: packed_positions([2.0]), TypeError, r"lengths\[0\]"),
    ("float positions", lambda: document_ids(torch.tensor([0.0, 1.0])), TypeError, "positions must be an integer"),
    ("empty positions", lambda: document_ids(torch.zeros(1, 0, dtype=torch.long)), ValueError, "positions must have at least one"),
    ("documents of rank 3", lambda: document_causal_mask(torch.zeros(1, 1, 3, dtype=torch.long)), ValueError, "documents must have 1 or 2"),
    ("window 0", lambda: sink_window_keep(5, sinks=1, window=0), ValueError, "window"),
    ("sinks negative", lambda: sink_window_keep(5, sinks=-1, window=2), ValueError, "sinks"),
    ("keys of ints", lambda: rerotate(k4.long(), 1, inv4), TypeError, "k must be a floating"),
    ("float delta", lambda: rerotate(k4, 1.5, inv4), TypeError, "delta must be an int"),
    ("float delta tensor", lambda: rerotate(k4, torch.tensor([1.0, 2.0, 3.0]), inv4), TypeError, "delta must be an integer"),
    ("delta of another length", lambda: rerotate(k4, torch.tensor([1, 2]), inv4), ValueError, r"delta.shape\[-1\]"),
    ("delta of another batch", lambda: rerotate(k4, torch.ones(2, 3, dtype=torch.long), inv4), ValueError, r"delta.shape\[0\]"),
    ("inv_freq too wide", lambda: rerotate(k4, 1, posenc.default_inv_freq(16)), ValueError, "inv_freq must have between"),
    ("inv_freq of ints", lambda: rerotate(k4, 1, torch.arange(4)), TypeError, "inv_freq must be a floating"),
    ("unknown layout", lambda: rerotate(k4, 1, inv4, layout="gptj"), ValueError, "layout"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "message"), [case[1:] for case in BAD], ids=[case[0] for case in BAD]
)
def test_bad_input_names_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()
