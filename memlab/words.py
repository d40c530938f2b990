"""The vocabulary of the gate and of revision recognition: word and number tokens, negation, and
the word lists that carry no content of their own (a tiny module both read, so neither imports the
other for it)."""

from __future__ import annotations

import functools
import re
import unicodedata

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?|[^\x00-\x7f\w\s]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")

#: Words that negate a statement ("use X" vs "never use X"); ``n't`` contractions count too.
NEGATIONS: frozenset[str] = frozenset(
    "not no never none nobody nothing neither nor without cannot dont avoid stop".split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``: letters and digits with an apostrophe suffix, and
    symbols one by one ("€", "✓"; not punctuation such as dashes and quotes)."""
    return [w for w in _WORD.findall(text.lower()) if unicodedata.category(w[0])[0] != "P"]


def numbers(text: str) -> set[str]:
    """The numbers written in ``text`` ("5432", "2.5", "03" ...)."""
    return set(_NUMBER.findall(text))


#: Texts whose lexical features are memoised (the gate compares each stored text with many new
#: ones; the features are pure functions of the text).
_CACHED_TEXTS = 1 << 14


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def has_negation(text: str) -> bool:
    """Whether a text negates: a negation word or an ``n't`` contraction (don't, isn't...)."""
    return any(w in NEGATIONS or w.endswith("n't") for w in words(text))


#: Words that carry no content of their own: articles, pronouns, auxiliaries, conjunctions and
#: the most grammatical prepositions. Words of direction, order or quantity ("before", "after",
#: "on", "off", "up", "more", "all") change what a statement says and count as content.
FUNCTION_WORDS: frozenset[str] = frozenset(
    """a an the and or but if because while so that then than as of to for with at by from
    into about am is are was were be been being have has had having do does did doing will
    would shall should can could may might must i me my myself mine we us our ours ourselves
    you your yours yourself yourselves he him his himself she her hers herself it its itself
    they them their theirs themselves this that these those who whom whose which what there
    here just s t d ll m o re ve y let get got i'm it's that's there's""".split()
)
#: Words that report a statement without adding to it ("Note:", "remember that", "mentioned").
DISCOURSE_WORDS: frozenset[str] = frozenset(
    """note noted notes remember reminder recall mention mentioned mentions said say says told
    tell fyi btw again really indeed please keep mind heard know""".split()
)
#: Words that mark a statement as a revision of an earlier one.
REVISION_WORDS: frozenset[str] = frozenset(
    """correction corrected correct update updated now changed change changes instead actually
    anymore longer moved switched revised rather""".split()
)
#: Personal pronouns by the person they name (read on light stems: "ours" is "our").
_PRONOUNS = "i me my mine, we us our, you your, he him his, she her, it its, they them their"
PERSONS: dict[str, str] = {w: p.split()[0] for p in _PRONOUNS.split(",") for w in p.split()}
