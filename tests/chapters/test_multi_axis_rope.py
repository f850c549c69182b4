"""Claims of chapter 13 "RoPE beyond one dimension" beyond its printed output.

The references are transformers' own Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Pixtral code (5.23, the
version requirements.lock pins), built from their config classes with random weights: never
posenc checked against itself. Frequency-pair axes are read back from transformers' tables, not
taken from posenc.
"""

from __future__ import annotations

import runpy

import pytest
import torch
from transformers import (
    PixtralVisionConfig,
    Qwen2_5_VLConfig,
    Qwen2VLConfig,
    Qwen3VLConfig,
)
from transformers.models.pixtral import modeling_pixtral
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl
from transformers.models.qwen2_vl import modeling_qwen2_vl
from transformers.models.qwen3_vl import modeling_qwen3_vl

import posenc
from posenc import rope_axes
from tests.lib.test_rope_axes import tiny_model, token_sequence
from tools import layout

CHAPTER = layout.find_chapter("multi-axis-rope")


@pytest.fixture(scope="module")
def mrope_snippet() -> dict:
    return runpy.run_path(str(CHAPTER.snippet_folder / "mrope.py"), run_name="snippet")


def axes_read_from(rotary, pairs: int) -> list[int]:
    """Which id (0 = t, 1 = h, 2 = w) each frequency pair of a transformers rotary module reads:
    give one token the ids (1, 2, 3) and compare each pair's angle with theta_j * id."""
    cos, _ = rotary(torch.zeros(1), torch.tensor([[[1]], [[2]], [[3]]]))
    inv_freq = rotary.inv_freq
    axes = []
    for j in range(pairs):
        candidates = [abs(cos[0, 0, j] - torch.cos(p * inv_freq[j])).item() for p in (1, 2, 3)]
        axes.append(min(range(3), key=candidates.__getitem__))
    return axes


# -- section "M-RoPE: three ids per token" -------------------------------------------------------


def test_qwen2_vl_sections_are_16_24_24_pairs_of_a_128_dim_head() -> None:
    """Qwen2-VL's default text head is 128 wide and its mrope_section [16, 24, 24] counts the 64
    pairs: t reads pairs 0-15, h 16-39, w 40-63 (read back from transformers' tables)."""
    text = Qwen2VLConfig().text_config
    assert text.hidden_size // text.num_attention_heads == 128
    rotary = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(text)
    assert rotary.mrope_section == [16, 24, 24] and sum(rotary.mrope_section) == 64
    # a small base keeps the slow pairs' angles apart in float32
    text.rope_parameters["rope_theta"] = 100.0
    rotary = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(text)
    assert axes_read_from(rotary, 64) == [0] * 16 + [1] * 24 + [2] * 24
    assert list(rope_axes.mrope_axes([16, 24, 24])) == [0] * 16 + [1] * 24 + [2] * 24


def test_qwen3_vl_interleaves_t_h_w_and_ends_with_four_t_pairs() -> None:
    text = Qwen3VLConfig().text_config
    assert text.head_dim == 128
    text.rope_parameters["rope_theta"] = 100.0
    rotary = modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding(text)
    assert rotary.mrope_section == [24, 20, 20]
    assert axes_read_from(rotary, 64) == [0, 1, 2] * 20 + [0] * 4


def test_list_repetition_of_the_sections_is_the_right_split() -> None:
    """transformers up to 5.2 wrote mrope_section * 2: a Python list repeated, [16, 24, 24, 16,
    24, 24], over the full-width table. That gives the tables of the section's pairs."""
    ids = torch.tensor([[[3]], [[4]], [[6]]])
    inv_freq = posenc.default_inv_freq(128, 1e6)
    angles = ids[..., None].float() * inv_freq  # (3, 1, 1, 64)
    full = torch.cat((angles, angles), dim=-1).cos()  # each id's own full-width table
    split = [16, 24, 24] * 2
    old = torch.cat([m[i % 3] for i, m in enumerate(full.split(split, dim=-1))], dim=-1)
    ours, _ = rope_axes.mrope_cos_sin(ids, inv_freq, [16, 24, 24])
    assert torch.equal(old, ours)


# -- section "Which frequencies go to rows and columns" -------------------------------------------


