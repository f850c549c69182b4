r"""posenc: position encodings for Transformers, small enough to read, checked against references.

One module per family, pure tensor functions first and thin `torch.nn.Module` wrappers after.
Every module follows the same conventions:

- **Shapes.** Queries, keys and values are ``(batch, heads, seq, head_dim)``; keys and values
  may have fewer heads than the queries (grouped-query attention: ``kv_heads`` divides
  ``heads``). Token embeddings are ``(batch, seq, dim)``.
- **Biases** (`alibi_bias`, `ALiBi`, `T5RelativeBias`, `kerple_bias`, `Kerple`, `FIRE`) are
  ``(heads, q_len, k_len)``: one matrix per head, broadcast over the batch by `attention`
  (``bias=``) or by ``+``. `CoPE`'s term depends on the queries: ``(batch, heads, q_len,
  k_len)``.
- **Relative position** \(r = j - i\): key position minus query position, negative for keys
  in the past (`relative_positions`; T5 and Shaw et al. use it as it is, ALiBi's bias is
  \(m_h\,r\) when causal and \(-m_h|r|\) when not).
- **offset** is the position of the first query, i.e. the number of tokens already in a KV
  cache. Queries sit at ``offset .. offset + q_len - 1`` and keys at ``0 .. k_len - 1``; given
  one of ``k_len`` and ``offset``, the other follows from "the queries are the last ``q_len``
  keys" (``k_len = offset + q_len``). `attention` always takes the queries to be the last
  keys. A ``forward`` that takes explicit ``positions`` refuses an ``offset`` with them.
- **Positions** are integer tensors (int32 or int64), never floats or Python lists:
  ``(seq,)`` shared by the batch, or ``(batch, seq)`` (left padding, packed sequences).
- **Arguments.** Sizes come first, then ``base`` (the constant of a frequency formula), both
  positional; every other argument is keyword-only. Flags (``causal``, ``bidirectional``,
  ``compiled``, ``keep_longest``) must be ``True`` or ``False``.
- **Precision.** Tables (angles, cosines, sines, biases) are computed in float32 and cast to
  the requested floating dtype at the end; integer dtypes are refused.
- **Errors.** A wrong type raises `TypeError`, a wrong value `ValueError`, each saying
  ``"<argument> must be <what is allowed>, got <value>"``. Checks never read tensor values
  on an accelerator (that would synchronise with the device): there, a negative position
  is not caught; on CPU it is.
- **RoPE scaling** dicts are transformers' ``rope_parameters``, passed unchanged (see
  `RopeScaling.from_dict`), and give the same frequencies, bit for bit.
"""

from .alibi import ALiBi, alibi_bias, alibi_slope_values, alibi_slopes
from .attention import attention
from .cope import CoPE, cope_logits, cope_positions
from .describe import LayerPositions, ModelPositions, describe, released_config, released_configs
from .fire import FIRE, fire_inputs
from .kerple import Kerple, kerple_bias
from .layer_types import RopeSetting, layer_rope_settings
from .learned import LearnedPositionalEmbedding
from .positions import (
    document_causal_mask,
    document_ids,
    packed_positions,
    positions_from_mask,
    rerotate,
    sink_window_keep,
)
from .relative import ShawRelativeEmbedding, T5RelativeBias, relative_positions, t5_relative_bucket
from .rope import (
    RotaryEmbedding,
    apply_rotary,
    interleaved_to_half_permutation,
    rotary_cos_sin,
    rotate_half,
    rotate_interleaved,
    rotate_reference,
)
from .rope_axes import (
    VisionGrid,
    axial_cos_sin,
    axial_inv_freq,
    mrope_axes,
    mrope_cos_sin,
    mrope_position_ids,
    multi_axis_cos_sin,
    patch_positions,
)
from .rope_scaling import (
    LENGTH_DEPENDENT,
    ROPE_SCALING,
    RopeScaling,
    RopeVariant,
    default_inv_freq,
    rope_inv_freq,
    yarn_mscale,
)
from .sinusoidal import SinusoidalPositionalEncoding, sinusoidal
from .xpos import XPos, xpos_center, xpos_cos_sin, xpos_zeta

__all__ = [
    # sinusoidal
    "sinusoidal",
    "SinusoidalPositionalEncoding",
    # learned
    "LearnedPositionalEmbedding",
    # relative
    "relative_positions",
    "t5_relative_bucket",
    "T5RelativeBias",
    "ShawRelativeEmbedding",
    # rope
    "rotate_half",
    "rotate_interleaved",
    "interleaved_to_half_permutation",
    "rotary_cos_sin",
    "rotate_reference",
    "apply_rotary",
    "RotaryEmbedding",
    # rope_axes: RoPE over several position axes (image patches, M-RoPE)
    "patch_positions",
    "axial_inv_freq",
    "axial_cos_sin",
    "mrope_axes",
    "multi_axis_cos_sin",
    "mrope_cos_sin",
    "VisionGrid",
    "mrope_position_ids",
    # rope_scaling
    "default_inv_freq",
    "rope_inv_freq",
    "RopeScaling",
    "RopeVariant",
    "ROPE_SCALING",
    "LENGTH_DEPENDENT",
    "yarn_mscale",
    # alibi
    "alibi_slope_values",
    "alibi_slopes",
    "alibi_bias",
    "ALiBi",
    # kerple: kernelized relative biases
    "kerple_bias",
    "Kerple",
    # fire: a learned function of normalised distances
    "fire_inputs",
    "FIRE",
    # cope: positions counted by gates
    "cope_positions",
    "cope_logits",
    "CoPE",
    # xpos: RoPE with a decay per pair
    "xpos_zeta",
    "xpos_cos_sin",
    "xpos_center",
    "XPos",
    # attention
    "attention",
    # positions at inference time
    "positions_from_mask",
    "packed_positions",
    "document_ids",
    "document_causal_mask",
    "sink_window_keep",
    "rerotate",
    # layer_types: RoPE settings per layer (local/global, RoPE/NoPE)
    "layer_rope_settings",
    "RopeSetting",
    # describe: every layer's position encoding, from a released config.json
    "describe",
    "ModelPositions",
    "LayerPositions",
    "released_configs",
    "released_config",
]
