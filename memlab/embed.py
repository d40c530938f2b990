"""Text embedders: turn texts into L2-normalised float32 vectors.

Two implementations of the :class:`Embedder` protocol:

- :class:`HashingEmbedder` - deterministic feature hashing of word unigrams, word bigrams
  and character n-grams. Needs no download and no fitting; the embedded default of the
  store. Similarity reflects shared words and word pieces, not meaning.
- :class:`FastEmbedEmbedder` - a sentence-transformer model run by the ``fastembed``
  library (ONNX). Offline use: give ``model_path`` (a local model folder, e.g.
  ``../shared/models/all-MiniLM-L6-v2-onnx``); the model is then always loaded with
  ``local_files_only=True``, so nothing is downloaded. When loading by name only, set the
  environment variable ``HF_HUB_OFFLINE=1`` where there is no network, otherwise the hub
  client retries for tens of seconds before failing.

:func:`make_embedder` builds one from a name.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds texts into L2-normalised vectors of a fixed dimension.

    Attributes
    ----------
    name : str
        Identifies the embedding space (model and settings); the store records it and
        refuses to reopen a database with an embedder of another name.
    dim : int
        Vector dimension.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed many texts: float32 array of shape ``(len(texts), dim)``, rows of unit norm."""
        ...

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Embed one query: float32 array of shape ``(dim,)``."""
        ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of strings, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] must be a str, got {type(text).__name__}")
    return out


def l2_normalise(matrix: NDArray[np.floating]) -> NDArray[np.float32]:
    """Rows scaled to unit L2 norm (all-zero rows stay zero), as float32."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Stable (bucket, sign) of a feature: blake2b, independent of PYTHONHASHSEED."""
    digest = int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )
    return digest % dim, (1.0 if (digest >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Deterministic hashed n-gram embedder (no download, no fitting).

    Features of a text (lower-cased, split into ``\\w+`` words):

    - word unigrams (weight ``word_weight``),
    - word bigrams (weight ``bigram_weight``),
    - character n-grams of each word padded with spaces, for n in ``char_ngrams``
      (weight ``char_weight`` each).

    Each feature is hashed with ``blake2b`` to a bucket in ``[0, dim)`` and a sign (signed
    feature hashing, so collisions cancel in expectation); term counts are damped
    sublinearly (``1 + log(tf)``) and the vector is scaled to unit L2 norm. A text
    without any word embeds to the zero vector.

    Parameters
    ----------
    dim : int
        Vector dimension (default 384, the size of MiniLM's vectors).
    char_ngrams : tuple of int
        Character n-gram lengths (default 3 and 4). Empty turns them off.
    word_weight, bigram_weight, char_weight : float
        Relative weights of the three feature families.
    """

    def __init__(
        self,
        dim: int = 384,
        char_ngrams: tuple[int, ...] = (3, 4),
        word_weight: float = 1.0,
        bigram_weight: float = 0.7,
        char_weight: float = 0.5,
    ) -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 8:
            raise ValueError(f"dim must be an integer >= 8, got {dim!r}")
        ngrams = tuple(char_ngrams)
        if any(
            isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 for n in ngrams
        ):
            raise ValueError(f"char_ngrams must be positive integers, got {char_ngrams!r}")
        for label, w in (
            ("word_weight", word_weight),
            ("bigram_weight", bigram_weight),
            ("char_weight", char_weight),
        ):
            if not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise ValueError(f"{label} must be a finite number >= 0, got {w!r}")
        self.dim = int(dim)
        self.char_ngrams = tuple(int(n) for n in ngrams)
        self.word_weight = float(word_weight)
        self.bigram_weight = float(bigram_weight)
        self.char_weight = float(char_weight)
        grams = "".join(str(n) for n in self.char_ngrams) or "0"
        self._ids: dict[str, int] = {}
        self._bucket = np.zeros(0, dtype=np.int64)
        self._value = np.zeros(0, dtype=np.float64)
        self._word_cache: dict[str, list[int]] = {}
        self.name = (
            f"hashing-v1-d{self.dim}-c{grams}-w{self.word_weight:g}"
            f"-b{self.bigram_weight:g}-k{self.char_weight:g}"
        )

    def __repr__(self) -> str:
        return (
            f"HashingEmbedder(dim={self.dim}, char_ngrams={self.char_ngrams}, "
            f"word_weight={self.word_weight}, "
            f"bigram_weight={self.bigram_weight}, char_weight={self.char_weight})"
        )

    #: Distinct words whose feature ids are cached; the cache is emptied before a batch once
    #: it holds more (it only saves time: vectors do not depend on it).
    MAX_CACHED_WORDS = 50_000

    def _clear_cache(self) -> None:
        self._ids = {}
        self._bucket = np.zeros(0, dtype=np.int64)
        self._value = np.zeros(0, dtype=np.float64)
        self._word_cache = {}

    # Word and character n-gram features get integer ids (per instance) and each word's ids
    # are cached, so a known word costs one dictionary look-up; bigrams are hashed directly.
    def _feature_id(self, feature: str) -> int:
        fid = self._ids.get(feature)
        if fid is None:
            fid = len(self._ids)
            self._ids[feature] = fid
            bucket, sign = _slot(feature, self.dim)
            if fid == len(self._bucket):  # grow the id -> (bucket, value) tables
                self._bucket = np.concatenate(
                    [self._bucket, np.zeros(max(1024, fid), dtype=np.int64)]
                )
                self._value = np.concatenate(
                    [self._value, np.zeros(max(1024, fid), dtype=np.float64)]
                )
            self._bucket[fid] = bucket
            self._value[fid] = sign * self._weight(feature)
        return fid

    def _word_ids(self, word: str) -> list[int]:
        ids = self._word_cache.get(word)
        if ids is None:
            ids = [self._feature_id("w:" + word)]
            if self.char_ngrams and self.char_weight > 0:
                padded = f" {word} "
                for n in self.char_ngrams:
                    ids.extend(
                        self._feature_id(f"c{n}:" + padded[i : i + n])
                        for i in range(max(len(padded) - n + 1, 0))
                    )
            self._word_cache[word] = ids
        return ids

    def _weight(self, feature: str) -> float:
        kind = feature[0]
        if kind == "w":
            return self.word_weight
        if kind == "b":
            return self.bigram_weight
        return self.char_weight

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        docs = _check_texts(texts)
        if len(self._word_cache) > self.MAX_CACHED_WORDS:
            self._clear_cache()
        out = np.zeros((len(docs), self.dim), dtype=np.float64)
        rows: list[NDArray[np.int64]] = []
        fids: list[NDArray[np.int64]] = []
        counts: list[NDArray[np.int64]] = []
        b_rows: list[int] = []
        b_cols: list[int] = []
        b_vals: list[float] = []
        for r, text in enumerate(docs):
            words = _WORD.findall(text.lower())
            if not words:
                continue
            ids: list[int] = []
            for w in words:
                ids.extend(self._word_ids(w))
            uniq, tf = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
            rows.append(np.full(len(uniq), r, dtype=np.int64))
            fids.append(uniq)
            counts.append(tf)
            # Bigrams are too many to keep ids for: hashed directly.
            if self.bigram_weight > 0:
                bigrams: dict[str, int] = {}
                for a, b in zip(words, words[1:], strict=False):
                    key = "b:" + a + " " + b
                    bigrams[key] = bigrams.get(key, 0) + 1
                for key, count in bigrams.items():
                    bucket, sign = _slot(key, self.dim)
                    b_rows.append(r)
                    b_cols.append(bucket)
                    b_vals.append(sign * self.bigram_weight * (1.0 + math.log(count)))
        if rows:
            fid = np.concatenate(fids)
            value = self._value[fid] * (1.0 + np.log(np.concatenate(counts)))
            np.add.at(out, (np.concatenate(rows), self._bucket[fid]), value)
        if b_rows:
            np.add.at(out, (np.asarray(b_rows), np.asarray(b_cols)), np.asarray(b_vals))
        return l2_normalise(out)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a str, got {type(text).__name__}")
        return self.embed_documents([text])[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dim": self.dim,
            "char_ngrams": list(self.char_ngrams),
            "word_weight": self.word_weight,
            "bigram_weight": self.bigram_weight,
            "char_weight": self.char_weight,
        }


class FastEmbedEmbedder:
    """A sentence-transformer model run by fastembed (ONNX runtime, CPU).

    Parameters
    ----------
    model_name : str
        fastembed model name (default ``sentence-transformers/all-MiniLM-L6-v2``, 384 dims).
    model_path : str or Path, optional
        A local model folder (ONNX model + tokenizer files). When given, the model is
        loaded from it with ``local_files_only=True`` and nothing is ever downloaded.
        Without it, fastembed resolves ``model_name`` through its cache or the hub; set
        ``HF_HUB_OFFLINE=1`` when offline.
    batch_size : int
        Texts per ONNX batch.
    threads : int, optional
        ONNX runtime threads (fastembed's default when None).

    The model is loaded lazily, at the first embedding or the first access of ``dim``.
    """

    def __init__(
        self,
        model_name: str = "sentence-transformers/all-MiniLM-L6-v2",
        model_path: str | Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError(f"model_name must be a non-empty string, got {model_name!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.model_name = model_name
        self.model_path = Path(model_path) if model_path is not None else None
        if self.model_path is not None and not self.model_path.is_dir():
            raise FileNotFoundError(f"fastembed model folder not found: {self.model_path}")
        self.batch_size = batch_size
        self.threads = threads
        self.name = f"fastembed:{model_name}"
        self._model: Any = None
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder(model_name={self.model_name!r}, model_path={self.model_path!r})"

    def _load(self) -> Any:
        if self._model is None:
            from fastembed import TextEmbedding

            kwargs: dict[str, Any] = {"threads": self.threads}
            if self.model_path is not None:
                kwargs.update(specific_model_path=str(self.model_path), local_files_only=True)
            self._model = TextEmbedding(self.model_name, **kwargs)
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_documents(["dimension probe"]).shape[1])
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        docs = _check_texts(texts)
        model = self._load()
        if not docs:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = np.asarray(list(model.embed(docs, batch_size=self.batch_size)), dtype=np.float32)
        self._dim = int(vectors.shape[1])
        return l2_normalise(vectors)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a str, got {type(text).__name__}")
        return self.embed_documents([text])[0]


def make_embedder(
    spec: str | Embedder = "hashing", *, model_path: str | Path | None = None, **kwargs: Any
) -> Embedder:
    """An embedder from a name (``"hashing"`` or ``"fastembed"``) or an existing :class:`Embedder`.

    ``model_path`` (fastembed only) loads a local model folder offline; other keyword
    arguments go to the embedder's constructor.
    """
    if isinstance(spec, str):
        key = spec.lower()
        if key == "hashing":
            if model_path is not None:
                raise ValueError("model_path applies to the fastembed embedder only")
            return HashingEmbedder(**kwargs)
        if key == "fastembed":
            return FastEmbedEmbedder(model_path=model_path, **kwargs)
        raise ValueError(
            f"unknown embedder {spec!r}; expected 'hashing', 'fastembed' or an Embedder instance"
        )
    if kwargs or model_path is not None:
        raise ValueError("keyword arguments apply only when the embedder is given by name")
    for attr in ("name", "dim", "embed_documents", "embed_query"):
        if not hasattr(spec, attr):
            raise TypeError(
                f"embedder {spec!r} lacks {attr!r}; it must implement the Embedder protocol"
            )
    return spec


__all__ = ["Embedder", "FastEmbedEmbedder", "HashingEmbedder", "l2_normalise", "make_embedder"]