def test_qwen_vision_encoders_use_the_halves_and_pixtral_the_parity_split() -> None:
    """The Qwen2-VL, Qwen2.5-VL and Qwen3-VL vision encoders: base^(-4k/d) for each axis;
    Pixtral: the 1-D ladder of the whole head, even i to rows and odd i to columns."""
    for rotary in (
        modeling_qwen2_vl.Qwen2VLVisionRotaryEmbedding(Qwen2VLConfig().vision_config),
        modeling_qwen2_5_vl.Qwen2_5_VLVisionRotaryEmbedding(Qwen2_5_VLConfig().vision_config),
        modeling_qwen3_vl.Qwen3VLVisionRotaryEmbedding(Qwen3VLConfig().vision_config),
    ):
        quarter = rotary.inv_freq.shape[0]  # head_dim / 4 frequencies, used for both axes
        expected = 10000.0 ** (-4 * torch.arange(quarter, dtype=torch.float64) / (4 * quarter))
        torch.testing.assert_close(rotary.inv_freq.double(), expected, rtol=1e-6, atol=0)
    pixtral = modeling_pixtral.PixtralVisionRotaryEmbedding(PixtralVisionConfig())
    ladder = 10000.0 ** (-2 * torch.arange(32, dtype=torch.float64) / 64)  # head_dim 64
    expected = torch.cat((ladder[0::2], ladder[1::2]))
    torch.testing.assert_close(pixtral.inv_freq.double(), expected, rtol=1e-6, atol=0)


def test_qwen3_vl_vision_encoder_also_adds_interpolated_absolute_embeddings() -> None:
    config = Qwen3VLConfig().vision_config
    config.depth = 1
    encoder = modeling_qwen3_vl.Qwen3VLVisionModel(config)
    assert isinstance(encoder.pos_embed, torch.nn.Embedding)
    assert encoder.pos_embed.num_embeddings == config.num_position_embeddings
    assert encoder.interpolation_mode == "bilinear"  # the table resized to the image's grid


# -- section "Position ids of an image in text" ---------------------------------------------------


def test_get_rope_index_gives_the_example_ids_and_rope_deltas(mrope_snippet) -> None:
    """transformers' get_rope_index on 3 text tokens, a 6 x 8-patch image, 4 text tokens: the
    page's ids, and rope_deltas = 11 - 19."""
    model = tiny_model("qwen2_vl").model
    types = torch.tensor([[0] * 3 + [1] * 12 + [0] * 4])
    input_ids = torch.where(types == 1, 60, 5)
    expected, delta = model.get_rope_index(
        input_ids, types, image_grid_thw=torch.tensor([[1, 6, 8]])
    )
    assert torch.equal(expected[:, 0], mrope_snippet["ids"])
    assert int(delta) == 11 - 19


def test_generated_tokens_continue_at_the_largest_id_plus_one() -> None:
    """Decoding with transformers' own generate after the 19 tokens of the example (here with
    <|vision_start|> and <|vision_end|> among its text tokens): the tokens fed back get 11, 12."""
    torch.manual_seed(0)
    model = tiny_model("qwen2_vl")
    input_ids, types = token_sequence([2, ("image", (1, 6, 8)), 3])  # 2 + 1 + 12 + 1 + 3 = 19
    pixels = torch.randn(48, 3 * 2 * 2 * 2)
    seen = []

    def record(module, args, kwargs):
        # generate prepends a row of plain text positions (for packed-sequence masks): keep t, h, w
        seen.append(kwargs["position_ids"][-3:].clone())

    handle = model.model.language_model.register_forward_pre_hook(record, with_kwargs=True)
    try:
        model.generate(
            input_ids=input_ids, mm_token_type_ids=types, pixel_values=pixels,
            image_grid_thw=torch.tensor([[1, 6, 8]]), max_new_tokens=3, do_sample=False,
        )  # fmt: skip
    finally:
        handle.remove()
    prompt_ids = rope_axes.mrope_position_ids([3, (1, 6, 8), 4])  # the same 19 tokens for posenc
    assert torch.equal(seen[0][:, 0], prompt_ids)
    assert prompt_ids.max() == 10
    assert [step[:, 0, 0].tolist() for step in seen[1:]] == [[11] * 3, [12] * 3]


# -- section "Video: frames and seconds" ---------------------------------------------------------


