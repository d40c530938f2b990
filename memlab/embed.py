"""Text embedders: texts to L2-normalised float32 vectors.

:class:`HashingEmbedder` (feature hashing of words, bigrams and character n-grams: no download,
the store's default; similarity of word pieces, not meaning) and :class:`FastEmbedEmbedder`
(any text model fastembed lists, always loaded offline). :func:`make_embedder` builds one from
a name: ``"hashing"``, ``"fastembed"`` (MiniLM) or ``"fastembed:<model>"``.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds texts into L2-normalised vectors of dimension ``dim``. ``name``
    identifies the embedding space: a store refuses to reopen with an embedder of another."""

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


class HashingEmbedder:
    """Deterministic hashed n-gram embedder (no download, no fitting).

    Features of a lower-cased text's ``\\w+`` words: the words (weight 1), their bigrams (0.7)
    and the character 3- and 4-grams of each space-padded word (0.5), each hashed with
    ``blake2b`` to a bucket and a sign (collisions cancel in expectation); counts damped as
    ``1 + log(tf)``; unit L2 norm. A text without words embeds to the zero vector.

    Parameters
    ----------
    dim : int
        Vector dimension (default 384, MiniLM's).
    """

    char_ngrams = (3, 4)
    word_weight = 1.0
    bigram_weight = 0.7
    char_weight = 0.5
    #: Distinct words whose features are cached; the caches are emptied before a batch once
    #: they hold more (they only save hashing: vectors do not depend on them).
    MAX_CACHED_WORDS = 50_000
    #: Distinct bigrams whose (bucket, signed weight) are cached, emptied likewise.
    MAX_CACHED_BIGRAMS = 200_000

    def __init__(self, dim: int = 384) -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 8:
            raise ValueError(f"dim must be an integer >= 8, got {dim!r}")
        self.dim = int(dim)
        self._clear()
        self._bigrams: dict[str, tuple[int, float]] = {}
        self.name = f"hashing-v1-d{self.dim}-c34-w1-b0.7-k0.5"

    def __repr__(self) -> str:
        return f"HashingEmbedder({self.name!r})"

    def _clear(self) -> None:
        self._words: dict[str, list[int]] = {}  # word -> ids of its features
        self._ids: dict[str, int] = {}  # feature -> id, numbered in order of arrival
        self._slots: list[tuple[int, float]] = []  # by id: bucket, signed weight

    def _slot(self, feature: str) -> tuple[int, float]:
        """Stable bucket and signed weight of a feature: its blake2b digest (8 bytes,
        little-endian) modulo ``dim``, signed by the digest's top bit (independent of
        PYTHONHASHSEED)."""
        blake = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        digest = int.from_bytes(blake, "little")
        weight = {"w": self.word_weight, "c": self.char_weight}.get(feature[0], self.bigram_weight)
        return digest % self.dim, (1.0 if digest >> 63 else -1.0) * weight

    def _word(self, word: str) -> list[int]:
        """Ids of a word's features: the word, then its character n-grams."""
        ids = self._words.get(word)
        if ids is None:
            padded = f" {word} "
            features = ["w:" + word]
            for n in self.char_ngrams:
                features += [f"c{n}:" + padded[i : i + n] for i in range(len(padded) - n + 1)]
            ids = self._words[word] = []
            for feature in features:
                if feature not in self._ids:
                    self._ids[feature] = len(self._slots)
                    self._slots.append(self._slot(feature))
                ids.append(self._ids[feature])
        return ids

    def _bigram(self, bigram: str) -> tuple[int, float]:
        slot = self._bigrams[bigram] = self._slot(bigram)
        return slot

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        # Each cell is summed in a fixed order: word and n-gram features by id, then bigrams
        # in order of first occurrence.
        docs = _check_texts(texts)
        if len(self._words) > self.MAX_CACHED_WORDS:
            self._clear()
        if len(self._bigrams) > self.MAX_CACHED_BIGRAMS:
            self._bigrams = {}
        n, dim = len(docs), self.dim
        words = [_WORD.findall(text.lower()) for text in docs]
        ids = [[i for w in row for i in self._word(w)] for row in words]
        if not any(ids):
            return np.zeros((n, dim), dtype=np.float32)
        rows = np.repeat(np.arange(n), [len(x) for x in ids])
        n_ids = len(self._slots)
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64)
        uniq, tf = np.unique(rows * n_ids + flat, return_counts=True)
        row, fid = np.divmod(uniq, n_ids)
        bucket, value = np.array([self._slots[i] for i in fid.tolist()]).T
        cells, values = [row * dim + bucket.astype(np.int64)], [value * (1.0 + np.log(tf))]
        pairs = [Counter(f"b:{a} {b}" for a, b in zip(w, w[1:], strict=False)) for w in words]
        get, new = self._bigrams.get, self._bigram
        slots = [get(key) or new(key) for c in pairs for key in c]
        if slots:
            count = np.fromiter(chain.from_iterable(c.values() for c in pairs), np.int64)
            damp = np.array([1.0 + math.log(c) for c in range(1, count.max() + 1)])
            bucket, value = np.array(slots).T
            row = np.repeat(np.arange(n), [len(c) for c in pairs])
            cells.append(row * dim + bucket.astype(np.int64))
            values.append(value * damp[count - 1])
        out = np.bincount(np.concatenate(cells), np.concatenate(values), n * dim)
        return l2_normalise(out.reshape(len(docs), self.dim))

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a str, got {type(text).__name__}")
        return self.embed_documents([text])[0]


