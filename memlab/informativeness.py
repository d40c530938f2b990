"""How much a text says: an informativeness score in [0, 1) from the text alone.

A memory's importance, when nobody gives one, is estimated from its content. The score's mass
``m`` (nats) counts what a text carries that its corpus (:class:`TermStats`: the store's own
documents, or any reference collection) does not repeat everywhere:

- the smoothed IDF ``ln((1 + N) / (1 + df)) + 1`` of each distinct content word (lower-cased
  ``\\w+`` tokens, stop words dropped; a word the corpus never saw has ``df = 0``);
- ``rare_bonus`` (3) per rare word, ``entity_bonus`` / ``number_bonus`` (1) per capitalised
  word not at a sentence start and per token with a digit.

The score is ``m / (m + half_mass)``: 0 for stop words only, 0.5 at ``half_mass`` (30 nats,
about five rare words or a dozen ordinary ones). :func:`content_importance` caps it at
:data:`MAX_CONTENT_IMPORTANCE` (0.8): text alone never reaches protection (0.9).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;]\s*")

#: English stop words (a compact list in the spirit of NLTK's), never counted as content.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves s t d ll m o re ve y let us also get got""".split()
)

#: Importance from content never exceeds this (protection starts at 0.9).
MAX_CONTENT_IMPORTANCE = 0.8


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] must be a string, got {type(t).__name__}")
    return out


def content_words(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens of ``text`` without stop words, in order (repeats kept)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return [w for w in (t.lower() for t in _WORD.findall(text)) if w not in STOP_WORDS]


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of content words over a corpus of ``n_docs`` documents."""

    n_docs: int = 0
    df: Counter[str] = field(default_factory=Counter)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        return cls().add(texts)

    def add(self, texts: Iterable[str]) -> TermStats:
        """A new ``TermStats`` with ``texts`` counted too (this one is unchanged)."""
        df = Counter(self.df)
        n = self.n_docs
        for text in texts:
            df.update(set(content_words(text)))
            n += 1
        return TermStats(n, df)

    def idf(self, df: NDArray[np.float64]) -> NDArray[np.float64]:
        """Smoothed IDF ``ln((1 + N) / (1 + df)) + 1`` of document frequencies (>= 1)."""
        return np.log((1.0 + self.n_docs) / (1.0 + df)) + 1.0

    def document_frequency(self, words: Sequence[str]) -> NDArray[np.float64]:
        return np.array([self.df.get(w, 0) for w in words], dtype=float)


@dataclass(frozen=True)
class Informativeness:
    """The informativeness score with its settings (see the module docstring). A word is rare
    when its document frequency is at most ``max(1, rare_share * N)`` and ``rare_max_df``."""

    half_mass: float = 30.0
    rare_share: float = 0.002
    rare_max_df: int = 5
    rare_bonus: float = 3.0
    entity_bonus: float = 1.0
    number_bonus: float = 1.0

    def __post_init__(self) -> None:
        if not (self.half_mass > 0 and math.isfinite(self.half_mass)):
            raise ValueError(f"half_mass must be a finite number > 0, got {self.half_mass!r}")
        if not 0.0 <= self.rare_share <= 1.0:
            raise ValueError(f"rare_share must lie in [0, 1], got {self.rare_share!r}")
        for name in ("rare_bonus", "entity_bonus", "number_bonus", "rare_max_df"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0")

    def mass(self, texts: Sequence[str], stats: TermStats | None = None) -> NDArray[np.float64]:
        """The IDF mass (nats) of each text, bonuses included (``stats``: of ``texts``)."""
        texts = _check_texts(texts)
        stats = TermStats.from_texts(texts) if stats is None else stats
        if not isinstance(stats, TermStats):
            raise TypeError(f"stats must be a TermStats, got {type(stats).__name__}")
        rare_df = min(max(1.0, self.rare_share * stats.n_docs), float(self.rare_max_df))
        out = np.zeros(len(texts))
        for i, text in enumerate(texts):
            words = sorted(set(content_words(text)))
            if not words:
                continue
            df = stats.document_frequency(words)
            m = float(stats.idf(df).sum())
            m += self.rare_bonus * float((df <= rare_df).sum())
            m += self.entity_bonus * len(entities(text))
            m += self.number_bonus * len(numbers(text))
            out[i] = m
        return out

    def score(self, texts: Sequence[str], stats: TermStats | None = None) -> NDArray[np.float64]:
        """Informativeness in [0, 1) of each text: ``m / (m + half_mass)``."""
        m = self.mass(texts, stats)
        return m / (m + self.half_mass)


def entities(text: str) -> set[str]:
    """Capitalised words, lower-cased, but the first word, those after ``. ! ? : ;`` and stop
    words (names, places, titles)."""
    return {
        word.lower()
        for sentence in _SENTENCE_END.split(text.strip())
        for match in _WORD.finditer(sentence)
        if match.start() > 0
        and (word := match.group())[:1].isupper()
        and word.lower() not in STOP_WORDS
    }


def numbers(text: str) -> set[str]:
    """Distinct tokens holding a digit (dates, amounts, times, versions)."""
    return {t.lower() for t in _WORD.findall(text) if any(ch.isdigit() for ch in t)}


def informativeness(texts: Sequence[str], stats: TermStats | None = None) -> NDArray[np.float64]:
    """Informativeness in [0, 1) of each text against the corpus ``stats`` (default: the
    texts)."""
    return Informativeness().score(texts, stats)


def content_importance(texts: Sequence[str], stats: TermStats | None = None) -> NDArray[np.float64]:
    """Importance from content: ``MAX_CONTENT_IMPORTANCE * informativeness``, in [0, 0.8)."""
    return MAX_CONTENT_IMPORTANCE * informativeness(texts, stats)
