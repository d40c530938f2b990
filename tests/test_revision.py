"""Which slots two texts change (:func:`memlab.revision.changed_slots`), on texts written for
these tests: the gate's test that a contradiction is between two values of one subject."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.revision import changed_slots, outdates, read

DISTINCT = [
    # another person (possessive subject), another number
    ("Anna's phone number is 555-0101.", "Omar's phone number is 555-0177."),
    # another modifier of the subject
    ("The test cluster has 8 nodes.", "The prod cluster has 24 nodes."),
    ("My brother works at Acme.", "My sister works at Globex."),
    # two name slots changed
    ("The London office opens at 8:00.", "The Paris office opens at 9:00."),
    # another attribute of the same person
    ("Maya's favourite colour is green.", "Maya's favourite food is ramen."),
    ("Alice's partner is Sam.", "Alice's child is Leo."),
    # another person, the same date; another leader (ambiguous: both stay, nothing replaced)
    ("Alice's birthday is on May 3.", "Bob's birthday is on May 3."),
    ("Alice leads the data team.", "Bob leads the data team."),
    # a place that scopes the fact is not an aside
    ("In Munich, the rent is 1,200 euros.", "In Berlin, the rent is 900 euros."),
    # a word inserted into the subject's phrase
    ("Tom's birthday is on May 2.", "Tom's daughter Eva has her birthday on May 30."),
    # another head after the same opening word, its value in the same run of tokens
    ("Team standup is at 9am on Mondays.", "Team retro is at 4pm on Fridays."),
    ("Sprint planning is on Monday at 10am.", "Sprint review is on Friday at 3pm."),
    # another one-letter label beside another number
    ("Server A has 16 GB of RAM.", "Server B has 32 GB of RAM."),
    # another word at the end of the value's slot; one word for another between the same words
    ("Dr. Lee is my cardiologist.", "Dr. Kim is my dermatologist."),
    ("I meet my therapist every Thursday.", "I meet my tutor every Monday."),
    # a label joined to its number by a hyphen is one name: another host, not another value
    ("db-prod-03 has 64 GB of RAM.", "db-prod-04 has 128 GB of RAM."),
    # names in any script are names: another person, another city
    ("Zoë's flight lands at 9:40.", "Søren's flight lands at 11:05."),
    ("The Zürich office opens at 8:00.", "The Málaga office opens at 9:00."),
]
SAME_SUBJECT = [
    ("The cache holds 2 GB.", "Now the cache holds 8 GB."),
    ("The API rate limit is 100 per minute.", "The API rate limit is 250 per minute."),
    ("Server A has 16 GB of RAM.", "Server A has 32 GB of RAM."),
    ("The standup is at 9:30 on Mondays.", "The standup is at 10:00 on Mondays."),
    ("We use GPT-4 for summaries.", "We use GPT-5 for summaries now."),
    ("My dentist is Dr. Müller.", "My dentist is Dr. Möller now."),
]


@pytest.mark.parametrize(("old", "new"), DISTINCT)
def test_a_fact_about_another_subject_changes_a_subject_or_two_values(old: str, new: str) -> None:
    values, subjects = changed_slots(old, new)
    assert subjects or values > 1


@pytest.mark.parametrize(("old", "new"), SAME_SUBJECT)
def test_another_value_of_one_subject_changes_one_value_slot(old: str, new: str) -> None:
    assert changed_slots(old, new) == (1, 0)


@pytest.mark.parametrize(
    ("old", "new", "flagged"),
    [
        # another value in other words: flagged, though the gate keeps both (other words)
        ("The billing service runs on PostgreSQL 13.", "Billing is on PostgreSQL 15 now.", True),
        ("Our standup is at 9:30.", "Standup got pushed to 10:15.", True),
        # an additive word: a fact beside the old one
        ("I follow the Seattle Sounders.", "I follow the Portland Timbers too.", False),
        ("I follow the Seattle Sounders.", "I follow the Portland Timbers as well.", False),
        # another subject
        ("My sister lives in Paris.", "My brother lives in Rome.", False),
        ("db-prod-03 has 64 GB of RAM.", "db-prod-04 has 128 GB of RAM.", False),
        ("Our office is in São Paulo.", "Our office is in Zürich now.", True),
    ],
)
def test_outdates_one_value_of_the_same_subject_and_nothing_added(
    old: str, new: str, flagged: bool
) -> None:
    assert outdates(new, old) is flagged
    assert not outdates(old, old)  # no value changed


def test_distinct_facts_change_two_slots() -> None:
    assert changed_slots("The test cluster has 8 nodes.", "The prod cluster has 24 nodes.") == (
        1,
        1,
    )
    assert (
        changed_slots("The London office opens at 8:00.", "The Paris office opens at 9:00.")[0] == 2
    )


def test_a_value_of_one_fact_of_two_leaves_the_other_out() -> None:
    """The new text revises the demo's day and says nothing of the release's."""
    old = "The release is on Friday and the demo is on Thursday."
    assert changed_slots(old, "The demo moved to Wednesday.")[1] >= 1
    assert changed_slots(old, "The release is on Monday and the demo is on Thursday.") == (1, 0)


def test_reading_the_structure() -> None:
    r = read("Since the audit, Dr. Moreau keeps 90 days on Fridays.")
    kinds = {t.raw: t.kind for t in r.tokens}
    assert "audit" not in kinds  # the fronted adverbial is an aside
    assert kinds == {
        "Dr": "name",
        "Moreau": "name",
        "keeps": "word",
        "90": "number",
        "days": "word",
        "Fridays": "date",
    }
    assert read("Hey Jon, the iOS app is out!").tokens[0].raw == "iOS"  # Jon is addressed
    assert read("We raised the cache to 4 GB.").change == {"rais"}


_MODIFIERS = st.sampled_from("staging production test backup primary mobile EU US Linux".split())
_NOUNS = st.sampled_from("cluster server app database queue office".split())


@settings(max_examples=300, deadline=None)
@given(_MODIFIERS, _MODIFIERS, _NOUNS, st.integers(1, 999), st.integers(1, 999))
def test_another_subject_is_a_changed_subject_either_way(
    a: str, b: str, noun: str, m: int, n: int
) -> None:
    old, new = f"The {a} {noun} has {m} nodes.", f"The {b} {noun} has {n} nodes."
    if a != b:
        assert changed_slots(old, new)[1] and changed_slots(new, old)[1]
    elif m != n:  # the same subject, another value
        assert changed_slots(old, new) == changed_slots(new, old) == (1, 0)