#: Model fastembed loads for ``embedder="fastembed"`` (no model named).
DEFAULT_FASTEMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

_NOMIC = ("search_query: ", "search_document: ")
_BGE_QUERY = "Represent this sentence for searching relevant passages: "
_QWEN_QUERY = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)
#: ``(query prefix, document prefix)`` prescribed by the model cards of models fastembed lists;
#: a listed model not named here takes no prefix (fastembed's descriptions say "not necessary").
#: fastembed itself adds none (it only switches tasks for jina-embeddings-v3).
MODEL_PREFIXES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("nomic-ai/nomic-embed-text-v1", "nomic-ai/nomic-embed-text-v1.5"), _NOMIC),
    "nomic-ai/nomic-embed-text-v1.5-Q": _NOMIC,
    **dict.fromkeys(
        [f"BAAI/bge-{size}-en{v}" for v in ("", "-v1.5") for size in ("base", "small")]
        + ["BAAI/bge-large-en-v1.5", "mixedbread-ai/mxbai-embed-large-v1"]
        + [f"snowflake/snowflake-arctic-embed-{s}" for s in ("xs", "s", "m", "m-long", "l")],
        (_BGE_QUERY, ""),
    ),
    "BAAI/bge-small-zh-v1.5": ("为这个句子生成表示以用于检索相关文章：", ""),
    "intfloat/multilingual-e5-large": ("query: ", "passage: "),
    "google/embeddinggemma-300m": ("task: search result | query: ", "title: none | text: "),
    **dict.fromkeys(
        ("Qwen/Qwen3-Embedding-0.6B", "Qwen/Qwen3-Embedding-0.6B-Q"), (_QWEN_QUERY, "")
    ),
    "Qdrant/stella-en-400M-v5-doc-onnx": (
        "Instruct: Given a web search query, retrieve relevant passages that answer the query."
        "\nQuery: ",
        "",
    ),
}


#: Texts per ONNX batch.
BATCH_SIZE = 64


class ModelNotAvailableError(FileNotFoundError):
    """A fastembed model is neither in the given folder nor in fastembed's cache (offline)."""


def fastembed_models() -> dict[str, int]:
    """The text models fastembed lists, name -> vector dimension (no download)."""
    from fastembed import TextEmbedding

    return {m["model"]: int(m["dim"]) for m in TextEmbedding.list_supported_models()}


