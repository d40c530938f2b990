"""Text embedders: turn texts into L2-normalised float32 vectors.

Two implementations of the :class:`Embedder` protocol:

- :class:`HashingEmbedder` - deterministic feature hashing of word unigrams, word bigrams
  and character n-grams. Needs no download and no fitting; the embedded default of the
  store. Similarity reflects shared words and word pieces, not meaning.
- :class:`FastEmbedEmbedder` - any text model the ``fastembed`` library lists (ONNX), with
  the query/document prefixes of its model card. Always loaded offline
  (``local_files_only=True``): from ``model_path`` (a local model folder, e.g.
  ``../shared/models/all-MiniLM-L6-v2-onnx``) or from fastembed's cache; a model that is in
  neither raises :class:`ModelNotAvailableError` at once, nothing is downloaded.

:func:`make_embedder` builds one from a name: ``"hashing"``, ``"fastembed"`` (MiniLM) or
``"fastembed:<model>"``.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
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


def _slots(features: list[str], dim: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Stable (bucket, sign) of each feature: its blake2b digest (8 bytes, little-endian)
    modulo ``dim``, and the digest's top bit; independent of PYTHONHASHSEED."""
    blake = hashlib.blake2b
    digest = np.array(
        [
            int.from_bytes(blake(f.encode("utf-8"), digest_size=8).digest(), "little")
            for f in features
        ],
        dtype=np.uint64,
    )
    sign = np.where((digest >> np.uint64(63)) & np.uint64(1), 1.0, -1.0)
    return (digest % np.uint64(dim)).astype(np.int64), sign


