"""Claims of chapter 9 "Comparing and choosing" beyond its printed output.

The first model table is computed from posenc's released configs (snippets/choosing/released.py,
posenc.describe, itself checked against transformers in tests/lib/test_describe.py); its
layouts are checked here against each family's rotation, and the data file's rows that name a
released config must agree with it. The second table (snippets/choosing/models.json, the rows
with no released config) is checked against transformers: each row's
config keys are read by the model's own config class, and each displayed value (length, base,
scaling, rotated width, layer pattern, M-RoPE sections) must be what that class makes of them.
The layouts are checked against each family's own rotation function, the scaling dicts against
transformers' frequency functions (and MiniMind's against its own formula), and the claims the
prose makes about transformers' T5, BLOOM, GPT-2 and BERT against tiny models built offline.
The hybrids of chapter 17 (recurrent or linear-attention layers next to softmax attention) are
checked against the layers transformers builds from their keys, and against chapter 17's table.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import runpy

import pytest
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.minimax import modeling_minimax

import posenc
from tests.lib.families import quietly
from tools import layout

CHAPTER = layout.find_chapter("choosing")
MODELS = json.loads((CHAPTER.snippet_folder / "models.json").read_text(encoding="utf-8"))["models"]
ROTARY = {"RoPE", "M-RoPE", "RoPE (MLA)"}
NONE = "none (recurrent layers)"  # no position encoding in any layer (chapter 17's hybrids)
ENCODINGS = ROTARY | {"learned", "T5 bias", "ALiBi", NONE}
UNREADABLE = {"max_position_embeddings", "rope_theta", "rope_scaling"}
IN_TRANSFORMERS = [m for m in MODELS if m["model_type"]]
LENGTH_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len")

logging.getLogger("transformers").setLevel(logging.ERROR)  # Llama 4 Scout's dict warns


def ids(rows: list[dict]) -> list[str]:
    return [m["model"] for m in rows]


def config_of(m: dict) -> transformers.PretrainedConfig:
    """The row's config keys read by the model's own transformers config class."""
    keys = json.loads(json.dumps(m["config"]))
    scaling = keys.get("rope_scaling")
    if scaling and scaling.get("type") == "longrope":  # the data file leaves the lists out
        pairs = m["rotary_dim"] // 2
        keys["rope_scaling"] = dict(scaling, short_factor=[1.0] * pairs, long_factor=[1.0] * pairs)
    return transformers.AutoConfig.for_model(m["model_type"], **keys)


def rope_parameters(config: transformers.PretrainedConfig, layer_type: str = "full_attention"):
    parameters = config.rope_parameters
    return parameters.get(layer_type, parameters) if layer_type in parameters else parameters


# -- the data file --------------------------------------------------------------------------


@pytest.mark.parametrize("m", MODELS, ids=ids(MODELS))
def test_every_row_is_complete_and_consistent(m: dict) -> None:
    source = m["source"]
    assert source["hub"] and source["file"] and source["read"], "each row says where it was read"
    assert m["note"] and any("\u4e00" <= ch <= "\u9fff" for ch in m["note_zh"])
    assert m["encoding"] in ENCODINGS
    rotary = m["encoding"] in ROTARY
    # a value that could not be read is null, listed in unread, and absent from the config keys
    unread = set(m.get("unread", []))
    assert unread <= UNREADABLE and not unread & set(m["config"])
    assert (m["theta"] is not None) == (rotary and "rope_theta" not in unread)
    assert (m["layout"] is not None) == rotary and (m["rotary_dim"] is not None) == rotary
    if rotary:
        assert 0 < m["rotary_dim"] <= m["head_dim"] and m["rotary_dim"] % 2 == 0
    else:
        assert not unread & {"rope_theta", "rope_scaling"}
    if "max_position_embeddings" in unread:
        assert m["context"] is None
    if "rope_scaling" in unread:
        assert m["scaling"] is None
    # the table's scaling is the config's dict, and its context the config's length key
    assert m["scaling"] == m["config"].get("rope_scaling") or m["encoding"] == "M-RoPE"
    written = [m["config"][key] for key in LENGTH_KEYS if key in m["config"]]
    assert written == ([] if m.get("context_default") or m["context"] is None else [m["context"]])
    for group in m["layers"] or []:
        assert group["attention"] in ("global", "local", "chunked", "none")
        assert ("span" in group) == (group["attention"] in ("local", "chunked"))
        # "none": a recurrent or linear-attention layer, named, and never rotated
        assert ("mixer" in group) == (group["attention"] == "none")
        assert not (group["attention"] == "none" and group["rope"])
    if m["layers"]:
        assert any(group["rope"] for group in m["layers"]) == rotary
        assert "num_layers" in m  # null: only the ratio of the unit is known
    recurrent = any(group["attention"] == "none" for group in m["layers"] or [])
    assert (m["encoding"] == NONE) == (recurrent and not rotary)


# -- against transformers' config classes ----------------------------------------------------


@pytest.mark.parametrize("m", IN_TRANSFORMERS, ids=ids(IN_TRANSFORMERS))
def test_row_is_what_transformers_reads_from_the_config(m: dict) -> None:
    config = config_of(m)
    lengths = [getattr(config, key) for key in LENGTH_KEYS if hasattr(config, key)]
    unread = m.get("unread", [])
    if "max_position_embeddings" in unread:  # the library would fill in its class default
        assert lengths == [type(config)().max_position_embeddings]
    elif m["context"] is None:
        assert lengths == [], "no length key, none from the library either"
    else:
        assert m["context"] in lengths
    if m.get("context_default"):  # the file omits the key: the class default applies
        assert "max_position_embeddings" in m["absent"]
        assert type(config)().max_position_embeddings == m["context"]
    if m["encoding"] not in ROTARY:
        assert getattr(config, "rope_parameters", None) is None
        return
    if m["model_type"] == "gptj":  # no RoPE parameters in the config: fixed in the code
        assert config.rotary_dim == m["rotary_dim"] and config.n_embd // config.n_head == 256
        return
    parameters = rope_parameters(config)
    if "rope_theta" in unread:  # not the released base: transformers' generic default
        assert parameters["rope_theta"] == 10000.0 and m["theta"] is None
    else:
        assert parameters["rope_theta"] == m["theta"]
    if m["scaling"] is not None:
        kind = m["scaling"].get("rope_type", m["scaling"].get("type"))
        assert parameters["rope_type"] == kind
        assert parameters.get("factor") == m["scaling"].get("factor")
    else:
        assert parameters["rope_type"] == "default"
    if m["model_type"] == "deepseek_v3":  # MLA: a position-free part and a rotated part
        assert config.qk_nope_head_dim + config.qk_rope_head_dim == m["head_dim"]
        assert config.qk_rope_head_dim == m["rotary_dim"]
        return
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    assert head_dim == m["head_dim"]
    if m["model_type"] == "minimax":  # the card's half of the head; see the test of MiniMax below
        assert m["rotary_dim"] * 2 == head_dim
        return
    assert int(head_dim * parameters.get("partial_rotary_factor", 1.0)) == m["rotary_dim"]
    if axes := m.get("axes"):  # M-RoPE sections count pairs of channels
        assert parameters["mrope_section"] == axes["sections"]
        assert parameters.get("mrope_interleaved", False) == axes["interleaved"]
        assert sum(axes["sections"]) == m["rotary_dim"] // 2


def expected_layers(m: dict) -> list[tuple]:
    """(rotates, attention, span) per layer, from the row's repeating unit."""
    unit = [(g["rope"], g["attention"], g.get("span")) for g in m["layers"] for _ in range(g["n"])]
    return [unit[i % len(unit)] for i in range(m["num_layers"])]


