"""Embedders: determinism, normalisation, similarity structure, the offline MiniLM model."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from memlab.embed import Embedder, FastEmbedEmbedder, HashingEmbedder, make_embedder


def test_hashing_unit_norm_dtype_shape() -> None:
    e = HashingEmbedder(dim=64)
    v = e.embed_documents(["alpha beta", "gamma", ""])
    assert v.dtype == np.float32 and v.shape == (3, 64)
    np.testing.assert_allclose(np.linalg.norm(v[:2], axis=1), 1.0, rtol=1e-6)
    assert not v[2].any()  # no words -> zero vector
    np.testing.assert_array_equal(e.embed_query("alpha beta"), v[0])
    assert isinstance(e, Embedder)


def test_hashing_similarity_structure() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed_documents(
        [
            "the deploy script needs the staging key",
            "deploy script needs a staging key",
            "my cat likes tuna",
        ]
    )
    assert a @ b > 0.7
    assert abs(a @ c) < 0.3


def test_hashing_is_stable_across_processes() -> None:
    """blake2b, not Python's salted hash(): the same vector under another PYTHONHASHSEED."""
    code = (
        "from memlab.embed import HashingEmbedder; "
        "print(HashingEmbedder(dim=32).embed_query('stable hashing').tolist())"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout
        )
    assert len(outs) == 1
    here = HashingEmbedder(dim=32).embed_query("stable hashing")
    np.testing.assert_allclose(np.array(eval(outs.pop())), here, rtol=1e-6)


def test_hashing_name_depends_on_settings() -> None:
    assert HashingEmbedder().name == HashingEmbedder().name
    assert HashingEmbedder(dim=128).name != HashingEmbedder().name
    assert HashingEmbedder(char_ngrams=()).name != HashingEmbedder().name


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dim": 4},
        {"dim": 3.5},
        {"char_ngrams": (0,)},
        {"word_weight": float("nan")},
        {"char_weight": -1},
    ],
)
def test_hashing_bad_params(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(**kwargs)


def test_bad_texts() -> None:
    e = HashingEmbedder(dim=16)
    with pytest.raises(TypeError):
        e.embed_documents("not a list")
    with pytest.raises(TypeError):
        e.embed_documents(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        e.embed_query(None)  # type: ignore[arg-type]


def test_make_embedder() -> None:
    assert isinstance(make_embedder("hashing", dim=32), HashingEmbedder)
    e = HashingEmbedder(dim=16)
    assert make_embedder(e) is e
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec")
    with pytest.raises(TypeError):
        make_embedder(object())  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        make_embedder("fastembed", model_path="/nonexistent/model")


def test_fastembed_minilm_offline(minilm_dir) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    e = FastEmbedEmbedder(model_path=minilm_dir)
    v = e.embed_documents(
        ["The cat sits on the mat.", "A cat is sitting on a mat.", "Stock markets fell sharply."]
    )
    assert v.shape == (3, 384) and e.dim == 384 and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert v[0] @ v[1] > 0.7 > v[0] @ v[2]
    np.testing.assert_allclose(e.embed_query("The cat sits on the mat."), v[0], atol=1e-5)
