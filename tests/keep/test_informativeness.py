from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.informativeness import (
    MAX_CONTENT_IMPORTANCE,
    STOP_WORDS,
    Informativeness,
    TermStats,
    content_importance,
    content_words,
    entities,
    informativeness,
    numbers,
)

CORPUS = [
    "I went to the shop today.",
    "It was a nice day and we had fun.",
    "Melanie ran the Lisbon marathon in 3 hours 41 minutes on 12 May 2023.",
    "Yeah, that is so true!",
    "Caroline is researching adoption agencies for LGBTQ couples.",
    "We had fun today.",
]

words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "the", "and"]), max_size=12)


def test_scale_is_documented_and_in_unit_interval() -> None:
    stats = TermStats.from_texts(CORPUS)
    score = informativeness(CORPUS, stats)
    assert ((score >= 0) & (score < 1)).all()
    mass = Informativeness().mass(CORPUS, stats)
    np.testing.assert_allclose(score, mass / (mass + 30.0))
    assert informativeness(["the and of it"], stats)[0] == 0.0


def test_fact_dense_turns_outscore_small_talk() -> None:
    score = informativeness(CORPUS)
    marathon, agencies = score[2], score[4]
    small_talk = score[[0, 1, 3, 5]]
    assert min(marathon, agencies) > small_talk.max()


def test_idf_is_smoothed_and_unseen_words_count_as_rarest() -> None:
    stats = TermStats.from_texts(["red apple", "green apple", "red car"])
    np.testing.assert_allclose(
        stats.idf(stats.document_frequency(["apple", "car", "zebra"])),
        [np.log(4 / 3) + 1, np.log(4 / 2) + 1, np.log(4 / 1) + 1],
    )
    grown = stats.add(["blue car"])
    assert grown.n_docs == 4 and grown.df["car"] == 2 and stats.df["car"] == 1


def test_entities_and_numbers() -> None:
    text = "Yesterday Melanie met Jon at Lisbon. She paid 12.50 euros on 3 May."
    assert entities(text) == {"melanie", "jon", "lisbon", "may"}
    assert numbers(text) == {"12", "50", "3"}
    assert "i" not in entities("Then I said hi")


@given(words, st.sampled_from(["zyzzyva", "quetzal", "Okafor"]))
def test_adding_a_rare_word_never_lowers_the_score(base: list[str], rare: str) -> None:
    stats = TermStats.from_texts(CORPUS)
    text = " ".join(base)
    before, after = informativeness([text, f"{text} {rare}"], stats)
    assert after > before


def test_content_importance_never_reaches_protection() -> None:
    dense = " ".join(f"Word{i} {i}" for i in range(400))
    imp = content_importance([dense, "ok"])
    assert imp[0] < MAX_CONTENT_IMPORTANCE < 0.9 and imp[1] >= 0.0


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="not a single string"):
        informativeness("one text")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a string"):
        informativeness(["a", 3])
    with pytest.raises(ValueError, match="half_mass"):
        Informativeness(half_mass=0)
    with pytest.raises(TypeError, match="text must be a string"):
        content_words(None)  # type: ignore[arg-type]


def _entities_by_prefix(text: str) -> set[str]:
    """The definition, word by word: a capitalised word counts unless only blanks, or a
    sentence end and blanks, come before it."""
    import re

    found = set()
    for match in re.finditer(r"\w+", text):
        word, before = match.group(), text[: match.start()]
        first = not before.strip() or re.search(r"[.!?:;]\s*$", before)
        if word[:1].isupper() and word.lower() not in STOP_WORDS and not first:
            found.add(word.lower())
    return found


@given(
    st.lists(
        st.sampled_from(
            ["Ann", "bo", "The", "I", "É", "3", ".", "!", ";", ",", '"', " ", "\n", "(", "e.g."]
        ),
        max_size=30,
    )
)
def test_entities_follow_their_definition(parts: list[str]) -> None:
    text = "".join(parts)
    assert entities(text) == _entities_by_prefix(text)