class _Column:
    """A growing column of numbers: appended to as a list (``items``, the entries not yet
    moved), read as a numpy array."""

    def __init__(self, dtype: type) -> None:
        self.items: list[Any] = []
        self._array = np.zeros(0, dtype=dtype)
        self._filled = 0

    def __len__(self) -> int:
        return self._filled + len(self.items)

    def array(self) -> NDArray[Any]:
        if self.items:
            n = len(self)
            if n > len(self._array):
                grown = np.zeros(max(2 * len(self._array), n, 1024), dtype=self._array.dtype)
                grown[: self._filled] = self._array[: self._filled]
                self._array = grown
            self._array[self._filled : n] = self.items
            self._filled, self.items = n, []
        return self._array


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
        self._clear_cache()
        # The feature tables grow as words arrive: one batch at a time, so threads sharing an
        # embedder (a store under threads) never see a half-grown table.
        self._tables_lock = threading.Lock()
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
    #: Distinct bigrams whose (bucket, sign) are cached, emptied likewise.
    MAX_CACHED_BIGRAMS = 200_000

    def _clear_cache(self) -> None:
        # feature -> id; the id's bucket and signed weight
        self._ids: dict[str, int] = {}
        self._bucket = _Column(np.int64)
        self._value = _Column(np.float64)
        # word -> its index; the word's feature ids are _word_ids[start : start + len]
        self._word_cache: dict[str, int] = {}
        self._words: list[str] = []
        self._word_start = _Column(np.int64)
        self._word_len = _Column(np.int64)
        self._word_ids = _Column(np.int64)
        self._pending: list[str] = []  # features numbered, not yet hashed
        self._clear_bigrams()

    def _clear_bigrams(self) -> None:
        # (word index << 32 | next word index) -> bigram id
        self._bigram_cache: dict[int, int] = {}
        self._bigram_bucket = _Column(np.int64)
        self._bigram_sign = _Column(np.float64)
        self._pending_bigrams: list[str] = []

    # Word and character n-gram features get integer ids (per instance), in the order they
    # first arrive; each word's ids are cached as a slice of one flat table, so a known word
    # costs one dictionary look-up. Bigrams are hashed, their slots cached by bigram.
    def _new_word(self, word: str) -> int:
        """Index of a word not yet cached: its feature ids (the word, then its character
        n-grams; new features numbered in that order) appended to the flat table. New features
        are hashed in :meth:`_hash_pending`."""
        features = ["w:" + word]
        if self.char_ngrams and self.char_weight > 0:
            padded = f" {word} "
            for n in self.char_ngrams:
                prefix = f"c{n}:"
                features += [prefix + padded[i : i + n] for i in range(len(padded) - n + 1)]
        known = self._ids
        ids = list(map(known.get, features))
        if None in ids:  # new features, numbered in order
            for j, fid in enumerate(ids):
                if fid is None:
                    feature = features[j]
                    fid = known.get(feature)  # a feature repeated within the word
                    if fid is None:
                        fid = known[feature] = len(known)
                        self._pending.append(feature)
                    ids[j] = fid
        wid = self._word_cache[word] = len(self._word_cache)
        self._words.append(word)
        self._word_start.items.append(len(self._word_ids))
        self._word_len.items.append(len(ids))
        self._word_ids.items.extend(ids)
        return wid

    def _bigrams(
        self, word: NDArray[np.int64], row_of: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(row, bigram id) of each pair of neighbouring words of a row; bigrams are cached
        by the pair of word indices, new ones numbered and their text queued for hashing."""
        pair = row_of[1:] == row_of[:-1]
        codes = (word[:-1][pair] << 32) | word[1:][pair]
        distinct, inverse = np.unique(codes, return_inverse=True)
        keys = distinct.tolist()
        cache = self._bigram_cache
        bids = list(map(cache.get, keys))
        if None in bids:
            words = self._words
            for i, code in enumerate(keys):
                if bids[i] is None:
                    bids[i] = cache[code] = len(cache)
                    self._pending_bigrams.append(
                        f"b:{words[code >> 32]} {words[code & 0xFFFFFFFF]}"
                    )
        return row_of[1:][pair], np.asarray(bids, dtype=np.int64)[inverse.ravel()]

    def _hash_pending(self) -> None:
        """(bucket, signed weight) of the features and bigrams numbered since the last call."""
        if self._pending:
            bucket, sign = _slots(self._pending, self.dim)
            weight = np.where(
                np.array([f[0] == "w" for f in self._pending]), self.word_weight, self.char_weight
            )
            self._bucket.items.extend(bucket.tolist())
            self._value.items.extend((sign * weight).tolist())
            self._pending = []
        if self._pending_bigrams:
            bucket, sign = _slots(self._pending_bigrams, self.dim)
            self._bigram_bucket.items.extend(bucket.tolist())
            self._bigram_sign.items.extend(sign.tolist())
            self._pending_bigrams = []

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_tables_lock"]  # a lock does not pickle; each copy gets its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tables_lock = threading.Lock()
        if not isinstance(state.get("_word_start"), _Column):  # pickled by an older memlab
            self._clear_cache()

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        docs = _check_texts(texts)
        with self._tables_lock:
            return self._embed(docs)

    def _embed(self, docs: Sequence[str]) -> NDArray[np.float32]:
        # The features of every row are gathered for the whole batch and summed in one pass,
        # in float64 and in a fixed order per row: the word and n-gram features by id, then
        # the bigrams in order of first occurrence.
        if len(self._word_cache) > self.MAX_CACHED_WORDS:
            self._clear_cache()
        if len(self._bigram_cache) > self.MAX_CACHED_BIGRAMS:
            self._clear_bigrams()
        n = len(docs)
        word_cache, new_word = self._word_cache, self._new_word
        wids: list[int] = []
        n_words = [0] * n
        for r, text in enumerate(docs):
            words = _WORD.findall(text.lower())
            got = list(map(word_cache.get, words))
            if None in got:  # new words, each added once, in order
                got = [word_cache[w] if w in word_cache else new_word(w) for w in words]
            wids.extend(got)
            n_words[r] = len(got)
        if not wids:
            return np.zeros((n, self.dim), dtype=np.float32)
        word = np.asarray(wids, dtype=np.int64)
        row_of = np.repeat(np.arange(n), n_words)
        bigram = self._bigrams(word, row_of) if self.bigram_weight > 0 else None
        self._hash_pending()
        # words and n-grams: each row's distinct feature ids, ascending, with their counts
        lens = self._word_len.array()[word]
        ends = np.cumsum(lens)
        at = np.repeat(self._word_start.array()[word] - (ends - lens), lens) + np.arange(ends[-1])
        n_ids = len(self._ids)
        uniq, tf = np.unique(
            np.repeat(row_of, lens) * n_ids + self._word_ids.array()[at], return_counts=True
        )
        row, fid = np.divmod(uniq, n_ids)
        cells = [row * self.dim + self._bucket.array()[fid]]
        values = [self._value.array()[fid] * (1.0 + np.log(tf))]
        if bigram is not None and len(bigram[0]):
            # bigrams: each row's distinct bigrams in order of first occurrence, with counts
            brow, bid = bigram
            n_known = len(self._bigram_cache)
            uniq, first, count = np.unique(
                brow * n_known + bid, return_index=True, return_counts=True
            )
            order = np.argsort(first, kind="stable")
            row, bid = np.divmod(uniq[order], n_known)
            count = count[order]
            damp = np.array([1.0 + math.log(c) for c in range(1, int(count.max()) + 1)])
            cells.append(row * self.dim + self._bigram_bucket.array()[bid])
            values.append(self._bigram_sign.array()[bid] * self.bigram_weight * damp[count - 1])
        # bincount adds the weights in the order given, as np.add.at would
        out = np.bincount(
            np.concatenate(cells), weights=np.concatenate(values), minlength=n * self.dim
        )
        return l2_normalise(out.reshape(n, self.dim))

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


#: Model fastembed loads for ``embedder="fastembed"`` (no model named).
DEFAULT_FASTEMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

_BGE_QUERY = "Represent this sentence for searching relevant passages: "
_QWEN_QUERY = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
)
#: ``(query prefix, document prefix)`` prescribed by the model cards of models fastembed lists;
#: a listed model not named here takes no prefix (fastembed's descriptions say "not necessary").
#: fastembed itself adds none (it only switches tasks for jina-embeddings-v3).
MODEL_PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-ai/nomic-embed-text-v1": ("search_query: ", "search_document: "),
    "nomic-ai/nomic-embed-text-v1.5": ("search_query: ", "search_document: "),
    "nomic-ai/nomic-embed-text-v1.5-Q": ("search_query: ", "search_document: "),
    "BAAI/bge-base-en": (_BGE_QUERY, ""),
    "BAAI/bge-small-en": (_BGE_QUERY, ""),
    "BAAI/bge-base-en-v1.5": (_BGE_QUERY, ""),
    "BAAI/bge-small-en-v1.5": (_BGE_QUERY, ""),
    "BAAI/bge-large-en-v1.5": (_BGE_QUERY, ""),
    "BAAI/bge-small-zh-v1.5": ("为这个句子生成表示以用于检索相关文章：", ""),
    "mixedbread-ai/mxbai-embed-large-v1": (_BGE_QUERY, ""),
    "snowflake/snowflake-arctic-embed-xs": (_BGE_QUERY, ""),
    "snowflake/snowflake-arctic-embed-s": (_BGE_QUERY, ""),
    "snowflake/snowflake-arctic-embed-m": (_BGE_QUERY, ""),
    "snowflake/snowflake-arctic-embed-m-long": (_BGE_QUERY, ""),
    "snowflake/snowflake-arctic-embed-l": (_BGE_QUERY, ""),
    "intfloat/multilingual-e5-large": ("query: ", "passage: "),
    "google/embeddinggemma-300m": ("task: search result | query: ", "title: none | text: "),
    "Qwen/Qwen3-Embedding-0.6B": (_QWEN_QUERY, ""),
    "Qwen/Qwen3-Embedding-0.6B-Q": (_QWEN_QUERY, ""),
    "Qdrant/stella-en-400M-v5-doc-onnx": (
        "Instruct: Given a web search query, retrieve relevant passages that answer the query."
        "\nQuery: ",
        "",
    ),
}


class ModelNotAvailableError(FileNotFoundError):
    """A fastembed model is neither in the given folder nor in fastembed's cache (offline)."""


def fastembed_models() -> dict[str, int]:
    """The text models fastembed lists, name -> vector dimension (no download)."""
    from fastembed import TextEmbedding

    return {m["model"]: int(m["dim"]) for m in TextEmbedding.list_supported_models()}


class FastEmbedEmbedder:
    """A text embedding model run by fastembed (ONNX runtime, CPU), always loaded offline.

    Parameters
    ----------
    model_name : str
        A model fastembed lists (:func:`fastembed_models`; default
        ``sentence-transformers/all-MiniLM-L6-v2``, 384 dims).
    model_path : str or Path, optional
        A local model folder (ONNX model + tokenizer files), loaded with
        ``local_files_only=True``. Without it the model is looked up in fastembed's cache
        (``cache_dir``, else ``FASTEMBED_CACHE_PATH`` or fastembed's default), also with
        ``local_files_only=True``: nothing is ever downloaded, and a model that is not there
        raises :class:`ModelNotAvailableError`.
    batch_size : int
        Texts per ONNX batch.
    threads : int, optional
        ONNX runtime threads (fastembed's default when None).
    query_prefix, document_prefix : str, optional
        Text put before queries and before documents; by default the model card's
        (:data:`MODEL_PREFIXES`, e.g. nomic's ``search_query: `` / ``search_document: ``).
    cache_dir : str or Path, optional
        fastembed's cache folder to look in.

    Documents are embedded with fastembed's ``passage_embed`` and queries with
    ``query_embed`` (the same as ``embed`` for most models). The model is loaded lazily, at
    the first embedding or the first access of ``dim``. ``name`` is
    ``"fastembed:<model_name>"``.
    """

    def __init__(
        self,
        model_name: str = DEFAULT_FASTEMBED_MODEL,
        model_path: str | Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
        *,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        if not isinstance(model_name, str) or not model_name:
            raise ValueError(f"model_name must be a non-empty string, got {model_name!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        for label, prefix in (("query_prefix", query_prefix), ("document_prefix", document_prefix)):
            if prefix is not None and not isinstance(prefix, str):
                raise TypeError(f"{label} must be a str or None, got {type(prefix).__name__}")
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
        self.batch_size = batch_size
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        default_query, default_document = MODEL_PREFIXES.get(model_name, ("", ""))
        self.query_prefix = default_query if query_prefix is None else query_prefix
        self.document_prefix = default_document if document_prefix is None else document_prefix
        self.name = f"fastembed:{model_name}"
        self._listed_dim = known[model_name]
        self._model: Any = None
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder(model_name={self.model_name!r}, model_path={self.model_path!r})"

    def _load(self) -> Any:
        if self._model is None:
            from fastembed import TextEmbedding

            kwargs: dict[str, Any] = {"threads": self.threads, "local_files_only": True}
            if self.model_path is not None:
                kwargs["specific_model_path"] = str(self.model_path)
            if self.cache_dir is not None:
                kwargs["cache_dir"] = str(self.cache_dir)
            try:
                with _quiet_fastembed():
                    self._model = TextEmbedding(self.model_name, **kwargs)
            except ValueError as error:
                where = (
                    f"in the folder {self.model_path}"
                    if self.model_path is not None
                    else f"in fastembed's cache ({self.cache_dir or _fastembed_cache()})"
                )
                raise ModelNotAvailableError(
                    f"fastembed model {self.model_name!r} is not available offline: not found "
                    f"{where}. Download it once with `memlab models pull {self.model_name}` "
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
        return self._vectors(model.passage_embed(prefixed, batch_size=self.batch_size))

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a str, got {type(text).__name__}")
        model = self._load()
        return self._vectors(model.query_embed([self.query_prefix + text]))[0]


class _quiet_fastembed:
    """Mute fastembed's loguru errors while it looks for a model (memlab raises its own)."""

    def __enter__(self) -> None:
        try:
            from loguru import logger
        except ImportError:  # pragma: no cover - fastembed depends on loguru
            self._logger = None
            return
        self._logger = logger
        logger.disable("fastembed")

    def __exit__(self, *exc: object) -> None:
        if self._logger is not None:
            self._logger.enable("fastembed")


def _fastembed_cache() -> str:
    import os
    import tempfile

    return os.environ.get("FASTEMBED_CACHE_PATH") or str(
        Path(tempfile.gettempdir()) / "fastembed_cache"
    )


def _describe(model_name: str) -> dict[str, Any]:
    from fastembed import TextEmbedding

    for description in TextEmbedding.list_supported_models():
        if description["model"] == model_name:
            return description
    raise ValueError(
        f"fastembed does not list the model {model_name!r} (`memlab models list` shows them)"
    )


def cached_models(cache_dir: str | Path | None = None) -> list[str]:
    """The fastembed models found in its cache: the ones usable offline without ``model_path``."""
    from fastembed import TextEmbedding

    root = Path(cache_dir) if cache_dir is not None else Path(_fastembed_cache())
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
    """Download a fastembed model into its cache: the only function of memlab that downloads.

    Parameters
    ----------
    model_name : str
        A model fastembed lists (``memlab models list``).
    cache_dir : str or Path, optional
        fastembed's cache folder (default: ``FASTEMBED_CACHE_PATH`` or fastembed's own).

    Returns
    -------
    Path
        The cache folder, where :class:`FastEmbedEmbedder` then finds the model offline.

    Raises
    ------
    ConnectionError
        The model hub could not be reached (no network, or ``HF_HUB_OFFLINE`` set).
    """
    import os

    from fastembed import TextEmbedding

    _describe(model_name)
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
        raise ConnectionError(f"cannot download {model_name!r}: HF_HUB_OFFLINE is set")
    root = Path(cache_dir) if cache_dir is not None else Path(_fastembed_cache())
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
    from memlab.datasets import shared_path

    return shared_path("minilm", required=False)


def make_embedder(
    spec: str | Embedder = "hashing", *, model_path: str | Path | None = None, **kwargs: Any
) -> Embedder:
    """An embedder from a name or an existing :class:`Embedder`.

    Names: ``"hashing"`` (:class:`HashingEmbedder`), ``"fastembed"`` (MiniLM) or
    ``"fastembed:<model>"`` for any model fastembed lists (e.g.
    ``"fastembed:nomic-ai/nomic-embed-text-v1.5"``), loaded offline with the model's own
    query/document prefixes. ``model_path`` (fastembed only) is a local model folder; without
    it the model comes from fastembed's cache (``memlab models pull NAME`` puts it there), and
    MiniLM, when it is not there, from the shared data folder if one is found. Other keyword
    arguments go to the embedder's constructor. The store, the ``memlab store`` command, the
    MCP server and the ``%memlab open`` magic all name embedders this way.
    """
    if isinstance(spec, str):
        key = spec.strip()
        if key.lower() == "hashing":
            if model_path is not None:
                raise ValueError("model_path applies to the fastembed embedder only")
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


__all__ = [
    "DEFAULT_FASTEMBED_MODEL",
    "MODEL_PREFIXES",
    "Embedder",
    "FastEmbedEmbedder",
    "HashingEmbedder",
    "ModelNotAvailableError",
    "cached_models",
    "fastembed_models",
    "l2_normalise",
    "make_embedder",
    "pull_model",
]
