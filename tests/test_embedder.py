"""The default embedder: one text alone (every add and search) embeds exactly as in a batch."""

import numpy as np
import pytest

TEXTS = [
    "I like matcha green tea a lot",
    "User's favourite book is Dune.",
    "我喜欢喝绿茶",
    "x" * 3000,
    "",
    # words are cached; spaces that run together merge across words, so they are not
    " I like  matcha green tea a lot ",
    "tea a lot\tlike\nmatcha 2023 ▁ café 🙂",
]


def test_one_text_embeds_as_in_a_batch(embedder):
    batch = embedder.embed(TEXTS)
    for _ in range(2):  # the second time, from the cache of words' token ids
        for index, text in enumerate(TEXTS):
            one = embedder.embed([text])
            assert one.shape == (1, embedder.dim) and one.dtype == np.float32
            assert np.allclose(one[0], batch[index], atol=1e-6), text[:30]


@pytest.mark.parametrize("text", TEXTS[:4])
def test_rows_are_unit_length(embedder, text):
    assert np.linalg.norm(embedder.embed([text])[0]) == pytest.approx(1.0, abs=1e-5)


def test_empty_text_is_a_zero_row_not_nan(embedder):
    row = embedder.embed([""])[0]
    assert not np.isnan(row).any() and not row.any()


def test_embedders_of_one_process_share_one_loaded_model(embedder):
    from engram.providers.embedders import WordLlamaEmbedder

    again = WordLlamaEmbedder()
    assert again._load() is embedder._load()  # a second Memory does not load it again
    assert np.allclose(again.embed(["I like tea"]), embedder.embed(["I like tea"]))


@pytest.mark.parametrize("dim", [64, 128])
def test_a_smaller_dimension_loads_offline_from_the_bundled_weights(embedder, dim):
    from engram.providers.embedders import WordLlamaEmbedder

    smaller = WordLlamaEmbedder(dim=dim)
    rows = smaller.embed(["I like matcha green tea", "User's favourite book is Dune."])
    assert rows.shape == (2, dim) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert smaller._load() is not embedder._load()  # another dimension, another model
    full = embedder.embed(["I like matcha green tea"])[0][:dim]
    assert np.allclose(rows[0], full / np.linalg.norm(full), atol=1e-5)  # the first `dim` of the 256