def is_hybrid(m: dict) -> bool:
    """Recurrent or linear-attention layers next to softmax attention (chapter 17)."""
    return any(group["attention"] == "none" for group in m["layers"] or [])


PATTERNED = [m for m in IN_TRANSFORMERS if m["layers"] and not is_hybrid(m)]


@pytest.mark.parametrize("m", PATTERNED, ids=ids(PATTERNED))
def test_layer_pattern_is_what_transformers_builds(m: dict) -> None:
    config = config_of(m)
    assert config.num_hidden_layers == m["num_layers"]
    rotates = getattr(config, "no_rope_layers", None) or [1] * m["num_layers"]  # 1 = RoPE
    kinds = getattr(config, "layer_types", None) or ["sliding_attention"] * m["num_layers"]
    attention = {
        "full_attention": ("global", None),
        "sliding_attention": ("local", getattr(config, "sliding_window", None)),
        "chunked_attention": ("chunked", getattr(config, "attention_chunk_size", None)),
    }
    built = [(bool(r), *attention[k]) for r, k in zip(rotates, kinds, strict=True)]
    assert built == expected_layers(m)
    if m["model_type"] == "mistral":  # no layer_types: the one window applies to every layer
        assert getattr(config, "layer_types", None) is None and config.sliding_window == 4096
    for group in m["layers"]:  # a per-type base: the local layers' (Gemma 3)
        if "theta" in group:
            local = config.rope_parameters["sliding_attention"]
            assert local == {"rope_type": "default", "rope_theta": group["theta"]}


