"""Which slots of a fact two texts change: the gate's test that a contradiction is between
two values of one subject, not between two subjects.

Without a parser, a text is read as a sequence of *tokens*: lightly stemmed content words and
*values* (numbers, dates, day and month names, capitalised names). Tokens both texts share are
the *frame*; the runs of tokens between them are *slots*, and a run of the old text and one of
the new text that sit next to the same shared token are the same slot.
:func:`changed_slots` counts the value slots that changed and the subject slots that changed:
other opening words ("staging" -> "production"); another word after a possessive ("Alice's
partner" -> "Alice's child"); a word inserted in the opening phrase; another word after the
same first one ("Team standup" -> "Team retro") or at the end of the value's slot ("Dr. Lee is
my cardiologist" -> "Dr. Kim is my dermatologist"); one word for another between the same
words ("I meet my therapist every Thursday" -> "I meet my tutor every Monday"); another
one-letter label ("Server A" -> "Server B"); a number or date of the old text the new one
neither keeps nor revises in its slot (another fact of the old text: "The release is on Friday
and the demo is on Thursday" -> "The demo moved to Wednesday"). A slot whose new run holds a
verb of change ("took over") is the revision, not another subject.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from memlab.words import DISCOURSE_WORDS, FUNCTION_WORDS, REVISION_WORDS

#: Month and weekday names (values even when written in lower case).
CALENDAR: frozenset[str] = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday weekly daily monthly nightly biweekly yearly""".split()
)
_VERB = "upgrade downgrade raise bump lower push move postpone reschedule replace migrate"
_VERB += " rename switch hand transfer increase decrease reduce extend shorten change swap"
_VERB += " take took taken become became over"
_ENDING = "quit stop cancel close leave left end finish complete cease sell sold retire drop"
#: Number words (values like digits).
NUMBER_WORDS: frozenset[str] = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty fifty".split()
)
#: Greetings and interjections: a name beside one (or before "!") addresses someone.
GREETINGS: frozenset[str] = frozenset(
    "hey hi hello thanks thank wow yay congrats congratulations dear bye oh yeah".split()
)
#: Titles written with a full stop that does not end a sentence ("Dr. Patel").
TITLES: frozenset[str] = frozenset("dr mr mrs ms st prof jr sr".split())
#: Words that open a fronted adverbial ("After the audit, ..."): up to its comma it is an aside.
FRONTED: frozenset[str] = frozenset(
    "after with since during because when once following before until while thanks due".split()
)


def _forms(verbs: str) -> frozenset[str]:
    out = set()
    for v in verbs.split():
        base = v[:-1] if v.endswith("e") else v
        double = v + v[-1] if re.search(r"[^aeiou][aeiou][bdglmnpt]$", v) else v
        out |= {v, v + "s", base + "ed", base + "ing", double + "ed", double + "ing", v + "d"}
    return frozenset(out)


CHANGE_VERBS = _forms(_VERB) | _forms(_ENDING)
# a label joined to its number by a hyphen is one name: "db-prod-03", "GPT-4", "us-east-1"
_TOKEN = re.compile(  # [^\W\d_]: a letter of any script
    r"[^\W\d_](?:[^\W\d_]|'|-(?=[^\W\d_]))*(?:-\d+(?:-?[^\W_])*)?|\d+(?:[.,:/]\d+)*|[.!?;:,]"
)
_ADDITIVE = re.compile(r"\b(?:also|too|as well|additionally|besides)\b", re.IGNORECASE)
_SKIP = FUNCTION_WORDS | DISCOURSE_WORDS | REVISION_WORDS | {"on", "in", "out", "up"}


