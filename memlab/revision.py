"""Recognising a paraphrased revision of a fact: the same frame, another value in one slot.

A revision keeps the subject and attribute of a fact and changes its value ("My rent is
$1,850" -> "The landlord raised my rent to $2,100"); a distinct fact changes the subject as
well ("The staging Redis uses port 6380" -> "The production Redis uses port 6379"); an
additive fact says so ("also", "too", "as well"). Without a parser, a text is read as a
sequence of *tokens*: lightly stemmed content words and *values* (numbers, dates, day and
month names, capitalised names). Tokens both texts share are the *frame*; the runs of tokens
between them are *slots*, and a run of the old text and one of the new text that sit next to
the same shared token are the same slot. :func:`revises` calls the new text a revision when

- both state facts alike: no question or exclamation, at most two sentences (a turn of chat
  is not a fact to revise), no additive word in the new text, both or neither a rule ("Never
  run migrations on Fridays" is no new value of "The backup runs at 2"), the same persons;
- the old text's tokens, its vanished values aside, are at least a third shared, at least two
  of them (one of a short frame), and at most three of them are missing from the new text;
- a number or date of the old text is replaced in its slot by one of the same kind, or a name
  of the old text is gone and another is new (names may move: "Leadership picked Valencia"),
  or the new text ends what the old says: a negation or an ending verb whose next tokens in
  its clause are mostly the old text's ("quit smoking cigarettes", "cancelled Crunch");
- and the subject is the same: never two value slots ("the iOS app ... 5.2" -> "the Android
  app ... 5.1"), never a value slot beside a changed subject (other opening words, "staging"
  -> "production"; another word after a possessive, "Alice's partner" -> "Alice's child"; a
  word inserted in the opening phrase, "Ravi's birthday" -> "Ravi's wife Meena's birthday";
  another word after the same first one, "Team standup" -> "Team retro"; another word at the
  end of the value's slot, "Dr. Lee is my cardiologist" -> "Dr. Kim is my dermatologist";
  one word for another between the same words, "I meet my therapist every Thursday" -> "I
  meet my tutor every Monday"; another one-letter label, "Server A" -> "Server B"),
  never another attribute of one name, however written ("the child of Alice Ito" -> "Alice
  Ito's partner"), never a number or date of the old text that the new one neither keeps nor
  revises in its slot (another fact of the old text: "The release is on Friday and the demo is
  on Thursday" -> "The demo moved to Wednesday"). A slot whose new run holds a verb of change
  ("took over") is the revision.

Anything the rules cannot decide stays in search.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from memlab.words import DISCOURSE_WORDS, FUNCTION_WORDS, NEGATIONS, REVISION_WORDS, has_negation

#: Words that add a fact beside an earlier one rather than replace it.
ADDITIVE_WORDS: frozenset[str] = frozenset(
    "also too additionally addition another besides plus extra added adding add adds well".split()
)
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
#: Words that open an imperative sentence: a rule or caveat, not a statement of a value.
DIRECTIVES: frozenset[str] = frozenset("never don't dont do always please avoid".split())
#: Pronouns of the second person: a text about "you" is not about "I" or "we".
SECOND_PERSON: frozenset[str] = frozenset("you your yours yourself you're you've you'd".split())
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


ENDING_VERBS = _forms(_ENDING)
CHANGE_VERBS = _forms(_VERB) | ENDING_VERBS
_TOKEN = re.compile(r"[A-Za-z](?:[A-Za-z']|-(?=[A-Za-z]))*|\d+(?:[.,:/]\d+)*|[.!?;:,]")
_PERSONS = SECOND_PERSON | set("i i'm i've i'd i'll me my mine myself we we're our ours us".split())
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
    additive: bool
    ending: bool  # a negation or an ending verb
    change: frozenset[str]  # roots of verbs of change
    ended: tuple[frozenset[str], ...]  # the tokens each negation or ending verb applies to
    question: bool  # a question or an exclamation: not a statement of a fact
    sentences: int
    imperative: bool  # a sentence opens with a directive ("Never ...", "Always ..."): a rule
    person: frozenset[int]  # the grammatical persons of its pronouns (1: I, my, we; 2: you)
    attributes: frozenset[tuple[str, str]]  # (name, attribute): "Alice's partner"


@functools.lru_cache(maxsize=1 << 14)
def read(text: str) -> Reading:
    """The tokens of ``text`` and its additive, ending and change words."""
    raw = _TOKEN.findall(text)
    tokens, additive, change, scopes, imperative = [], False, set(), [], False
    initial, aside, scope = True, False, None  # a sentence's start; a fronted adverbial
    for i, w in enumerate(raw):
        low = w.lower()
        if low in ".!?;:,":
            if not (low == "." and i and raw[i - 1].lower() in TITLES):
                initial, aside, scope = low != ",", False, None
            continue
        if initial and low in FRONTED and "," in raw[i:]:
            aside = True
        if aside:
            continue
        imperative |= initial and low in DIRECTIVES
        after = raw[i + 1] if i + 1 < len(raw) else ""
        if low in ADDITIVE_WORDS and (low != "well" or (i and raw[i - 1].lower() == "as")):
            additive = True
        if low in CHANGE_VERBS:
            change.add(_root(low))
        before = next((x.lower() for x in reversed(raw[:i]) if x != ","), "")
        n = len(tokens)
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
            root = low.removesuffix("'s") if name else _root(low)  # "Ito's" is the name Ito
            tokens.append(Token(root, "name" if name else "word", w))
        if low in ENDING_VERBS or low in NEGATIONS or low.endswith("n't"):
            scope = []  # the next three tokens of the clause are what it negates or ends
            scopes.append(scope)
        elif scope is not None and len(tokens) > n and len(scope) < 3:
            scope.append(tokens[-1].root)
        initial = False
    ending = has_negation(text) or any(w.lower() in ENDING_VERBS for w in raw)
    sentences = len(re.findall(r"(?<!\b[DMSJdmsj][rst])(?<!Mrs)[.!?]+(?=\s+\S)", text)) + 1
    return Reading(
        tuple(tokens),
        additive,
        ending,
        frozenset(change),
        tuple(frozenset(s) for s in scopes),
        "?" in text or "!" in text,
        sentences,
        imperative,
        frozenset(2 if w in SECOND_PERSON else 1 for w in map(str.lower, raw) if w in _PERSONS),
        _attributes(raw),
    )


def _attributes(raw: list[str]) -> frozenset[tuple[str, str]]:
    """The (name, attribute) pairs a text names: "Alice Ito's partner" and "the partner of
    Alice Ito" both give ("ito", "partner"), the name by its last word."""
    out = set()
    for i, w in enumerate(raw[:-1]):
        if w[0].isupper() and w.lower().endswith("'s"):
            after = next((x for x in raw[i + 1 :] if x.lower() not in _SKIP), "")
            if after[:1].islower():
                out.add((w.lower().removesuffix("'s"), _root(after)))
        elif w == "of" and i and raw[i - 1][:1].islower() and raw[i + 1][:1].isupper():
            j = i + 1
            while j + 1 < len(raw) and raw[j + 1][:1].isupper():
                j += 1
            out.add((raw[j].lower().removesuffix("'s"), _root(raw[i - 1])))
    return frozenset(out)


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