UNIFORM = [m for m in IN_TRANSFORMERS if not m["layers"] and m["encoding"] in ROTARY]


@pytest.mark.parametrize("m", UNIFORM, ids=ids(UNIFORM))
def test_all_alike_means_every_layer_global_and_rotated(m: dict) -> None:
    config = config_of(m)
    assert set(getattr(config, "layer_types", None) or ["full_attention"]) == {"full_attention"}
    assert set(getattr(config, "no_rope_layers", None) or [1]) == {1}


# -- layouts, against each family's own rotation ---------------------------------------------


def family_rotation(model_type: str, q: torch.Tensor, k: torch.Tensor, angles: torch.Tensor):
    """Rotate q, k (1, 1, seq, d) with the family's function; angles (seq, d/2)."""
    module = getattr(transformers.models, model_type.removesuffix("_text"))
    modeling = getattr(module, f"modeling_{model_type.removesuffix('_text')}")
    cos, sin = angles.cos()[None], angles.sin()[None]  # (1, seq, d/2)
    if model_type == "gptj":  # (batch, seq, heads, d) and half-width tables
        rotate = modeling.apply_rotary_pos_emb
        turn = lambda x: rotate(x.transpose(1, 2), sin, cos).transpose(1, 2)  # noqa: E731
        return turn(q), turn(k)
    if model_type == "llama4_text":  # complex numbers on (batch, seq, heads, d)
        freqs = torch.polar(torch.ones_like(angles), angles)[None]
        q2, k2 = modeling.apply_rotary_emb(q.transpose(1, 2), k.transpose(1, 2), freqs)
        return q2.transpose(1, 2), k2.transpose(1, 2)
    full = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)  # Hugging Face's cat(freqs, freqs)
    if model_type == "deepseek_v3":
        return modeling.apply_rotary_pos_emb_interleave(q, k, *full)
    if model_type == "gpt_oss":  # half-width tables
        return modeling.apply_rotary_pos_emb(q, k, cos, sin)
    return modeling.apply_rotary_pos_emb(q, k, *full)


def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-1, -2)


ROTATING = [m for m in IN_TRANSFORMERS if m["encoding"] in ROTARY]