class FastEmbedEmbedder:
    """A text embedding model run by fastembed (ONNX, CPU), always loaded offline.

    The model loads when first used. Queries and documents take the model card's prefixes
    (:data:`MODEL_PREFIXES`).

    Parameters
    ----------
    model_name : str
        A model fastembed lists (:func:`fastembed_models`; default MiniLM, 384 dims).
    model_path : str or Path, optional
        A local model folder; without it, fastembed's cache (``cache_dir``, else its default).
        Nothing is downloaded: a model in neither raises :class:`ModelNotAvailableError`.
    cache_dir : str or Path, optional
        fastembed's cache folder (default: fastembed's own).
    """

    def __init__(
        self,
        model_name: str = DEFAULT_FASTEMBED_MODEL,
        model_path: str | Path | None = None,
        *,
        cache_dir: str | Path | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError(f"model_name must be a non-empty string, got {model_name!r}")
        self.model_path = Path(model_path) if model_path is not None else None
        if self.model_path is not None and not self.model_path.is_dir():
            raise FileNotFoundError(f"fastembed model folder not found: {self.model_path}")
        known = fastembed_models()
        if model_name not in known:
            close = [m for m in known if model_name.lower().split("/")[-1][:5] in m.lower()]
            hint = f"; close names: {', '.join(close[:5])}" if close else ""
            raise ValueError(
                f"fastembed does not list the model {model_name!r}{hint} "
                "(memlab.embed.fastembed_models() lists them all)"
            )
        self.model_name = model_name
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.query_prefix, self.document_prefix = MODEL_PREFIXES.get(model_name, ("", ""))
        self.name = f"fastembed:{model_name}"
        self._listed_dim = known[model_name]
        self._model: Any = None
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder(model_name={self.model_name!r}, model_path={self.model_path!r})"

    def _load(self) -> Any:
        if self._model is None:
            from fastembed import TextEmbedding

            kwargs: dict[str, Any] = {"local_files_only": True}
            if self.model_path is not None:
                kwargs["specific_model_path"] = str(self.model_path)
            if self.cache_dir is not None:
                kwargs["cache_dir"] = str(self.cache_dir)
            try:
                with _quiet_fastembed():
                    self._model = TextEmbedding(self.model_name, **kwargs)
            except Exception as error:  # fastembed's ValueError, onnxruntime's own errors
                where = (
                    f"from the folder {self.model_path} ({error})"
                    if self.model_path is not None
                    else f"from fastembed's cache ({_fastembed_cache(self.cache_dir)})"
                )
                raise ModelNotAvailableError(
                    f"fastembed model {self.model_name!r} is not available offline: cannot load "
                    f"it {where}. Download it once with `memlab models pull {self.model_name}` "
                    "(the one command that uses the network), or give model_path= a local "
                    "model folder."
                ) from error
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
            self._dim = self._listed_dim
        return self._dim

    def _vectors(self, embedded: Any) -> NDArray[np.float32]:
        vectors = np.asarray(list(embedded), dtype=np.float32)
        self._dim = int(vectors.shape[1])
        return l2_normalise(vectors)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        docs = _check_texts(texts)
        model = self._load()
        if not docs:
            return np.zeros((0, self.dim), dtype=np.float32)
        prefixed = [self.document_prefix + d for d in docs] if self.document_prefix else docs
        return self._vectors(model.passage_embed(prefixed, batch_size=BATCH_SIZE))

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a str, got {type(text).__name__}")
        model = self._load()
        return self._vectors(model.query_embed([self.query_prefix + text]))[0]


@contextlib.contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """Mute fastembed's loguru errors while it looks for a model (memlab raises its own)."""
    from loguru import logger  # a dependency of fastembed

    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def _fastembed_cache(cache_dir: str | Path | None = None) -> Path:
    """``cache_dir``, else fastembed's own cache folder."""
    if cache_dir is not None:
        return Path(cache_dir)
    default = Path(tempfile.gettempdir()) / "fastembed_cache"
    return Path(os.environ.get("FASTEMBED_CACHE_PATH") or default)


def cached_models(cache_dir: str | Path | None = None) -> list[str]:
    """The fastembed models found in its cache: the ones usable offline without ``model_path``."""
    from fastembed import TextEmbedding

    root = _fastembed_cache(cache_dir)
    found = []
    for description in TextEmbedding.list_supported_models():
        repo = (description.get("sources") or {}).get("hf")
        folder = root / f"models--{repo.replace('/', '--')}" if repo else None
        if folder is not None and any(folder.glob(f"snapshots/*/{description['model_file']}")):
            found.append(description["model"])
    return found


def pull_model(
    model_name: str = DEFAULT_FASTEMBED_MODEL, cache_dir: str | Path | None = None
) -> Path:
    """Download a fastembed model into its cache (default: ``FASTEMBED_CACHE_PATH`` or
    fastembed's own) and return the cache folder: the only function of memlab that downloads.
    Raises ``ConnectionError`` when the model hub is not reachable."""
    from fastembed import TextEmbedding

    if model_name not in fastembed_models():
        raise ValueError(
            f"fastembed does not list the model {model_name!r} (`memlab models list` shows them)"
        )
    if (root := _fastembed_cache(cache_dir)).exists() and not root.is_dir():
        raise NotADirectoryError(f"the cache folder {root} is a file")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
        raise ConnectionError(f"cannot download {model_name!r}: HF_HUB_OFFLINE is set")
    try:
        with _quiet_fastembed():
            TextEmbedding(model_name, cache_dir=str(root))
    except Exception as error:
        raise ConnectionError(
            f"could not download {model_name!r} into {root}: the model hub was not reachable "
            f"({type(error).__name__})"
        ) from error
    return root


def _shared_copy(model_name: str, cache_dir: str | Path | None) -> Path | None:
    """The shared folder's MiniLM when that model is asked for and is not in fastembed's cache."""
    if model_name != DEFAULT_FASTEMBED_MODEL or model_name in cached_models(cache_dir):
        return None
    from memlab.shared import MINILM, shared_dir

    root = shared_dir(required=False)
    folder = None if root is None else root.joinpath(*MINILM)
    return folder if folder is not None and folder.is_dir() else None


def embedder_from_options(name: str | None, model_path: str | Path | None) -> Embedder | None:
    """The embedder the ``--embedder NAME`` and ``--model-path DIR`` options ask for; None when
    neither is given (a store then opens with the one its file names)."""
    if not name and model_path is None:
        return None
    return make_embedder(name or "hashing", model_path=model_path)


def make_embedder(
    spec: str | Embedder = "hashing", *, model_path: str | Path | None = None, **kwargs: Any
) -> Embedder:
    """An embedder from a name (``"hashing"``, ``"fastembed"``, ``"fastembed:<model>"``) or an
    existing :class:`Embedder`. Without ``model_path`` (fastembed only) the model comes from
    fastembed's cache (``memlab models pull NAME``), or for MiniLM from the shared data folder.
    Other keyword arguments go to the embedder's constructor.
    """
    if isinstance(spec, str):
        key = spec.strip()
        if key.lower() == "hashing":
            if model_path is not None:
                raise ValueError("model_path (--model-path) applies to fastembed embedders only")
            return HashingEmbedder(**kwargs)
        if key.lower() == "fastembed" or key.lower().startswith("fastembed:"):
            model = key.split(":", 1)[1].strip() if ":" in key else DEFAULT_FASTEMBED_MODEL
            if not model:
                raise ValueError("embedder 'fastembed:' names no model")
            if model_path is None:
                model_path = _shared_copy(model, kwargs.get("cache_dir"))
            return FastEmbedEmbedder(model, model_path=model_path, **kwargs)
        raise ValueError(
            f"unknown embedder {spec!r}; expected 'hashing', 'fastembed', 'fastembed:<model>' "
            "or an Embedder instance"
        )
    if kwargs or model_path is not None:
        raise ValueError("keyword arguments apply only when the embedder is given by name")
    for attr in ("name", "dim", "embed_documents", "embed_query"):
        if not hasattr(spec, attr):
            raise TypeError(
                f"embedder {spec!r} lacks {attr!r}; it must implement the Embedder protocol"
            )
    return spec
