"""Prediction-error gating on ingest, made lossless.

A threshold gate maps the similarity of a new text to its nearest stored memory to a band:
``REINFORCE`` (> ``reinforce``), ``UPDATE`` (> ``update``) or ``CREATE`` (the Vestige preset
0.92 / 0.75; :meth:`Gate.decide`, :meth:`Gate.codes`). Neither merging nor replacing is right
for a *related* fact, so the store runs :meth:`Gate.judge`, which looks at the texts of the
nearest memories as well and decides

- ``REINFORCE``: the same fact again (no new content word, number or negation): an access of
  the memory, the text kept as an observation;
- ``SUPERSEDE``: a revision of the same fact (a changed number or a negation in an otherwise
  unchanged statement, or a revision marker such as "Correction:" or "now" with a small
  substitution): the old memory becomes a version (status ``superseded``), the new text a new
  memory linked to it; a revision in other words is RELATED (both stay in search; search ranks
  the newer first and may flag the older, :func:`memlab.revision.outdates`), unless a custom
  judge says otherwise;
- ``RELATED``: similar (above ``update``) but a different fact: a new memory linked to it;
- ``CREATE``: novel.

The lexical tests are deliberately strict: anything they cannot call the same fact or a revision
stays in search. Every verdict names the rule that decided. A user's own language or NLI model
can decide first: ``Gate(judged_by=callable)``.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from memlab.revision import CALENDAR, changed_slots
from memlab.words import (
    _CACHED_TEXTS,
    DISCOURSE_WORDS,
    FUNCTION_WORDS,
    NEGATIONS,
    PERSONS,
    REVISION_WORDS,
    has_negation,
    numbers,
    words,
)


class Decision(enum.StrEnum):
    """What the gate decides for a new text."""

    REINFORCE = "reinforce"
    #: The middle band of a threshold gate (:meth:`Gate.decide`); the store's lossless gate
    #: resolves it into SUPERSEDE, RELATED or REINFORCE and never applies it as such.
    UPDATE = "update"
    CREATE = "create"
    SUPERSEDE = "supersede"
    RELATED = "related"


class Band(enum.IntEnum):
    """The similarity bands of a threshold gate, as the class codes of vectorised decisions
    and of labelled pairs (fitting, STS-B)."""

    REINFORCE = 0
    UPDATE = 1
    CREATE = 2


#: Decisions in the order of their :class:`Band` codes: reinforce, update, create.
DECISIONS: tuple[Decision, ...] = tuple(Decision[b.name] for b in Band)


def contradicts(text: str, other: str) -> bool:
    """One text negates and the other does not, or they carry different numbers ("port 5432"
    vs "port 5433"): embeddings put such pairs very close together."""
    return has_negation(text) != has_negation(other) or numbers(text) != numbers(other)


_VALUE = re.compile(r"\d+[^\W\d_]*")  # a number word, with a unit written on ("3pm", "16gb")
#: A number read whole ("1.2", "2:1", "1,200"), with a unit written on.
_NUMBER = re.compile(r"\b\d+(?:[.,:/]\d+)*[^\W\d_]*")


@dataclass(frozen=True)
class Candidate:
    """A stored memory a new text is compared with: its similarity, content, entity and id
    (None when the caller does not say)."""

    similarity: float
    text: str
    entity: str | None = None
    id: int | None = None


#: What a custom judge returns: a decision, a decision and the position of the candidate it
#: acts on (the nearest when not given), or None to let the offline rules decide.
JudgeResult = Decision | tuple[Decision, int] | None


@dataclass(frozen=True)
class Verdict:
    """What :meth:`Gate.judge` decided, about which candidate, and by which rule.

    ``index`` is the position of the candidate acted on (the reinforced or superseded memory,
    or the related neighbour); None for CREATE. ``band`` is the threshold band of that
    candidate's similarity. Rules: ``same-fact``, ``contradiction``, ``revision``, ``related``,
    ``novel``, ``explicit`` (a caller-given ``supersedes=``), ``off``, ``judge:<name>`` (a
    custom judge), ``older`` (the store: a revision or restatement said before the memory it
    matches began or was stored, kept RELATED).
    """

    decision: Decision
    index: int | None
    similarity: float | None
    rule: str
    band: Decision | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "rule": self.rule,
            "similarity": self.similarity,
            "band": None if self.band is None else self.band.value,
        }


def same_fact(text: str, other: str) -> bool:
    """``text`` restates ``other``: the same content words (lower-cased, lightly stemmed; no
    function, discourse, revision or negation words), its names, numbers and dates in the same
    order, the same polarity, not only other persons ("I", "she" ...: :func:`_judged`)."""
    return _judged(_features(text), _features(other)) == "same-fact"


def revision_rule(text: str, other: str) -> str | None:
    """``"contradiction"`` or ``"revision"`` when ``text`` revises the fact ``other`` states.

    Contradiction: the polarity differs, or both carry numbers and they differ, while the
    content words differ by at most one word. Revision: ``text`` carries a revision word and
    replaces one slot of ``other``: at most two content words removed and two added, each side
    side by side in its text ("the team is now Q3 launch" revises "the team is Berlin office";
    "the bank is now X" does not revise "the child is Y", whose changed words are apart), or
    only its numbers; keeping at least two content words and at least half of them.
    """
    rule = _subject_kept(_judged(_features(text), _features(other)), text, other)
    return None if rule == "same-fact" else rule


def _subject_kept(rule: str | None, text: str, other: str) -> str | None:
    """``rule``, unless it is a contradiction between the values of two subjects ("Server A
    has 16 GB" / "Server B has 32 GB", or two value slots: "Invoice 1043 is due on July 1" /
    "Invoice 1044 is due on July 15"; :func:`memlab.revision.changed_slots`)."""
    if rule != "contradiction":
        return rule
    values, subjects = changed_slots(other, text)
    return None if subjects or values > 1 else rule


class _Features(NamedTuple):
    """What :func:`same_fact` and :func:`revision_rule` read of one text, computed once."""

    negated: bool
    values: frozenset[str]
    content: frozenset[str]
    marked: bool
    stems: tuple[str, ...]
    named: tuple[str, ...]  # capitalised words, numbers and dates in the order they first occur
    persons: frozenset[str]  # the persons its personal pronouns name ("my", "me": "i")


_NOT_CONTENT = FUNCTION_WORDS | DISCOURSE_WORDS | REVISION_WORDS
_NAMED = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])*|\d[\d.,:/]*")  # letters of any script


@functools.lru_cache(maxsize=1 << 17)
def _word_features(word: str) -> tuple[str, bool, str | None, bool]:
    """(stem, negation, content stem or None, revision word) of one word token."""
    stem = word.removesuffix("'s")
    if len(stem) > 3 and stem.endswith("s") and not stem.endswith("ss"):
        stem = stem[:-1]  # a light stem: plurals and possessives
    negation = word in NEGATIONS or word.endswith("n't")
    value = _VALUE.fullmatch(word) is not None
    dropped = word in FUNCTION_WORDS or negation or value or stem in _NOT_CONTENT
    return stem, negation, None if dropped else stem, stem in REVISION_WORDS


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _features(text: str) -> _Features:
    """What the lexical rules read of ``text``: negation, values, content words, revision
    words and stems in one pass over its words, and its capitalised words, numbers and dates in
    order."""
    negated = marked = False
    content: list[str] = []
    stems: list[str] = []
    for word in words(text):
        stem, negation, content_stem, revision = _word_features(word)
        stems.append(stem)
        negated = negated or negation
        if content_stem is not None:
            content.append(content_stem)
        marked = marked or revision
    named = tuple(
        dict.fromkeys(
            w.lower().removesuffix("'s")
            for w in _NAMED.findall(text)
            if w[0].isupper() or w[0].isdigit() or w.lower() in CALENDAR
        )
    )
    values = frozenset(_NUMBER.findall(text.lower()))
    persons = frozenset(PERSONS[p] for w in stems if (p := w.split("'")[0]) in PERSONS)
    return _Features(negated, values, frozenset(content), marked, tuple(stems), named, persons)


def _span_of(stems: tuple[str, ...], changed: frozenset[str]) -> bool:
    at = [i for i, w in enumerate(stems) if w in changed]
    return not at or at[-1] - at[0] + 1 == len(at)


def _judged(f: _Features, g: _Features) -> str | None:
    """``same-fact`` (:func:`same_fact`), ``contradiction`` or ``revision``
    (:func:`revision_rule`) or None, for a text of features ``f`` against one of ``g``."""
    if f.persons and g.persons and not f.persons & g.persons:
        return None  # about other persons: "I like tea" / "She likes tea"
    if f.negated == g.negated and f.values == g.values and f.content and f.content == g.content:
        # the same words with names or values in another order may be another fact: "Bob owes
        # Alice" is not "Alice owes Bob", "from Tuesday to Monday" not "from Monday to Tuesday"
        common = set(f.named) & set(g.named)
        same_order = [x for x in f.named if x in common] == [x for x in g.named if x in common]
        return "same-fact" if same_order else None
    a, b = f.content, g.content
    na, nb = f.values, g.values
    if (f.negated != g.negated or (na and nb and na != nb)) and len(a ^ b) <= 1:
        return "contradiction"
    if f.marked:
        added, removed = a - b, b - a
        if (
            len(added) <= 2
            and len(removed) <= 2
            and (added or removed or (na and na != nb))
            and len(a & b) >= max(2, len(b) / 2)
            and _span_of(f.stems, added)
            and _span_of(g.stems, removed)
        ):
            return "revision"
    return None


def _may_be_judged(f: _Features, other: str) -> bool:
    """Whether :func:`_judged` may find a rule: no rule lets more than two of the text's
    content words (each a substring of a word of ``other``) be missing from ``other``."""
    if len(f.content) < 3:
        return True
    lowered = other.lower()
    missing = (word for word in f.content if word not in lowered)
    return len(list(itertools.islice(missing, 3))) < 3  # stops at the third missing word


@dataclass(frozen=True)
class Gate:
    """A threshold gate (the Vestige preset by default) and the lossless decision on top.

    Parameters
    ----------
    reinforce, update : float
        The thresholds of the REINFORCE and UPDATE bands (``update <= reinforce``).
    guard : bool
        When both texts are given to :meth:`decide`, never REINFORCE a text that
        :func:`contradicts` its nearest memory (it UPDATEs instead).
    floor : float
        :meth:`judge` compares texts with the candidates above this similarity (default 0.35:
        rewordings and corrections are often far less similar than the thresholds).
    lexical : bool
        Whether :meth:`judge` compares texts at all; ``False`` with thresholds of 1 is the
        ``off`` preset (every text a new memory).
    preset : str
        Name of the preset or origin (``"vestige"``, ``"off"``, ``"fitted"``, ``"custom"``).
    params : mapping
        Parameters of a fitted gate (e.g. its macro-F1 and number of pairs), kept with it.
    judged_by : callable, optional
        A custom judge ``judged_by(text, candidates) -> JudgeResult`` (e.g. a language or NLI
        model) asked before the offline rules; its answer None leaves the decision to them.
        Only its name is saved (:meth:`to_dict`).
    """

    reinforce: float = 0.92
    update: float = 0.75
    guard: bool = True
    floor: float = 0.35
    lexical: bool = True
    preset: str = "vestige"
    params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    judged_by: Callable[[str, Sequence[Candidate]], JudgeResult] | None = None

    def __post_init__(self) -> None:
        if self.judged_by is not None and not callable(self.judged_by):
            raise TypeError(f"Gate judged_by must be callable, got {self.judged_by!r}")
        for name in ("reinforce", "update", "floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise TypeError(f"Gate {name} threshold must be a number, got {value!r}")
            if not math.isfinite(value) or not -1.0 <= value <= 1.0:
                raise ValueError(
                    f"Gate {name} threshold must be a finite number in [-1, 1], got {value!r}"
                )
        for name in ("guard", "lexical"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"Gate {name} must be a bool, got {getattr(self, name)!r}")
        if not isinstance(self.preset, str) or not self.preset:
            raise TypeError(f"Gate preset must be a non-empty str, got {self.preset!r}")
        if self.update > self.reinforce:
            raise ValueError(
                f"Gate update threshold ({self.update}) must not exceed the reinforce "
                f"threshold ({self.reinforce})"
            )

    # ------------------------------------------------------------------ presets
    @classmethod
    def off(cls) -> Gate:
        """A gate that never merges: every text becomes its own memory."""
        return cls(1.0, 1.0, lexical=False, preset="off")

    @classmethod
    def fitted(cls, reinforce: float, update: float, **params: Any) -> Gate:
        """Thresholds fitted on labelled pairs (:func:`memlab.fit.gating.fit_gate`), with their
        fit statistics."""
        return cls(float(reinforce), float(update), preset="fitted", params=dict(params))

    # ------------------------------------------------------------------ threshold bands
    def band(self, similarity: float) -> Decision:
        """The threshold band of one similarity: REINFORCE, UPDATE or CREATE."""
        s = float(similarity)
        if math.isnan(s):
            raise ValueError("similarities contain NaN")
        if s > self.reinforce:
            return Decision.REINFORCE
        return Decision.UPDATE if s > self.update else Decision.CREATE

    def decide(
        self, similarity: float | None, text: str | None = None, nearest_text: str | None = None
    ) -> Decision:
        """The threshold band of one text; ``None`` (an empty store) always creates. With
        ``guard``, a REINFORCE between contradicting texts becomes an UPDATE."""
        if similarity is None:
            return Decision.CREATE
        decision = self.band(similarity)
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

    # ------------------------------------------------------------------ the lossless decision
    def judge(
        self, text: str, candidates: Sequence[Candidate], entity: str | None = None
    ) -> Verdict:
        """The lossless decision for ``text`` given its nearest memories, best first.

        After a custom judge, the candidates above ``floor`` whose entity does not differ are
        tried in order: the first of the same fact is REINFORCEd, the first ``text`` revises
        (:func:`revision_rule`) is
        SUPERSEDEd. Otherwise the nearest above ``update`` is RELATED, or the text CREATEd.
        """
        if not candidates:
            return Verdict(Decision.CREATE, None, None, "novel")
        nearest = candidates[0]
        if self.judged_by is not None:
            verdict = self._custom(text, candidates)
            if verdict is not None:
                return verdict
        if not self.lexical and self.reinforce >= 1.0 and self.update >= 1.0:
            return Verdict(Decision.CREATE, None, nearest.similarity, "off", Decision.CREATE)
        if self.lexical:
            mine = _features(text)
            for i, c in enumerate(candidates):
                if c.similarity <= self.floor:
                    break
                if entity is not None and c.entity is not None and c.entity != entity:
                    continue
                band = self.band(c.similarity)
                judged = _may_be_judged(mine, c.text) and _judged(mine, _features(c.text))
                rule = _subject_kept(judged or None, text, c.text)
                if rule == "same-fact":
                    return Verdict(Decision.REINFORCE, i, c.similarity, rule, band)
                if rule is not None:
                    return Verdict(Decision.SUPERSEDE, i, c.similarity, rule, band)
        elif self.decide(nearest.similarity, text, nearest.text) is Decision.REINFORCE:
            band = Decision.REINFORCE
            return Verdict(Decision.REINFORCE, 0, nearest.similarity, "threshold", band)
        band = self.band(nearest.similarity)
        if band is not Decision.CREATE:
            return Verdict(Decision.RELATED, 0, nearest.similarity, "related", band)
        return Verdict(Decision.CREATE, None, nearest.similarity, "novel", band)

    def _custom(self, text: str, candidates: Sequence[Candidate]) -> Verdict | None:
        """The custom judge's answer as a verdict, checked (None: the rules decide)."""
        name = _name_of(self.judged_by)
        answer = self.judged_by(text, candidates)  # type: ignore[misc]
        if answer is None:
            return None
        decision, index = answer if isinstance(answer, tuple) else (answer, 0)
        if not isinstance(decision, Decision) or decision is Decision.UPDATE:
            raise ValueError(
                f"judge {name} returned {decision!r}; expected a Decision other than UPDATE"
            )
        if decision is Decision.CREATE:
            return Verdict(decision, None, candidates[0].similarity, f"judge:{name}")
        if isinstance(index, bool) or not isinstance(index, int):
            raise ValueError(f"judge {name} returned candidate {index!r}; expected an int")
        if not 0 <= index < len(candidates):
            raise ValueError(
                f"judge {name} returned candidate {index}; it was given {len(candidates)}"
            )
        sim = candidates[index].similarity
        return Verdict(decision, index, sim, f"judge:{name}", self.band(sim))

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        return {
            "reinforce": float(self.reinforce),
            "update": float(self.update),
            "guard": self.guard,
            "floor": float(self.floor),
            "lexical": self.lexical,
            "preset": self.preset,
            "params": dict(self.params),
            "judged_by": None if self.judged_by is None else _name_of(self.judged_by),
        }

    @classmethod
    def from_dict(
        cls,
        source: Mapping[str, Any],
        *,
        judged_by: Callable[[str, Sequence[Candidate]], JudgeResult] | None = None,
    ) -> Gate:
        """The gate :meth:`to_dict` wrote. A gate saved with a custom judge needs it given
        again (``judged_by``): code is never loaded from a saved name, and silently judging
        by the offline rules instead would change what the store does."""
        saved = source.get("judged_by")
        if saved is not None and judged_by is None:
            raise ValueError(
                f"this gate was saved with the custom judge {saved!r}, which cannot be stored; "
                "give it again: Gate.from_dict(saved, judged_by=...) or, for a store, "
                "MemoryStore(path, gate=Gate(judged_by=...))"
            )
        return cls(
            reinforce=source["reinforce"],  # checked as given: "false" is no False, "0.9" no 0.9
            update=source["update"],
            guard=source.get("guard", True),
            floor=source.get("floor", 0.35),
            lexical=source.get("lexical", True),
            preset=source.get("preset", "custom"),
            params=dict(source.get("params") or {}),
            judged_by=judged_by,
        )


def _name_of(judge: Any) -> str:
    """A judge's importable-looking name (module.qualname), for records and messages."""
    qualname = getattr(judge, "__qualname__", type(judge).__qualname__)
    return f"{getattr(judge, '__module__', None) or type(judge).__module__}.{qualname}"


def labels_from_scores(
    scores: ArrayLike, reinforce_at: float = 4.5, update_at: float = 2.5
) -> NDArray[np.int64]:
    """:class:`Band` codes of graded similarity scores (STS-B's 0-5 scale by default): at or
    above ``reinforce_at`` REINFORCE, at or above ``update_at`` UPDATE, else CREATE."""
    s = np.asarray(scores, dtype=float)
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    return np.where(
        s >= reinforce_at, Band.REINFORCE, np.where(s >= update_at, Band.UPDATE, Band.CREATE)
    ).astype(np.int64)


__all__ = [
    "Band",
    "Candidate",
    "DECISIONS",
    "Decision",
    "Gate",
    "JudgeResult",
    "Verdict",
    "revision_rule",
    "same_fact",
    "contradicts",
    "has_negation",
    "labels_from_scores",
    "numbers",
    "words",
]