def _values(tokens: tuple[Token, ...]) -> dict[str, str]:
    return {t.root: t.kind for t in tokens if t.kind != "word"}


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


def _holds(run: _Run, kind: str) -> bool:
    return any((t.kind == "word") == (kind == "word") for t in run.tokens)


def revises(new: str, old: str) -> bool:
    """Whether ``new`` states another value of the fact ``old`` states (see the module)."""
    a, b = read(old), read(new)
    if b.additive or a.question or b.question or max(a.sentences, b.sentences) > 2:
        return False
    if a.imperative != b.imperative:  # a rule is not a value of a statement, nor the reverse
        return False
    if len(a.person | b.person) == 2 and a.person != b.person:  # "I ..." -> "you ..."
        return False
    if {n for n, _ in a.attributes - b.attributes} & {n for n, _ in b.attributes - a.attributes}:
        return False  # another attribute of the same name: "Alice's child" -> "Alice's partner"
    va, vb = _values(a.tokens), _values(b.tokens)
    gone = {va[v] for v in va.keys() - vb.keys()}
    new_kinds = {vb[v] for v in vb.keys() - va.keys()}
    frame = {t.root for t in a.tokens} - (va.keys() - vb.keys())  # the words kept or paraphrased
    shared = frame & {t.root for t in b.tokens}
    # a revision changes one slot: a paraphrase may drop a few words, not two thirds of the
    # statement or four of its words, and one shared word is no evidence of the same subject
    # and attribute unless it is the whole frame ("My monthly rent" -> "my rent")
    need = min(2, (len(frame) + 1) // 2) or 1  # two shared tokens, or half a short frame
    if len(shared) < need or 3 * len(shared) < len(frame) or len(frame - shared) > 3:
        return False
    # the new text ends what the old says: a negation or ending verb whose next tokens are
    # mostly the old text's ("quit smoking cigarettes", not "never run schema migrations")
    ends = not a.ending and any(2 * len(s & shared) >= len(s) > 0 for s in b.ended)
    value_slots, other_slots = changed_slots(old, new)
    # a number or date is compared in its slot; a name may move ("Leadership picked Valencia")
    if not ((gone & new_kinds and value_slots == 1) or "name" in gone & new_kinds or ends):
        return False
    return value_slots <= 1 and not (value_slots and other_slots)


__all__ = ["ADDITIVE_WORDS", "CALENDAR", "Reading", "Token", "changed_slots", "read", "revises"]
