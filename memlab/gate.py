"""Prediction-error gating on ingest.

The similarity of a new text to its nearest stored memory decides what the store
does with it: ``REINFORCE`` (the same memory seen again: an access, the text kept
as an observation), ``UPDATE`` (a new version of that memory, the old content kept)
or ``CREATE`` (a new memory).
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


class Decision(str, enum.Enum):
    """What the gate decides for a new text."""

    REINFORCE = "reinforce"
    UPDATE = "update"
    CREATE = "create"


class Band(enum.IntEnum):
    """The similarity bands of a threshold gate, as the class codes of vectorised decisions
    and of labelled pairs (fitting, STS-B)."""

    REINFORCE = 0
    UPDATE = 1
    CREATE = 2

    @property
    def decision(self) -> Decision:
        return Decision[self.name]


#: Decisions in the order of their :class:`Band` codes: reinforce, update, create.
DECISIONS: tuple[Decision, ...] = tuple(b.decision for b in Band)


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")

#: Words that negate a statement ("use X" vs "never use X"); ``n't`` contractions count too.
NEGATIONS: frozenset[str] = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "without",
        "cannot",
        "dont",
        "avoid",
        "stop",
    }
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (letters, digits and an apostrophe suffix)."""
    return _WORD.findall(text.lower())


def numbers(text: str) -> set[str]:
    """The numbers written in ``text`` ("5432", "2.5", "03" ...)."""
    return set(_NUMBER.findall(text))


def has_negation(text: str) -> bool:
    """Whether a text negates: a negation word or an ``n't`` contraction (don't, isn't...)."""
    return any(w in NEGATIONS or w.endswith("n't") for w in words(text))


def contradicts(text: str, other: str) -> bool:
    """A cheap lexical sign that two similar texts say different things.

    True when one negates and the other does not, or when they carry different numbers
    ("port 5432" vs "port 5433", "at 02:00" vs "at 03:00"). Embeddings put such pairs very
    close together, so similarity alone would merge a correction into the fact it corrects.
    """
    return has_negation(text) != has_negation(other) or numbers(text) != numbers(other)


@dataclass(frozen=True)
class Gate:
    """Two similarity thresholds: ``similarity > reinforce`` reinforces,
    ``similarity > update`` updates, anything else creates.

    Parameters
    ----------
    reinforce : float
        Threshold above which a text reinforces its nearest memory (default 0.92).
    update : float
        Threshold above which a text updates its nearest memory (default 0.75).
        Must not exceed ``reinforce``.
    guard : bool
        When both texts are given to :meth:`decide`, never REINFORCE a text that
        :func:`contradicts` its nearest memory (a negation or a number differs): it UPDATEs
        instead, so a correction replaces the fact rather than being filed as a repetition.
    """

    reinforce: float = 0.92
    update: float = 0.75
    guard: bool = True

    def __post_init__(self) -> None:
        for name in ("reinforce", "update"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise TypeError(f"Gate {name} threshold must be a number, got {value!r}")
            if not math.isfinite(value) or not -1.0 <= value <= 1.0:
                raise ValueError(
                    f"Gate {name} threshold must be a finite number in [-1, 1], got {value!r}"
                )
        if not isinstance(self.guard, bool):
            raise TypeError(f"Gate guard must be a bool, got {self.guard!r}")
        if self.update > self.reinforce:
            raise ValueError(
                f"Gate update threshold ({self.update}) must not exceed the reinforce "
                f"threshold ({self.reinforce})"
            )

    def decide(
        self, similarity: float | None, text: str | None = None, nearest_text: str | None = None
    ) -> Decision:
        """Decide for one text; ``None`` (an empty store) always creates.

        With ``text`` and ``nearest_text`` (the content of the nearest memory) and ``guard``
        on, a REINFORCE between contradicting texts becomes an UPDATE.
        """
        if similarity is None:
            return Decision.CREATE
        decision = Band(int(self.codes(np.array([similarity]))[0])).decision
        if (
            decision is Decision.REINFORCE
            and self.guard
            and text is not None
            and nearest_text is not None
            and contradicts(text, nearest_text)
        ):
            return Decision.UPDATE
        return decision

    def codes(self, similarities: ArrayLike) -> NDArray[np.int64]:
        """Vectorised decisions as :class:`Band` codes (reinforce, update, create)."""
        s = np.asarray(similarities, dtype=float)
        if np.isnan(s).any():
            raise ValueError("similarities contain NaN")
        return np.where(
            s > self.reinforce, Band.REINFORCE, np.where(s > self.update, Band.UPDATE, Band.CREATE)
        ).astype(np.int64)

    def decide_many(self, similarities: ArrayLike) -> list[Decision]:
        """Decisions for many similarities at once."""
        return [Band(int(c)).decision for c in self.codes(similarities)]

    def to_dict(self) -> dict[str, float | bool]:
        return {
            "reinforce": float(self.reinforce),
            "update": float(self.update),
            "guard": self.guard,
        }

    @classmethod
    def from_dict(cls, source: dict[str, Any]) -> Gate:
        return cls(
            reinforce=float(source["reinforce"]),
            update=float(source["update"]),
            guard=bool(source.get("guard", True)),
        )


def labels_from_scores(
    scores: ArrayLike, reinforce_at: float = 4.5, update_at: float = 2.5
) -> NDArray[np.int64]:
    """Gate classes from graded similarity scores (STS-B's 0-5 scale by default).

    ``score >= reinforce_at`` is :attr:`Band.REINFORCE`, ``score >= update_at``
    :attr:`Band.UPDATE`, else :attr:`Band.CREATE`.
    """
    s = np.asarray(scores, dtype=float)
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    return np.where(
        s >= reinforce_at, Band.REINFORCE, np.where(s >= update_at, Band.UPDATE, Band.CREATE)
    ).astype(np.int64)


__all__ = [
    "Band",
    "DECISIONS",
    "Decision",
    "Gate",
    "NEGATIONS",
    "contradicts",
    "has_negation",
    "labels_from_scores",
    "numbers",
    "words",
]