def test_qwen2_5_vl_temporal_ids_follow_seconds_in_transformers(mrope_snippet) -> None:
    """transformers' Qwen2.5-VL, tokens_per_second 2: second 2 of the video has temporal id 4
    at 1, 2 and 4 frames per second, as the page prints."""
    model = tiny_model("qwen2_5_vl").model
    assert model.config.vision_config.tokens_per_second == 2  # the tiny config's, as in the page
    for fps in (1, 2, 4):
        patches = 4 * fps // 2
        input_ids, types = token_sequence([1, ("video", (patches, 4, 4)), 1])
        ids, _ = model.get_rope_index(
            input_ids, types, video_grid_thw=torch.tensor([[patches, 4, 4]]),
            second_per_grid_ts=torch.tensor([2 / fps]),
        )  # fmt: skip
        start = 2  # after the text token and <|vision_start|>
        temporal = ids[0, 0, start : start + 4 * patches : 4] - start
        assert temporal.tolist() == mrope_snippet["starts"][fps]


def test_transformers_5_23_starts_text_after_a_long_video_below_its_last_time_id() -> None:
    """The page's first video: 4 temporal patches of 2 x 2 tokens after 2 text tokens. The
    paper's rule (and posenc) put the next text at 5 + 1 = 6; transformers 5.23 at 2 + 2 = 4."""
    model = tiny_model("qwen2_vl").model
    types = torch.tensor([[0] * 2 + [2] * 16 + [0] * 2])
    input_ids = torch.where(types == 2, 61, 5)
    theirs, _ = model.get_rope_index(input_ids, types, video_grid_thw=torch.tensor([[4, 4, 4]]))
    ours = rope_axes.mrope_position_ids([2, (4, 4, 4), 2])
    assert torch.equal(theirs[:, 0, :18], ours[:, :18])  # the video block itself agrees
    assert ours[:, 18].tolist() == [6, 6, 6] and int(ours[:, :18].max()) == 5
    assert theirs[:, 0, 18].tolist() == [4, 4, 4]  # 2 + max(4, 4) // 2
    # transformers' rule by its name: the whole sequence equal
    spatial = rope_axes.mrope_position_ids([2, (4, 4, 4), 2], after_vision="spatial_extent")
    assert torch.equal(spatial, theirs[:, 0])


def test_qwen3_vl_lays_out_each_frame_like_an_image(mrope_snippet) -> None:
    """get_rope_index of Qwen3-VL splits a 2-frame video into frames; with the timestamp text
    between them the ids are the page's."""
    model = tiny_model("qwen3_vl").model
    types = torch.tensor([[0] * 2 + [2] * 4 + [0] * 5 + [2] * 4 + [0] * 2])
    input_ids = torch.where(types == 2, 61, 5)
    ids, _ = model.get_rope_index(input_ids, types, video_grid_thw=torch.tensor([[2, 4, 4]]))
    assert torch.equal(ids[:, 0], mrope_snippet["frames"])


# -- section "Text alone is ordinary RoPE" ---------------------------------------------------------


def test_text_only_qwen2_vl_tables_are_llama_tables() -> None:
    """For text, transformers' Qwen2-VL rotary gives the tables of an ordinary RoPE model (Llama's
    rotary module with the same base and head size), bit for bit."""
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama

    text = Qwen2VLConfig().text_config
    llama = LlamaConfig(
        hidden_size=text.hidden_size, num_attention_heads=text.num_attention_heads,
        rope_parameters={"rope_type": "default", "rope_theta": text.rope_parameters["rope_theta"]},
    )  # fmt: skip
    positions = torch.arange(3000)[None]
    qwen = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(text)(
        torch.zeros(1), positions.expand(3, 1, -1)
    )
    plain = modeling_llama.LlamaRotaryEmbedding(llama)(torch.zeros(1), positions)
    assert torch.equal(qwen[0], plain[0]) and torch.equal(qwen[1], plain[1])


# -- exercises -------------------------------------------------------------------------------------


def test_a_224_image_takes_64_tokens_in_qwen2_vl() -> None:
    """patch 14 and a 2 x 2 merge: 224 x 224 pixels give a (1, 16, 16) grid and 64 tokens, as
    the model counts them (pixel rows in, merged tokens out)."""
    config = Qwen2VLConfig(
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 64, "num_heads": 2}
    )
    vision = config.vision_config
    assert (vision.patch_size, vision.spatial_merge_size, vision.temporal_patch_size) == (14, 2, 2)
    model = modeling_qwen2_vl.Qwen2VisionTransformerPretrainedModel._from_config(vision).eval()
    grid = torch.tensor([[1, 224 // 14, 224 // 14]])
    pixels = torch.randn(int(grid.prod()), 3 * 2 * 14 * 14)
    with torch.no_grad():
        merged = model(pixels, grid_thw=grid).pooler_output
    assert merged.shape[0] == 64