def _root(word: str) -> str:
    """A crude stem that joins the inflections of one word (rents/rent, logging/logs/log,
    monthly/month, bundler/bundled, smoke/smoking)."""
    w = word.lower().removesuffix("'s")
    for suffix in ("ly", "ing", "ed", "er", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    w = w[:-1] if len(w) > 3 and w.endswith("e") else w
    return w[:-1] if len(w) > 3 and w[-1] == w[-2] else w


class Token(NamedTuple):
    root: str
    kind: str  # "word", "number", "date" or "name"
    raw: str


class Reading(NamedTuple):
    tokens: tuple[Token, ...]
    change: frozenset[str]  # roots of verbs of change


@functools.lru_cache(maxsize=1 << 14)
def read(text: str) -> Reading:
    """The tokens of ``text`` and its verbs of change."""
    raw = _TOKEN.findall(text)
    tokens: list[Token] = []
    change: set[str] = set()
    initial, aside = True, False  # a sentence's start; a fronted adverbial
    for i, w in enumerate(raw):
        low = w.lower()
        if low in ".!?;:,":
            if not (low == "." and i and raw[i - 1].lower() in TITLES):
                initial, aside = low != ",", False
            continue
        if initial and low in FRONTED and "," in raw[i:]:
            aside = True
        if aside:
            continue
        after = raw[i + 1] if i + 1 < len(raw) else ""
        if low in CHANGE_VERBS:
            change.add(_root(low))
        before = next((x.lower() for x in reversed(raw[:i]) if x != ","), "")
        vocative = raw[i - 1 : i] == [","] and after in ("", ".", "?", "!") and low not in TITLES
        addressed = before in GREETINGS or after == "!" or vocative
        if low in GREETINGS or (w[0].isupper() and addressed):
            continue  # a greeting or the name of whom it addresses ("Glad I could help, Sam.")
        if w[0].isdigit() or low in NUMBER_WORDS:
            tokens.append(Token(low, "number", w))
        elif low in CALENDAR or low.removesuffix("s") in CALENDAR:
            tokens.append(Token(low.removesuffix("s"), "date", w))
        elif (len(w) > 1 or not initial and w != "I") and w.isupper():  # "US", "IT", "Server B"
            tokens.append(Token(low, "name", w))
        elif low not in _SKIP and not low.endswith("n't") and not low.startswith("i'"):
            capitals = [c.isupper() for c in w]
            name = any(capitals[1:]) or (capitals[0] and (not initial or after[:1].isupper()))
            name = name or any(c.isdigit() for c in w)
            root = low.removesuffix("'s") if name else _root(low)  # "Ito's" is the name Ito
            tokens.append(Token(root, "name" if name else "word", w))
        initial = False
    return Reading(tuple(tokens), frozenset(change))


class _Run(NamedTuple):
    tokens: tuple[Token, ...]
    left: str  # the shared root before the run ("^" at the start)
    right: str  # the shared root after it ("$" at the end)
    possessed: bool  # the token before it is a possessive ("Alice's [partner]")


def _runs(tokens: tuple[Token, ...], shared: set[str]) -> list[_Run]:
    out, current, left, possessive = [], [], "^", False
    for t in (*tokens, Token("$", "word", "")):
        if t.root in shared or t.root == "$":
            if current:
                out.append(_Run(tuple(current), left, t.root, possessive))
            current, left, possessive = [], t.root, t.raw.lower().endswith("'s")
        else:
            current.append(t)
    return out


def changed_slots(old: str, new: str) -> tuple[int, int]:
    """(slots whose value changed, subject slots that changed) between ``old`` and ``new``
    (see the module docstring). A value slot holds a value on both sides; a run of verbs of
    change alone ("The service mesh" -> "We upgraded the mesh") changes no subject."""
    a, b = read(old), read(new)
    shared = {t.root for t in a.tokens} & {t.root for t in b.tokens}
    old_runs, new_runs = _runs(a.tokens, shared), _runs(b.tokens, shared)
    value_slots = subject_slots = 0
    opens = [runs[0].tokens for runs in (old_runs, new_runs) if runs and runs[0].left == "^"]
    if len(opens) == 2 and not any(all(t.root in a.change | b.change for t in o) for o in opens):
        kinds = [{t.kind for t in o} for o in opens]  # both open with words or names of their
        subject_slots += all(k & {"word", "name"} for k in kinds)  # own: "The EU/US ..."
    for r in old_runs:  # a modifier the new text drops counts when it holds a value
        dropped = (r.left, r.right) == tuple(t.root for t in b.tokens[:2])
        subject_slots += dropped and _holds(r, "value")
    revised: set[str] = set()  # the old text's tokens in the value slots the new text changes
    changes = a.change | b.change
    for q in new_runs:
        changing = all(t.root in b.change for t in q.tokens)
        if (q.left, q.right) == tuple(t.root for t in a.tokens[:2]):
            subject_slots += not changing
            continue
        same = [r for r in old_runs if (r.left == q.left != "^") or (r.right == q.right != "$")]
        if not same:
            continue
        swapped = [r for r in same if (r.left, r.right) == (q.left, q.right) != ("^", "$")]
        if swapped and q.left != "^" and not any(_holds(x, "value") for x in (swapped[0], q)):
            # one word for another between the same words: "meet my [therapist] every"
            subject_slots += not any(t.root in changes for t in (*swapped[0].tokens, *q.tokens))
            continue
        r = next((r for r in same if _holds(r, "value")), same[0])  # the value's slot first
        value = _holds(r, "value") and _holds(q, "value")
        value_slots += value
        if value:
            revised |= {t.root for t in r.tokens}
        owned = r.possessed and q.possessed and r.tokens[0].kind == q.tokens[0].kind == "word"
        # a word of its own after the opening word or at the end of a value's slot names
        # another thing: "Team [standup] at 9", "Dr. Lee is my [cardiologist]"
        heads, tails = (r.tokens[0], q.tokens[0]), (r.tokens[-1], q.tokens[-1])
        opening = r.left == q.left == a.tokens[0].root == b.tokens[0].root
        reheaded = (opening and _own_words(heads, changes)) or _own_words(tails, changes)
        relabelled = value and (reheaded or _relettered(r, q))  # "Server A" -> "Server B"
        subject_slots += (owned or relabelled) and not changing
    # a number or date the new text neither keeps nor revises in its slot belongs to another
    # fact of the old text ("The release is on Friday and the demo ..." -> "The demo moved ...")
    kept = {t.root for t in b.tokens} | revised
    left_out = [t for t in a.tokens if t.kind in ("number", "date") and t.root not in kept]
    subject_slots += any(not t.root.endswith("ly") for t in left_out)  # "monthly": a modifier
    return value_slots, subject_slots


def _own_words(pair: tuple[Token, Token], changes: frozenset[str]) -> bool:
    return all(t.kind == "word" and t.root not in changes for t in pair)


def _relettered(r: _Run, q: _Run) -> bool:
    """Whether a one-letter label ("Server A", "Plan B") of the slot is replaced."""
    old, new = (
        {t.root for t in run.tokens if t.raw.isalpha() and len(t.raw) == 1} for run in (r, q)
    )
    return bool(old and new and old != new)


def outdates(new: str, old: str) -> bool:
    """Whether ``new`` may state another value of the fact ``old`` states: one value slot
    changed, no subject slot, no word that adds a fact ("also", "too"). Looser than the gate's
    contradiction test (the same content words): search only flags hits with it."""
    return changed_slots(old, new) == (1, 0) and not _ADDITIVE.search(new)


def _holds(run: _Run, kind: str) -> bool:
    return any((t.kind == "word") == (kind == "word") for t in run.tokens)


__all__ = ["CALENDAR", "Reading", "Token", "changed_slots", "read"]