@pytest.mark.parametrize("m", ROTATING, ids=ids(ROTATING))
def test_layout_is_the_pairing_of_the_family_code(m: dict) -> None:
    torch.manual_seed(0)
    d, seq = m["rotary_dim"], 8
    q, k = torch.randn(2, 1, 1, seq, d).unbind(0)
    inv_freq = 1.0 / 10000 ** (torch.arange(0, d, 2).float() / d)
    positions = torch.arange(seq)
    theirs = scores(*family_rotation(m["model_type"], q, k, positions[:, None] * inv_freq))
    ours = {}
    for name in ("half", "interleaved"):
        cos, sin = posenc.rotary_cos_sin(positions, inv_freq, layout=name)
        rotated = (posenc.apply_rotary(x, cos, sin, layout=name) for x in (q, k))
        ours[name] = scores(*rotated)
    other = "half" if m["layout"] == "interleaved" else "interleaved"
    torch.testing.assert_close(theirs, ours[m["layout"]], rtol=1e-5, atol=1e-5)
    assert (theirs - ours[other]).abs().max() > 0.1  # the other pairing gives other scores


# -- the first table: posenc's released configs ------------------------------------------------


@pytest.fixture(scope="module")
def released() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "released.py"), run_name="snippet")


RELEASED = [n for n in posenc.released_configs()
            if "rope" in posenc.describe(posenc.released_config(n)["config"]).kinds()]  # fmt: skip


@pytest.mark.parametrize("name", RELEASED)
def test_released_table_layout_is_the_pairing_of_the_family_code(released, name) -> None:
    """The first table's layout column (released.py's INTERLEAVED): the family's own rotation
    gives the scores of that pairing and not of the other."""
    model = posenc.describe(posenc.released_config(name)["config"])
    layout = "interleaved" if model.model_type in released["INTERLEAVED"] else "half"
    d = next(layer for layer in model.layers if layer.kind == "rope").rotary_dim
    row = {"model_type": model.model_type, "rotary_dim": d, "layout": layout}
    test_layout_is_the_pairing_of_the_family_code(row)


REFERS = [m for m in MODELS if "released" in m]


@pytest.mark.parametrize("m", REFERS, ids=ids(REFERS))
def test_rows_that_name_a_released_config_agree_with_it(m: dict) -> None:
    """A row the first table computes from a committed config (and the second table leaves
    out) holds the same keys as that config: the data file and src/posenc/configs/ agree."""
    committed = posenc.released_config(m["released"])["config"]
    fields = committed.get("text_config", committed)
    assert {key: fields.get(key) for key in m["config"]} == m["config"]
    assert not set(m.get("absent", [])) & set(fields)


def test_released_table_has_one_row_per_released_config(released, capsys) -> None:
    released["show_released"]("en")
    rows = capsys.readouterr().out.splitlines()[2:]
    models = [posenc.released_config(n)["model"] for n in posenc.released_configs()]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == models


# -- scaling dicts ---------------------------------------------------------------------------

SCALED = [m for m in IN_TRANSFORMERS if m["scaling"] and m["scaling"].get("type") != "longrope"]


