"""Every bad input raises a ValueError or TypeError whose message names the argument first, in the
one style of the library: "<argument> must be <what is allowed>, got <value>"."""
# ruff: noqa: E501  (one case per line reads best as a table)

import re

import pytest
import torch

import posenc

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 64,
}
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 8}
LONGROPE = {
    "rope_type": "longrope",
    "short_factor": [1.0] * 4,
    "long_factor": [1.0] * 4,
    "original_max_position_embeddings": 8,
    "factor": 2.0,
}
rope = posenc.RotaryEmbedding(8)
q4 = torch.randn(1, 2, 3, 8)
x3 = torch.randn(1, 3, 8)
cos5, sin5 = rope.cos_sin(5)
cos7, sin7 = rope.cos_sin(7)
x5 = torch.randn(1, 2, 5, 8)
learned = posenc.LearnedPositionalEmbedding(4, 8)
sine = posenc.SinusoidalPositionalEncoding(8)

# (what, call, exception, the argument the message starts with, as a regex)
CASES = [
    # RotaryEmbedding
    ("odd head_dim", lambda: posenc.RotaryEmbedding(7), ValueError, "head_dim"),
    ("head_dim not an int", lambda: posenc.RotaryEmbedding(8.0), TypeError, "head_dim"),
    ("rotary_dim > head_dim", lambda: posenc.RotaryEmbedding(8, rotary_dim=16), ValueError, "rotary_dim"),
    ("odd rotary_dim", lambda: posenc.RotaryEmbedding(8, rotary_dim=3), ValueError, "rotary_dim"),
    ("rotary_dim contradicts partial_rotary_factor", lambda: posenc.RotaryEmbedding(16, rotary_dim=4, scaling={"partial_rotary_factor": 0.5}), ValueError, "rotary_dim"),
    ("unknown layout", lambda: posenc.RotaryEmbedding(8, layout="gptj"), ValueError, "layout"),
    ("unknown kernel", lambda: posenc.RotaryEmbedding(8, kernel="cuda"), ValueError, "kernel"),
    ("unknown apply kernel", lambda: posenc.apply_rotary(torch.ones(1, 4), torch.ones(1, 4), torch.ones(1, 4), kernel="compiled"), ValueError, "kernel"),
    ("keep_longest not a bool", lambda: posenc.RotaryEmbedding(8, scaling=DYNAMIC, keep_longest=1), TypeError, "keep_longest"),
    ("keep_longest without dynamic", lambda: posenc.RotaryEmbedding(8, keep_longest=True), ValueError, "keep_longest"),
    ("base inf: frequencies [1, 0, 0, ...]", lambda: posenc.RotaryEmbedding(8, base=float("inf")), ValueError, "base"),
    ("base nan", lambda: posenc.rope_inv_freq(8, float("nan")), ValueError, "base"),
    ("base 1: all frequencies 1", lambda: posenc.RotaryEmbedding(8, base=1.0), ValueError, "base"),
    ("base a string", lambda: posenc.RotaryEmbedding(8, base="1e4"), TypeError, "base"),
    ("base contradicts rope_theta", lambda: posenc.RotaryEmbedding(8, base=1e4, scaling={"rope_theta": 5e5}), ValueError, "base"),
    # RotaryEmbedding.forward and cos_sin
    ("negative positions", lambda: rope(q4, q4, torch.tensor([0, -1, 2])), ValueError, "positions"),
    ("float positions", lambda: rope(q4, q4, torch.tensor([0.0, 1.0, 2.0])), TypeError, "positions"),
    ("positions as a list", lambda: rope(q4, q4, [0, 1, 2]), TypeError, "positions"),
    ("tables for 7 positions, 5 queries", lambda: rope(q4, q4, torch.arange(4)), ValueError, re.escape("positions.shape[-1]")),
    ("positions batch mismatch", lambda: rope(q4, q4, torch.arange(3).expand(2, 3)), ValueError, re.escape("positions.shape[0]")),
    ("offset with positions", lambda: rope(q4, q4, torch.arange(3), offset=2), ValueError, "offset"),
    ("negative offset", lambda: rope(q4, q4, offset=-1), ValueError, "offset"),
    ("float offset", lambda: rope(q4, q4, offset=1.5), TypeError, "offset"),
    ("mismatched q/k seq", lambda: rope(q4, torch.randn(1, 2, 4, 8)), ValueError, "k"),
    ("k heads do not divide q heads", lambda: rope(torch.randn(1, 3, 3, 8), q4), ValueError, "k's heads"),
    ("wrong rank", lambda: rope(torch.randn(2, 3, 8), q4), ValueError, "q"),
    ("q last dim != head_dim", lambda: rope(torch.randn(1, 2, 3, 6), q4), ValueError, re.escape("q.shape[-1]")),
    ("non-floating q", lambda: rope(q4.long(), q4), TypeError, "q"),
    ("seq_len a float", lambda: posenc.RotaryEmbedding(8, scaling=DYNAMIC)(q4, q4, seq_len=3.0), TypeError, "seq_len"),
    ("seq_len 0", lambda: posenc.RotaryEmbedding(8, scaling=DYNAMIC)(q4, q4, seq_len=0), ValueError, "seq_len"),
    ("seq_len a 1-D tensor", lambda: posenc.rope_inv_freq(8, scaling=DYNAMIC, seq_len=torch.tensor([9])), ValueError, "seq_len"),
    ("integer dtype tables", lambda: rope.cos_sin(4, dtype=torch.int64), TypeError, "dtype"),
    ("device not a device", lambda: rope.cos_sin(4, device=0.5), TypeError, "device"),
    ("positions not an int or tensor", lambda: rope.cos_sin(4.0), TypeError, "positions"),
    # apply_rotary, rotary_cos_sin, the permutation
    ("unknown layout (pure)", lambda: posenc.apply_rotary(x5, cos5, sin5, layout="x"), ValueError, "layout"),
    ("tables for 7 positions applied to 5", lambda: posenc.apply_rotary(x5, cos7, sin7), ValueError, "cos"),
    ("cos and sin shapes differ", lambda: posenc.apply_rotary(x5, cos5, sin7), ValueError, "sin"),
    ("tables wider than x", lambda: posenc.apply_rotary(x5[..., :4], cos5, sin5), ValueError, re.escape("cos.shape[-1]")),
    ("integer tables", lambda: posenc.apply_rotary(x5, cos5.long(), sin5.long()), TypeError, "cos"),
    ("rotary_cos_sin float positions", lambda: posenc.rotary_cos_sin(torch.tensor([0.5]), posenc.default_inv_freq(8)), TypeError, "positions"),
    ("rotary_cos_sin integer dtype", lambda: posenc.rotary_cos_sin(torch.arange(3), posenc.default_inv_freq(8), dtype=torch.int32), TypeError, "dtype"),
    ("rotary_cos_sin attention_factor nan", lambda: posenc.rotary_cos_sin(torch.arange(3), posenc.default_inv_freq(8), attention_factor=float("nan")), ValueError, "attention_factor"),
    ("inv_freq as a list", lambda: posenc.rotary_cos_sin(torch.arange(3), [1.0, 0.1]), TypeError, "inv_freq"),
    ("permutation of odd dim", lambda: posenc.interleaved_to_half_permutation(5), ValueError, "head_dim"),
    ("default_inv_freq of odd dim", lambda: posenc.default_inv_freq(5), ValueError, "dim"),
    # rope_inv_freq and scaling dicts
    ("unknown rope_type", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "ntk"}), ValueError, re.escape("scaling['rope_type']")),
    ("unknown scaling key", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factr": 2}), ValueError, "scaling"),
    ("key of another rope_type", lambda: posenc.rope_inv_freq(8, scaling={**YARN, "short_factor": [1.0]}), ValueError, "scaling"),
    ("factor 0", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": 0}), ValueError, re.escape("scaling['factor']")),
    ("factor inf", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": float("inf")}), ValueError, re.escape("scaling['factor']")),
    ("factor a string", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": "2"}), TypeError, re.escape("scaling['factor']")),
    ("missing factor", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear"}), ValueError, re.escape("scaling['factor']")),
    ("YaRN without its trained length", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "yarn", "factor": 4.0}), ValueError, re.escape("scaling['original_max_position_embeddings']")),
    ("YaRN with base 1 (was ZeroDivisionError)", lambda: posenc.rope_inv_freq(8, 1.0, scaling=YARN), ValueError, "base"),
    ("YaRN beta_fast < beta_slow", lambda: posenc.rope_inv_freq(8, scaling={**YARN, "beta_fast": 1, "beta_slow": 2}), ValueError, re.escape("scaling['beta_fast']")),
    ("YaRN truncate not a bool", lambda: posenc.rope_inv_freq(8, scaling={**YARN, "truncate": "no"}), TypeError, re.escape("scaling['truncate']")),
    ("YaRN with an odd width", lambda: posenc.rope_inv_freq(10, scaling={**YARN, "partial_rotary_factor": 0.5}), ValueError, re.escape("scaling['partial_rotary_factor']")),
    ("yarn_mscale factor 0", lambda: posenc.yarn_mscale(0), ValueError, "factor"),
    ("yarn_mscale mscale negative", lambda: posenc.yarn_mscale(40, -0.1), ValueError, "mscale"),
    ("yarn_mscale mscale a string", lambda: posenc.yarn_mscale(40, "1"), TypeError, "mscale"),
    ("llama3 missing keys", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "llama3", "factor": 8.0}), ValueError, re.escape("scaling['low_freq_factor']")),
    ("llama3 low_freq_factor 0 (was ZeroDivisionError)", lambda: posenc.rope_inv_freq(8, scaling={**LLAMA3, "low_freq_factor": 0}), ValueError, re.escape("scaling['low_freq_factor']")),
    ("llama3 high <= low", lambda: posenc.rope_inv_freq(8, scaling={**LLAMA3, "high_freq_factor": 1.0}), ValueError, re.escape("scaling['high_freq_factor']")),
    ("longrope factor list length", lambda: posenc.rope_inv_freq(8, scaling={**LONGROPE, "short_factor": [1.0]}), ValueError, re.escape("scaling['short_factor']")),
    ("longrope factor list of strings", lambda: posenc.rope_inv_freq(8, scaling={**LONGROPE, "long_factor": ["1"] * 4}), TypeError, re.escape("scaling['long_factor'][0]")),
    ("dynamic without a trained length", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "dynamic", "factor": 2.0}), ValueError, "max_position_embeddings"),
    ("dynamic lengths that contradict", lambda: posenc.rope_inv_freq(8, scaling=DYNAMIC, max_position_embeddings=16), ValueError, "max_position_embeddings"),
    ("trained length a float", lambda: posenc.rope_inv_freq(8, scaling={**YARN, "original_max_position_embeddings": 64.0}), TypeError, re.escape("scaling['original_max_position_embeddings']")),
    ("partial_rotary_factor > 1", lambda: posenc.rope_inv_freq(8, scaling={"partial_rotary_factor": 1.5}), ValueError, re.escape("scaling['partial_rotary_factor']")),
    ("type contradicts rope_type", lambda: posenc.rope_inv_freq(8, scaling={"rope_type": "linear", "type": "yarn", "factor": 2.0}), ValueError, re.escape("scaling['type']")),
    ("scaling not a dict", lambda: posenc.rope_inv_freq(8, scaling="linear"), TypeError, "scaling"),
    ("per-layer rope_parameters", lambda: posenc.rope_inv_freq(8, scaling={"full_attention": {"rope_type": "default"}}), ValueError, "scaling"),
    ("ignore_keys a string", lambda: posenc.rope_inv_freq(8, scaling=YARN, ignore_keys="mrope_section"), TypeError, "ignore_keys"),
    # ALiBi
    ("num_heads < 1", lambda: posenc.alibi_slopes(0), ValueError, "num_heads"),
    ("num_heads not an int", lambda: posenc.alibi_slopes(4.0), TypeError, "num_heads"),
    ("integer slopes dtype", lambda: posenc.alibi_slopes(4, dtype=torch.int64), TypeError, "dtype"),
    ("slopes as a list", lambda: posenc.alibi_bias(2, 3, slopes=[0.5, 0.25]), TypeError, "slopes"),
    ("slopes of the wrong shape", lambda: posenc.alibi_bias(2, 3, slopes=torch.ones(3)), ValueError, "slopes"),
    ("q_len > k_len without an offset", lambda: posenc.alibi_bias(2, 5, 3), ValueError, "q_len"),
    ("causal not a bool", lambda: posenc.alibi_bias(2, 3, causal="yes"), TypeError, "causal"),
    ("ALiBi causal not a bool", lambda: posenc.ALiBi(2, causal=1), TypeError, "causal"),
    # attention
    ("q_len > k_len causal", lambda: posenc.attention(torch.randn(1, 2, 5, 8), q4, q4), ValueError, "q_len"),
    ("no keys", lambda: posenc.attention(q4, q4[:, :, :0], q4[:, :, :0], causal=False), ValueError, "k_len"),
    ("slopes of wrong shape", lambda: posenc.attention(q4, q4, q4, alibi_slopes=torch.ones(3)), ValueError, "alibi_slopes"),
    ("slopes as a list", lambda: posenc.attention(q4, q4, q4, alibi_slopes=[0.5, 0.25]), TypeError, "alibi_slopes"),
    ("bias does not broadcast", lambda: posenc.attention(q4, q4, q4, bias=torch.zeros(4, 4)), ValueError, "bias"),
    ("unknown backend", lambda: posenc.attention(q4, q4, q4, backend="xformers"), ValueError, "backend"),
    ("flex with a bias", lambda: posenc.attention(q4, q4, q4, bias=torch.zeros(3, 3), backend="flex"), ValueError, "backend"),
    ("non-floating v", lambda: posenc.attention(q4, q4, q4.int()), TypeError, "v"),
    ("scale nan (was zeros)", lambda: posenc.attention(q4, q4, q4, scale=float("nan")), ValueError, "scale"),
    ("scale a string", lambda: posenc.attention(q4, q4, q4, scale="0.1"), TypeError, "scale"),
    ("v of another dtype", lambda: posenc.attention(q4, q4, q4.double()), ValueError, "v"),
    ("attention causal not a bool", lambda: posenc.attention(q4, q4, q4, causal=None), TypeError, "causal"),
    # learned
    ("sequence longer than learned table", lambda: learned(torch.randn(1, 5, 8)), ValueError, re.escape("offset + x.shape[1]")),
    ("learned dim mismatch", lambda: learned(torch.randn(1, 2, 6)), ValueError, re.escape("x.shape[-1]")),
    ("learned position past the table", lambda: learned(x3, torch.tensor([0, 1, 4])), ValueError, "positions"),
    ("learned offset with positions", lambda: learned(x3, torch.arange(3), offset=1), ValueError, "offset"),
    # sinusoidal
    ("odd sinusoidal dim", lambda: posenc.sinusoidal(4, 5), ValueError, "dim"),
    ("float sinusoidal positions", lambda: posenc.sinusoidal(torch.tensor([0.5]), 4), TypeError, "positions"),
    ("negative int positions", lambda: posenc.sinusoidal(-3, 4), ValueError, "positions"),
    ("positions as a list", lambda: posenc.sinusoidal([0, 1], 4), TypeError, "positions"),
    ("integer sinusoidal dtype", lambda: posenc.sinusoidal(4, 4, dtype=torch.int32), TypeError, "dtype"),
    ("sinusoidal base inf", lambda: posenc.sinusoidal(4, 4, float("inf")), ValueError, "base"),
    ("sinusoidal x of wrong rank", lambda: sine(torch.randn(3, 8)), ValueError, "x"),
    # relative
    ("non-tensor relative_position", lambda: posenc.t5_relative_bucket([1, 2]), TypeError, "relative_position"),
    ("odd bidirectional buckets", lambda: posenc.t5_relative_bucket(torch.arange(3), num_buckets=7), ValueError, "num_buckets"),
    ("bidirectional not a bool", lambda: posenc.t5_relative_bucket(torch.arange(3), bidirectional=1), TypeError, "bidirectional"),
    ("max_distance too small", lambda: posenc.T5RelativeBias(2, num_buckets=32, max_distance=4), ValueError, "max_distance"),
    ("T5 bias q_len > k_len", lambda: posenc.T5RelativeBias(2)(5, 3), ValueError, "q_len"),
    ("relative_positions negative offset", lambda: posenc.relative_positions(2, offset=-1), ValueError, "offset"),
    ("shaw max_relative_position < 1", lambda: posenc.ShawRelativeEmbedding(0, 4), ValueError, "max_relative_position"),
    # xPos
    ("xpos odd head_dim", lambda: posenc.XPos(7), ValueError, "head_dim"),
    ("xpos gamma 0: a zero decay base", lambda: posenc.xpos_zeta(8, gamma=0), ValueError, "gamma"),
    ("xpos scale_base negative", lambda: posenc.XPos(8, scale_base=-512), ValueError, "scale_base"),
    ("xpos unknown layout", lambda: posenc.XPos(8, layout="gptj"), ValueError, "layout"),
    ("xpos base 1", lambda: posenc.XPos(8, 1.0), ValueError, "base"),
    ("xpos more queries than keys", lambda: posenc.XPos(8)(torch.randn(1, 2, 5, 8), q4), ValueError, "q_len"),
    ("xpos q last dim != head_dim", lambda: posenc.XPos(6)(q4, q4), ValueError, re.escape("q.shape[-1]")),
    ("xpos k batch differs", lambda: posenc.XPos(8)(q4, torch.randn(2, 2, 3, 8)), ValueError, "k"),
    ("xpos k heads do not divide", lambda: posenc.XPos(8)(torch.randn(1, 3, 3, 8), q4), ValueError, "k's heads"),
    ("xpos integer q", lambda: posenc.XPos(8)(q4.long(), q4), TypeError, "q"),
    ("xpos negative center", lambda: posenc.xpos_cos_sin(torch.arange(3), posenc.default_inv_freq(8), center=-1), ValueError, "center"),
    ("xpos downscale not a bool", lambda: posenc.xpos_cos_sin(torch.arange(3), posenc.default_inv_freq(8), downscale=1), TypeError, "downscale"),
    ("xpos float positions", lambda: posenc.xpos_cos_sin(torch.tensor([0.5]), posenc.default_inv_freq(8)), TypeError, "positions"),
    ("xpos_center of a float", lambda: posenc.xpos_center(4.0), TypeError, "k_len"),
    # KERPLE
    ("kerple unknown kernel", lambda: posenc.Kerple(2, kernel="exp"), ValueError, "kernel"),
    ("kerple num_heads 0", lambda: posenc.Kerple(0), ValueError, "num_heads"),
    ("kerple causal not a bool", lambda: posenc.Kerple(2, causal=1), TypeError, "causal"),
    ("kerple r1 as a list", lambda: posenc.kerple_bias(3, r1=[1.0, 1.0], r2=torch.ones(2)), TypeError, "r1"),
    ("kerple r2 of another shape", lambda: posenc.kerple_bias(3, r1=torch.ones(2), r2=torch.ones(3)), ValueError, "r2"),
    ("kerple r1 of rank 3 (the released shape)", lambda: posenc.kerple_bias(3, r1=torch.ones(2, 1, 1), r2=torch.ones(2, 1, 1)), ValueError, "r1"),
    ("kerple r2 = 0", lambda: posenc.kerple_bias(3, r1=torch.ones(2), r2=torch.zeros(2)), ValueError, "r2"),
    ("kerple power exponent above 2", lambda: posenc.kerple_bias(3, r1=torch.ones(2), r2=torch.full((2,), 2.5), kernel="power"), ValueError, "r2"),
    ("kerple q_len > k_len", lambda: posenc.Kerple(2)(5, 3), ValueError, "q_len"),
    # FIRE
    ("fire num_heads 0", lambda: posenc.FIRE(0), ValueError, "num_heads"),
    ("fire init_c 0: psi would be 0", lambda: posenc.FIRE(2, init_c=0), ValueError, "init_c"),
    ("fire no hidden layer", lambda: posenc.FIRE(2, hidden_layers=0), ValueError, "hidden_layers"),
    ("fire init_threshold inf", lambda: posenc.FIRE(2, init_threshold=float("inf")), ValueError, "init_threshold"),
    ("fire c negative", lambda: posenc.fire_inputs(3, c=-1.0), ValueError, "c"),
    ("fire c a string", lambda: posenc.fire_inputs(3, c="0.1"), TypeError, "c"),
    ("fire c a 1-D tensor", lambda: posenc.fire_inputs(3, c=torch.ones(2)), ValueError, "c"),
    ("fire integer threshold tensor", lambda: posenc.fire_inputs(3, threshold=torch.tensor(4)), TypeError, "threshold"),
    ("fire threshold on another device", lambda: posenc.fire_inputs(3, c=torch.tensor(0.1), threshold=torch.tensor(4.0, device="meta")), ValueError, "threshold"),
    ("fire eps negative", lambda: posenc.fire_inputs(3, eps=-1e-6), ValueError, "eps"),
    ("fire q_len > k_len", lambda: posenc.FIRE(2)(5, 3), ValueError, "q_len"),
    # CoPE
    ("cope head_dim 0", lambda: posenc.CoPE(0, 4), ValueError, "head_dim"),
    ("cope num_positions 0", lambda: posenc.CoPE(8, 0), ValueError, "num_positions"),
    ("cope integer scores", lambda: posenc.cope_positions(torch.arange(3)), TypeError, "scores"),
    ("cope 1-D scores", lambda: posenc.cope_positions(torch.randn(3)), ValueError, "scores"),
    ("cope more queries than keys", lambda: posenc.cope_positions(torch.randn(5, 3)), ValueError, "q_len"),
    ("cope causal not a bool", lambda: posenc.cope_positions(torch.randn(3, 3), causal=1), TypeError, "causal"),
    ("cope positions of other queries", lambda: posenc.cope_logits(torch.randn(2, 4, 8), torch.zeros(2, 3, 4), torch.zeros(8, 5)), ValueError, "positions"),
    ("cope table of another head_dim", lambda: posenc.cope_logits(torch.randn(4, 8), torch.zeros(4, 4), torch.zeros(6, 5)), ValueError, re.escape("pos_emb.shape[0]")),
    ("cope 3-D q in the module", lambda: posenc.CoPE(8, 4)(torch.randn(2, 3, 8), torch.randn(1, 2, 3, 3)), ValueError, "q"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "argument"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_raises_a_clear_error_naming_the_argument(call, error, argument):
    with pytest.raises(Exception) as caught:  # noqa: PT011 (the type is asserted below)
        call()
    assert type(caught.value) is error, f"{type(caught.value).__name__}: {caught.value}"
    message = str(caught.value)
    assert re.match(rf"{argument} must\b", message), message
    assert "got" in message, message
