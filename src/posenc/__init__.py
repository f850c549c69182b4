r"""posenc: position encodings for Transformers, small enough to read, checked against references.

One module per family, pure tensor functions first and thin `torch.nn.Module` wrappers after.
Shape convention: ``(batch, heads, seq, head_dim)``.
"""

from .alibi import ALiBi, alibi_bias, alibi_distances, alibi_slope_values, alibi_slopes
from .attention import attention
from .learned import LearnedPositionalEmbedding
from .relative import ShawRelativeEmbedding, T5RelativeBias, relative_positions, t5_relative_bucket
from .rope import (
    RotaryEmbedding,
    apply_rotary,
    interleaved_to_half_permutation,
    rotary_cos_sin,
    rotate_half,
    rotate_interleaved,
)
from .rope_scaling import LENGTH_DEPENDENT, ROPE_SCALING, default_inv_freq, rope_inv_freq
from .sinusoidal import SinusoidalPositionalEncoding, sinusoidal

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
    "apply_rotary",
    "RotaryEmbedding",
    # rope_scaling
    "default_inv_freq",
    "rope_inv_freq",
    "ROPE_SCALING",
    "LENGTH_DEPENDENT",
    # alibi
    "alibi_slope_values",
    "alibi_slopes",
    "alibi_distances",
    "alibi_bias",
    "ALiBi",
    # attention
    "attention",
]