@pytest.mark.parametrize("m", SCALED, ids=ids(SCALED))
def test_posenc_takes_the_scaling_dict_as_the_config_writes_it(m: dict) -> None:
    """The check block's claim: posenc gives transformers' frequencies and attention factor,
    bit for bit, from the dict as written, at the model's rotated width; except Llama 4 Scout's
    dict (low_freq_factor = high_freq_factor), which posenc refuses and transformers computes."""
    config = config_of(m)
    kind = rope_parameters(config)["rope_type"]
    if m["model_type"] == "gemma3_text":
        theirs, their_factor = ROPE_INIT_FUNCTIONS[kind](config, "cpu", layer_type="full_attention")
    else:
        theirs, their_factor = ROPE_INIT_FUNCTIONS[kind](config, "cpu")
    assert theirs.shape == (m["rotary_dim"] // 2,) and torch.isfinite(theirs).all()
    if m["model"] == "Llama 4 Scout":
        with pytest.raises(ValueError, match="high_freq_factor"):
            posenc.rope_inv_freq(m["rotary_dim"], m["theta"], scaling=m["scaling"])
        # a hard step: every frequency kept, or divided by exactly 16
        plain = 1.0 / m["theta"] ** (torch.arange(0, 128, 2, dtype=torch.int64).float() / 128)
        assert set(torch.round(plain / theirs, decimals=4).tolist()) == {1.0, 16.0}
        return
    ours, our_factor = posenc.rope_inv_freq(m["rotary_dim"], m["theta"], scaling=m["scaling"])
    assert torch.equal(ours, theirs.float()) and our_factor == pytest.approx(their_factor)


def test_minimind_yarn_matches_its_own_formula() -> None:
    """MiniMind's precompute_freqs_cis (model/model_minimind.py L62-L78 at d65ef2c), written out:
    the ramp between floor/ceil of the dimensions that turn beta times within 2048 tokens."""
    m = next(m for m in MODELS if m["model"] == "MiniMind")
    dim, base, s = m["rotary_dim"], m["theta"], m["scaling"]
    assert dim == m["config"]["hidden_size"] // m["config"]["num_attention_heads"] == 96
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    orig, factor = s["original_max_position_embeddings"], s["factor"]

    def inv_dim(b: float) -> float:
        return (dim * math.log(orig / (b * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(inv_dim(s["beta_fast"])), 0)
    high = min(math.ceil(inv_dim(s["beta_slow"])), dim // 2 - 1)
    ramp = torch.clamp((torch.arange(dim // 2).float() - low) / max(high - low, 0.001), 0, 1)
    expected = freqs * (1 - ramp + ramp / factor)
    ours, attention_factor = posenc.rope_inv_freq(dim, base, scaling=s)
    torch.testing.assert_close(ours, expected, rtol=1e-6, atol=0)
    assert attention_factor == s["attention_factor"] == 1.0


def test_phi3_keeps_one_factor_per_pair_of_channels() -> None:
    """The note's 48 short and 48 long factors: Phi3Config accepts lists of head_dim / 2 = 48
    entries and refuses 47."""
    m = next(m for m in MODELS if m["model"] == "Phi-3-mini-128k")
    config_of(m)  # lists of 48
    keys = dict(m["config"], rope_scaling={"type": "longrope", "short_factor": [1.0] * 47,
                                           "long_factor": [1.0] * 47})  # fmt: skip
    with pytest.raises(Exception, match="must have length 48, got 47"):
        transformers.AutoConfig.for_model("phi3", **keys)


# -- the comparison table's remarks ----------------------------------------------------------


def test_t5_builds_its_bias_in_the_first_layer_of_each_stack_only() -> None:
    """'one (h, L, L) bias per stack, added in every layer'."""
    config = transformers.T5Config(
        vocab_size=32, d_model=16, d_kv=4, d_ff=32, num_heads=4, num_layers=3
    )
    model = transformers.T5Model(config)
    for stack in (model.encoder, model.decoder):
        flags = [block.layer[0].SelfAttention.has_relative_attention_bias for block in stack.block]
        assert flags == [True, False, False]


def test_bloom_adds_one_alibi_tensor_in_every_layer() -> None:
    """'one (h, L, L) bias added in every layer': BLOOM computes it once per forward pass and
    hands the same tensor to every block."""
    config = transformers.BloomConfig(vocab_size=32, hidden_size=16, n_head=4, n_layer=3)
    model = transformers.BloomModel(config).eval()
    seen = []
    for block in model.h:
        block.register_forward_pre_hook(
            lambda module, args, kwargs: seen.append(kwargs["alibi"]), with_kwargs=True
        )
    with torch.no_grad():
        model(torch.randint(0, 32, (1, 5)), attention_mask=torch.ones(1, 5, dtype=torch.long))
    assert len(seen) == 3 and all(alibi is seen[0] for alibi in seen)


def test_hugging_face_learned_tables_have_no_length_check() -> None:
    """Quiz 2: GPT-2 fails inside the embedding lookup, BERT on a shape mismatch."""
    torch.manual_seed(0)
    gpt2 = transformers.GPT2Model(transformers.GPT2Config(vocab_size=32, n_positions=8, n_embd=16,
                                                          n_layer=1, n_head=2))  # fmt: skip
    with pytest.raises(IndexError, match="index out of range"):
        gpt2(torch.randint(0, 32, (1, 9)))
    bert = transformers.BertModel(transformers.BertConfig(
        vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=8))  # fmt: skip
    with pytest.raises(RuntimeError, match="size"):
        bert(torch.randint(0, 32, (1, 9)))


# -- "Why add once, but rotate in every layer?" -----------------------------------------------


@pytest.fixture(scope="module")
def every_layer() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "every_layer.py"), run_name="snippet")


def test_rope_hidden_states_hold_no_absolute_position(every_layer) -> None:
    """'no absolute position that a linear read-out could recover': shifting every position
    leaves every RoPE layer's hidden states unchanged, while an added code changes them."""
    run, tokens = every_layer["run"], every_layer["test"]
    for name, changed in (("rope", False), ("added", True)):
        before, after = run(tokens, name)[0], run(tokens, name, offset=100)[0]
        diffs = [(a - b).abs().max().item() for a, b in zip(after, before, strict=True)]
        assert all((d > 0.1) == changed for d in diffs), (name, diffs)


def test_identical_tokens_would_hide_the_order(every_layer) -> None:
    """Why the demo uses distinct tokens: with one token repeated, every value is the same
    vector, so any attention weights give the same output at every position; the order test
    could not fail."""
    run, seq, dim = every_layer["run"], every_layer["seq"], every_layer["dim"]
    same = torch.randn(dim).expand(1, seq, dim)
    first = run(same, "rope")[0][0]
    assert torch.allclose(first, first[:, :1].expand_as(first), atol=1e-5)


def test_the_rows_not_read_from_the_hub_are_the_ones_the_page_names() -> None:
    """'For eight of them the Hub file could not be read': the values of Llama 4 Scout
    Instruct, Gemma 3 27B, Qwen3-VL, gpt-oss-120b and MiniMax-Text-01 come from the authors'
    code, README or model card, those of Jamba, Qwen3-Next and Kimi Linear from transformers'
    config classes; none of the eight is among the rows the first table computes."""
    unread = {m["model"] for m in MODELS if m["source"]["read"].startswith("the hub file")}
    authors = {"Llama 4 Scout", "Gemma 3 27B", "Qwen3-VL-8B", "gpt-oss-120b", "MiniMax-Text-01"}
    defaults = {"Jamba-v0.1", "Qwen3-Next-80B-A3B", "Kimi-Linear-48B-A3B"}
    assert unread == authors | defaults
    from_transformers = {m["model"] for m in MODELS if "transformers 5.23's" in m["source"]["read"]}
    assert from_transformers == defaults
    assert not any("released" in m for m in MODELS if m["model"] in unread)


# -- the hybrids of chapter 17 ------------------------------------------------------------------

HYBRID = [m for m in MODELS if is_hybrid(m)]
# The module that mixes the tokens in each layer, as transformers 5.23 builds it: the row's
# mixer for a recurrent or linear-attention layer, None for softmax attention.
LAYER_MODULES = {
    "JambaMambaMixer": "Mamba", "JambaAttention": None,
    "Qwen3NextGatedDeltaNet": "Gated DeltaNet", "Qwen3NextAttention": None,
    "MiniMaxLightningAttention": "lightning attention", "MiniMaxAttention": None,
    "KimiLinearDeltaAttention": "KDA", "KimiLinearAttention": None,
}  # fmt: skip
# Tiny sizes; the row's keys that place the layers are kept. MiniMax's and Kimi Linear's rows
# have no such key: their layer lists are written here from the model card and the README.
TINY = {
    "jamba": dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=1,
                  intermediate_size=32, num_experts=2, vocab_size=32, mamba_d_state=4,
                  mamba_expand=1, mamba_dt_rank=4),
    "qwen3_next": dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                       intermediate_size=32, moe_intermediate_size=16,
                       shared_expert_intermediate_size=16, num_experts=2, num_experts_per_tok=1,
                       vocab_size=32, linear_key_head_dim=8, linear_value_head_dim=8,
                       linear_num_key_heads=2, linear_num_value_heads=2),
    # the model card: "a softmax attention is positioned after every 7 lightning attention"
    "minimax": dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                    intermediate_size=32, num_local_experts=2, vocab_size=32, block_size=4,
                    layer_types=["full_attention" if (i + 1) % 8 == 0 else "linear_attention"
                                 for i in range(80)]),
    # the README gives the 3:1 ratio only: 8 layers, in the checkpoint's 1-indexed lists
    "kimi_linear": dict(hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                        intermediate_size=32, moe_intermediate_size=16, num_experts=2,
                        num_experts_per_token=1, vocab_size=32, kv_lora_rank=8,
                        qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=8, pad_token_id=None,
                        bos_token_id=None, eos_token_id=None, num_hidden_layers=8,
                        linear_attn_config={"full_attn_layers": [4, 8], "head_dim": 8,
                                            "kda_layers": [1, 2, 3, 5, 6, 7], "num_heads": 2}),
}  # fmt: skip


def built_layers(model: torch.nn.Module) -> list[tuple]:
    """(rotates, attention, mixer) per layer of a built model: the layer's token mixer, and
    whether its forward pass calls the rotation."""
    layers = []
    for layer in model.layers:
        mixers = [mod for mod in layer.children() if type(mod).__name__ in LAYER_MODULES]
        assert len(mixers) == 1
        cls = type(mixers[0])
        rotates = "apply_rotary_pos_emb(" in inspect.getsource(cls.forward)
        mixer = LAYER_MODULES[cls.__name__]
        layers.append((rotates, "global" if mixer is None else "none", mixer))
    return layers


def expected_hybrid_layers(m: dict, count: int) -> list[tuple]:
    unit = [(g["rope"], g["attention"], g.get("mixer")) for g in m["layers"] for _ in range(g["n"])]
    return [unit[i % len(unit)] for i in range(count)]


@pytest.mark.parametrize("m", HYBRID, ids=ids(HYBRID))
def test_hybrid_layers_are_what_transformers_builds(m: dict) -> None:
    """Each row's unit, repeated, is the stack transformers builds: which layers are recurrent
    or linear attention (and which kind), which are softmax attention, which of those rotate.
    The encoding is none exactly when no built layer rotates."""
    keys = dict(m["config"], **TINY[m["model_type"]])
    config = quietly(lambda: transformers.AutoConfig.for_model(m["model_type"], **keys))
    assert getattr(config, "sliding_window", None) is None  # softmax layers see everything
    built = built_layers(quietly(lambda: transformers.AutoModel.from_config(config)))
    if m["num_layers"] is not None:
        assert len(built) == m["num_layers"] == m["config"]["num_hidden_layers"]
    assert built == expected_hybrid_layers(m, len(built))
    assert (m["encoding"] == NONE) == (not any(rotates for rotates, _, _ in built))


CHAPTER_17 = {  # data-file row: chapter 17's name
    "Jamba-v0.1": "Jamba",
    "Qwen3-Next-80B-A3B": "Qwen3-Next",
    "MiniMax-Text-01": "MiniMax-Text-01",
    "Kimi-Linear-48B-A3B": "Kimi Linear",
}


@pytest.fixture(scope="module")
def hybrid_models() -> dict:
    folder = layout.find_chapter("hybrid-models").snippet_folder
    return runpy.run_path(str(folder / "models.py"), run_name="snippet")


def test_hybrid_rows_agree_with_chapter_17(hybrid_models) -> None:
    """The rows hold chapter 17's models: the same unit of layers, the same kind of linear
    layer, the same rotated width (chapter 17 computes it with posenc.RotaryEmbedding) and the
    same base, or none where chapter 17 shows none."""
    assert sorted(CHAPTER_17) == sorted(ids(HYBRID))
    for m in HYBRID:
        name = CHAPTER_17[m["model"]]
        theirs = hybrid_models["MODELS"][name]
        unit = [
            "linear_attention" if g["attention"] == "none" else "full_attention"
            for g in m["layers"]
            for _ in range(g["n"])
        ]
        assert unit == theirs["unit"], name
        assert all(g["mixer"].startswith(theirs["linear"]) for g in m["layers"] if "mixer" in g)
        assert hybrid_models["describe"](name)[1] == f"{m['rotary_dim'] or 0} / {m['head_dim']}"
        full = theirs["rope_parameters"]["full_attention"] or {}
        assert full.get("rope_theta") == m["theta"], name


def test_minimax_card_rotates_half_of_each_head_transformers_all_of_it() -> None:
    """The note: the model card's RoPE covers half of each 128-channel head (the row's 64), but
    transformers 5.23's MiniMaxRotaryEmbedding builds its table over the whole head_dim even
    with partial_rotary_factor 0.5, and apply_rotary_pos_emb turns every channel."""
    m = next(m for m in MODELS if m["model"] == "MiniMax-Text-01")
    assert m["rotary_dim"] * 2 == m["head_dim"] == 128
    config = config_of(m)
    config.rope_parameters["partial_rotary_factor"] = 0.5
    rotary = modeling_minimax.MiniMaxRotaryEmbedding(config)
    assert rotary.inv_freq.numel() * 2 == m["head_dim"]
    q = torch.randn(1, 1, 2, m["head_dim"], generator=torch.Generator().manual_seed(0))
    # at position 10^6 the slowest pair (base 1e7) has turned by about 0.13 rad
    cos, sin = rotary(q, torch.tensor([[0, 1_000_000]]))
    turned, _ = modeling_minimax.apply_rotary_pos_emb(q, q, cos, sin)
    moved = (turned - q)[0, 0, 1].abs()  # every channel of the head moves, not only the first 64
    assert moved[: m["rotary_dim"]].min() > 1e-3 and moved[m["rotary_dim"] :].min() > 1e-3


def test_qwen3_next_default_length_is_not_the_blog_s() -> None:
    """The note: transformers' default max_position_embeddings (32768) is below the 256K of
    ultra-long-context tasks that the Qwen team's blog reports, so the row shows 'not read'."""
    m = next(m for m in MODELS if m["model"] == "Qwen3-Next-80B-A3B")
    assert config_of(m).max_position_embeddings == 32768 < 256 * 1024
    assert "max_position_embeddings" in m["unread"]


@pytest.fixture(scope="module")
def compare() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "compare.py"), run_name="snippet")


def test_used_by_counts_every_model_once_under_its_encoding(compare) -> None:
    """The comparison's 'used by' column: every released config and every data-file row
    without one is counted once; 'no position code' holds exactly the rows in which no layer
    has a position encoding, and every row that rotates somewhere counts as RoPE."""
    users, rows = compare["users"], [m for m in MODELS if "released" not in m]
    assert sum(map(len, users.values())) == len(posenc.released_configs()) + len(rows)
    assert users["nope"] == [m["model"] for m in rows if m["encoding"] == NONE] != []
    assert {m["model"] for m in rows if m["encoding"] in ROTARY} <= set(users["rope"])
