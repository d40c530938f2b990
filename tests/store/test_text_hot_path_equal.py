"""The per-text hot path of gated ingest equals its readable definitions, exactly.

The hashing embedder, the gate's lexical rules, the informativeness mass, the secret screen and
the keyword index's row count each have a fast path (a batch summed in one pass, features read
once per text, hints looked for once per text, a b-tree count). Each is checked here against a
straightforward reference, written as the code was before the fast paths (per text, per
candidate, per rule), on real texts: the LoCoMo conversation shipped with memlab (conv-30), seeded
recombinations of its words and seeded hypothesis text. Vectors must be
bit-identical (they are persisted in users' stores); verdicts, importances and redactions equal.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab import gate as gate_mod
from memlab import informativeness as inf
from memlab import secrets as sec
from memlab.datasets import dataset_path
from memlab.embed import HashingEmbedder
from memlab.eval.locomo import load_locomo
from memlab.gate import Candidate, Decision, Gate, Verdict, revision_rule, same_fact
from memlab.store import MemoryStore, corpus

# ----------------------------------------------------------------------------- real inputs


@functools.cache
def locomo_turns() -> tuple[str, ...]:
    path = dataset_path("locomo_conv30", source="shipped")
    assert path is not None
    return tuple(t.text for c in load_locomo(path) for t in c.turns)


@functools.cache
def bench_texts(n: int = 3000) -> tuple[str, ...]:
    """Seeded texts of 5-15 LoCoMo words in new orders: few words shared between unrelated texts,
    about 3 % said again (the reinforce path), 2 % an earlier text with one word changed."""
    words = sorted({w for t in locomo_turns() for w in t.split()})
    rng = np.random.default_rng(20000)
    out: list[str] = []
    for _ in range(n):
        u = rng.random()
        if out and u < 0.05:
            old = out[int(rng.integers(len(out)))].split()
            if u >= 0.03:
                old[int(rng.integers(len(old)))] = str(rng.choice(words))
            out.append(" ".join(old))
        else:
            out.append(" ".join(rng.choice(words, int(rng.integers(5, 16)))) + ".")
    return tuple(out)


CORPORA = ["locomo", "bench"]


def corpus_texts(name: str) -> list[str]:
    return list(locomo_turns() if name == "locomo" else bench_texts())


#: Text with what the rules look at: capitals after and before sentence ends, numbers, n't,
#: possessives, apostrophes, unicode letters and digits, repeated words, underscores.
WORDS = st.sampled_from(
    "the The a Bob bob's isn't don't not never now Correction: changed instead port 5432 "
    "5433 2.5 02:00 ipv6 rare7 Café café ＡＢＣ ² ٣ max_connections ß İstanbul x y x. ! ? ; : "
    "\n \t ,".split(" ")
)
TEXTS = st.lists(WORDS, min_size=0, max_size=30).map(" ".join) | st.text(max_size=80)


# ----------------------------------------------------------------------------- embedder


class ReferenceHashing:
    """The hashing embedder as written before the batched path: per text, ``np.unique`` of its
    feature ids, ``np.add.at`` of the words and n-grams, then of the bigrams."""

    def __init__(self, e: HashingEmbedder) -> None:
        self.e = e
        self.ids: dict[str, int] = {}
        self.bucket: list[int] = []
        self.value: list[float] = []
        self.words: dict[str, list[int]] = {}

    def slot(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(
            hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
        )
        return digest % self.e.dim, (1.0 if (digest >> 63) & 1 else -1.0)

    def fid(self, feature: str) -> int:
        if feature not in self.ids:
            self.ids[feature] = len(self.ids)
            bucket, sign = self.slot(feature)
            weight = {"w": self.e.word_weight, "b": self.e.bigram_weight}.get(
                feature[0], self.e.char_weight
            )
            self.bucket.append(bucket)
            self.value.append(sign * weight)
        return self.ids[feature]

    def word_ids(self, word: str) -> list[int]:
        if word not in self.words:
            ids = [self.fid("w:" + word)]
            if self.e.char_ngrams and self.e.char_weight > 0:
                padded = f" {word} "
                for n in self.e.char_ngrams:
                    ids.extend(
                        self.fid(f"c{n}:" + padded[i : i + n])
                        for i in range(max(len(padded) - n + 1, 0))
                    )
            self.words[word] = ids
        return self.words[word]

    def embed(self, docs: Sequence[str]) -> np.ndarray:
        if len(self.words) > self.e.MAX_CACHED_WORDS:
            self.__init__(self.e)  # the same feature numbering as the embedder's
        out = np.zeros((len(docs), self.e.dim), dtype=np.float64)
        rows, fids, counts, b_rows, b_cols, b_vals = [], [], [], [], [], []
        for r, text in enumerate(docs):
            words = re.findall(r"\w+", text.lower())
            if not words:
                continue
            ids: list[int] = []
            for w in words:
                ids.extend(self.word_ids(w))
            uniq, tf = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
            rows.append(np.full(len(uniq), r, dtype=np.int64))
            fids.append(uniq)
            counts.append(tf)
            if self.e.bigram_weight > 0:
                bigrams: dict[str, int] = {}
                for a, b in zip(words, words[1:], strict=False):
                    key = "b:" + a + " " + b
                    bigrams[key] = bigrams.get(key, 0) + 1
                for key, count in bigrams.items():
                    bucket, sign = self.slot(key)
                    b_rows.append(r)
                    b_cols.append(bucket)
                    b_vals.append(sign * self.e.bigram_weight * (1.0 + math.log(count)))
        bucket_of = np.asarray(self.bucket, dtype=np.int64)
        value_of = np.asarray(self.value, dtype=np.float64)
        if rows:
            fid = np.concatenate(fids)
            value = value_of[fid] * (1.0 + np.log(np.concatenate(counts)))
            np.add.at(out, (np.concatenate(rows), bucket_of[fid]), value)
        if b_rows:
            np.add.at(out, (np.asarray(b_rows), np.asarray(b_cols)), np.asarray(b_vals))
        m = out.astype(np.float32)
        norms = np.linalg.norm(m, axis=-1, keepdims=True)
        return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


SETTINGS = [
    {},
    {"dim": 64},
    {"dim": 8},  # every cell a sum of many features: the order of the sums shows
]


@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("kwargs", SETTINGS)
def test_hashing_vectors_are_bit_identical_on_real_texts(name: str, kwargs: dict) -> None:
    texts = corpus_texts(name)
    e = HashingEmbedder(**kwargs)
    ref = ReferenceHashing(HashingEmbedder(**kwargs))
    for size in (1, 7, 500):  # batches of several sizes, the caches carried over
        for i in range(0, min(len(texts), 40 * size), size):
            batch = texts[i : i + size]
            got, want = e.embed_documents(batch), ref.embed(batch)
            assert got.dtype == np.float32 and np.array_equal(got, want)
    for text in texts[:50]:
        assert np.array_equal(e.embed_query(text), ref.embed([text])[0])


def test_hashing_vectors_are_identical_across_cache_clears(monkeypatch) -> None:
    texts = corpus_texts("bench")
    monkeypatch.setattr(HashingEmbedder, "MAX_CACHED_WORDS", 300)
    monkeypatch.setattr(HashingEmbedder, "MAX_CACHED_BIGRAMS", 200)
    e, ref = HashingEmbedder(), ReferenceHashing(HashingEmbedder())
    for i in range(0, 2000, 100):
        assert np.array_equal(e.embed_documents(texts[i : i + 100]), ref.embed(texts[i : i + 100]))


@settings(max_examples=150)
@given(st.lists(st.lists(TEXTS, min_size=0, max_size=6), min_size=1, max_size=4))
def test_hashing_vectors_are_bit_identical_on_any_text(batches: list[list[str]]) -> None:
    e, ref = HashingEmbedder(dim=8), ReferenceHashing(HashingEmbedder(dim=8))
    for batch in batches:
        got = e.embed_documents(batch)
        assert got.shape == (len(batch), 8) and np.array_equal(got, ref.embed(batch))


# ----------------------------------------------------------------------------- gate


def reference_judge(g: Gate, text: str, candidates: list[Candidate]) -> Verdict:
    """:meth:`Gate.judge` of the lexical gate written with the definitions, per candidate."""
    if not candidates:
        return Verdict(Decision.CREATE, None, None, "novel")
    for i, c in enumerate(candidates):
        if c.similarity <= g.floor:
            break
        band = g.band(c.similarity)
        if same_fact(text, c.text):
            return Verdict(Decision.REINFORCE, i, c.similarity, "same-fact", band)
        rule = revision_rule(text, c.text)
        if rule is not None:
            return Verdict(Decision.SUPERSEDE, i, c.similarity, rule, band)
    band = g.band(candidates[0].similarity)
    if band is not Decision.CREATE:
        return Verdict(Decision.RELATED, 0, candidates[0].similarity, "related", band)
    return Verdict(Decision.CREATE, None, candidates[0].similarity, "novel", band)


def nearest_candidates(texts: list[str], k: int = 8) -> list[list[Candidate]]:
    v = HashingEmbedder().embed_documents(texts)
    sims = v @ v.T
    np.fill_diagonal(sims, -2.0)
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return [[Candidate(float(sims[i, j]), texts[j]) for j in row] for i, row in enumerate(top)]


@pytest.mark.parametrize("name", CORPORA)
@pytest.mark.parametrize("floor", [0.35, -1.0])
def test_judge_equals_the_rules_on_real_neighbours(name: str, floor: float) -> None:
    texts = corpus_texts(name)[:2000]
    g = Gate(floor=floor)
    rules = set()
    for text, cands in zip(texts, nearest_candidates(texts), strict=True):
        got = g.judge(text, cands)
        assert got == reference_judge(g, text, cands)
        rules.add(got.rule)
    # the seeded texts reach the lexical rules; no LoCoMo turn restates or revises another (the
    # one pair the rules once took for a contradiction was two persons' statements)
    assert "novel" in rules and (len(rules) >= 2 or name == "locomo")


def test_judge_rules_on_revisions_of_real_turns() -> None:
    """Every rule is reached: real turns against edited copies (a number, a negation, a
    revision marker with one word swapped)."""
    g = Gate(floor=-1.0)
    seen = set()
    for text in corpus_texts("locomo")[:400]:
        w = text.split()
        edits = [
            text + " 7",
            "Correction: now " + text,
            "not " + text,
            " ".join([*w[:-1], "Lisbon"]) if w else text,
            "Correction: "
            + " ".join(["Lisbon" if i == len(w) // 2 else x for i, x in enumerate(w)]),
        ]
        for other in edits:
            cands = [Candidate(0.9, text)]
            got = g.judge(other, cands)
            assert got == reference_judge(g, other, cands)
            seen.add(got.rule)
    assert {"same-fact", "contradiction", "revision", "related"} <= seen


@settings(max_examples=300)
@given(TEXTS, st.lists(st.tuples(st.floats(-1, 1), TEXTS), max_size=8))
def test_judge_equals_the_rules_on_any_text(text: str, pairs: list[tuple[float, str]]) -> None:
    cands = [Candidate(s, t) for s, t in sorted(pairs, key=lambda p: -p[0])]
    g = Gate(floor=-1.0)
    assert g.judge(text, cands) == reference_judge(g, text, cands)


#: Words that make pairs of texts share content, differ by one slot, a number or a negation.
_JUDGE_WORDS = (
    "the deploy key rotates every 90 days now not Lisbon Berlin office team moved "
    "correction alice's alices prefers tabs spaces don't no 5432 5433"
).split()


@settings(max_examples=400)
@given(
    st.lists(st.sampled_from(_JUDGE_WORDS), max_size=12),
    st.lists(st.sampled_from(_JUDGE_WORDS), max_size=12),
)
def test_the_judge_skips_a_candidate_only_when_no_rule_holds(a: list[str], b: list[str]) -> None:
    """The cheap pre-check of the judge never skips a pair a rule decides."""
    text, other = " ".join(a), " ".join(b)
    mine = gate_mod._features(text)
    if not gate_mod._may_be_judged(mine, other):
        assert gate_mod._judged(mine, gate_mod._features(other)) is None
        assert not same_fact(text, other) and revision_rule(text, other) is None


# ----------------------------------------------------------------------------- informativeness

_WORD = re.compile(r"\w+")


def reference_content_words(text: str) -> list[str]:
    return [w for w in (t.lower() for t in _WORD.findall(text)) if w not in inf.STOP_WORDS]


def reference_entities(text: str) -> set[str]:
    found = set()
    for match in _WORD.finditer(text):
        word = match.group()
        if not word[:1].isupper() or word.lower() in inf.STOP_WORDS:
            continue
        before = text[: match.start()]
        if not before.strip() or re.search(r"[.!?:;]\s*$", before):
            continue
        found.add(word.lower())
    return found


def reference_mass(model: inf.Informativeness, texts: list[str], stats: inf.TermStats):
    rare_df = min(max(1.0, model.rare_share * stats.n_docs), float(model.rare_max_df))
    out = np.zeros(len(texts))
    for i, text in enumerate(texts):
        words = sorted(set(reference_content_words(text)))
        if not words:
            continue
        m = float(stats.idf(stats.document_frequency(words)).sum())
        m += model.rare_bonus * float((stats.document_frequency(words) <= rare_df).sum())
        m += model.entity_bonus * len(reference_entities(text))
        m += model.number_bonus * len(inf.numbers(text))
        out[i] = m
    return out


@pytest.mark.parametrize("name", CORPORA)
def test_importance_equals_the_definition_on_real_texts(name: str) -> None:
    texts = corpus_texts(name)
    for text in texts:
        assert inf.content_words(text) == reference_content_words(text)
        assert inf.entities(text) == reference_entities(text)
    model = inf.Informativeness()
    for i in range(0, len(texts), 700):
        chunk = texts[i : i + 700]
        stats = inf.TermStats.from_texts(texts[: i + 700])
        got = inf.content_importance(chunk, stats)
        want = inf.MAX_CONTENT_IMPORTANCE * (
            (m := reference_mass(model, chunk, stats)) / (m + model.half_mass)
        )
        assert np.array_equal(got, want)
        assert np.array_equal(
            model.mass(chunk), reference_mass(model, chunk, inf.TermStats.from_texts(chunk))
        )


@settings(max_examples=200)
@given(st.lists(TEXTS, max_size=12), st.integers(0, 50))
def test_importance_equals_the_definition_on_any_text(texts: list[str], extra_docs: int) -> None:
    stats = inf.TermStats.from_texts(texts)
    stats = inf.TermStats(stats.n_docs + extra_docs, stats.df)
    model = inf.Informativeness(rare_share=0.1)
    assert np.array_equal(model.mass(texts, stats), reference_mass(model, texts, stats))
    for text in texts:
        assert inf.content_words(text) == reference_content_words(text)


# ----------------------------------------------------------------------------- secrets


def reference_find_secrets(text: str) -> list[tuple[str, int, int]]:
    """find_secrets with every rule and every assignment class run, no pre-filter at all."""
    return [(m.kind, m.start, m.end) for m in sec.find_secrets(text, prefilter=False)]


def _found(text: str) -> list[tuple[str, int, int]]:
    return [(m.kind, m.start, m.end) for m in sec.find_secrets(text)]


def test_secret_findings_equal_the_unfiltered_rules_on_real_and_secret_texts() -> None:
    from secrets_corpus import NON_SECRETS, SECRETS, make_secrets

    cases = [*SECRETS, *make_secrets(7)]
    texts = [*corpus_texts("locomo"), *corpus_texts("bench")[:1000], *NON_SECRETS]
    texts += [c.text for c in cases]
    texts += [f"{t} and then {c.text}" for t, c in zip(corpus_texts("locomo"), cases, strict=False)]
    n_found = 0
    for text in texts:
        got = _found(text)
        assert got == reference_find_secrets(text)
        n_found += len(got)
    assert n_found >= len(cases)  # the corpus's secrets are found (and redacted alike)


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "password = hunter2Xy!",
                "token: ghp_" + "a1B2" * 9,
                "AKIA" + "Q" * 16,
                "sk-proj-" + "aB3" * 10,
                "Bearer abcDEF123456ghiJKL",
                "https://u:pa55w0rd@db.example.org",
                "[REDACTED:api_key]",
                "the key is here",
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
                " ",
                "\n",
                "=",
                "xoxb-123",
            ]
        )
        | TEXTS,
        max_size=6,
    ).map(" ".join)
)
def test_secret_findings_equal_the_unfiltered_rules_on_any_text(text: str) -> None:
    assert _found(text) == reference_find_secrets(text)


# ----------------------------------------------------------------------------- corpus count


def test_indexed_rows_is_the_keyword_index_count_through_supersedes_and_archives() -> None:
    s = MemoryStore()
    turns = corpus_texts("locomo")[:300]
    results = s.ingest_many(turns, batch_size=64)
    ids = list(dict.fromkeys(r.memory_id for r in results))
    for i, memory_id in enumerate(ids[:20]):
        s.ingest(f"Correction: {turns[i]} (revised {i})", supersedes=memory_id)
    for memory_id in ids[40:50]:
        s.archive(memory_id)
    with s.core.read():
        count = s.core.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
        assert corpus.indexed_rows(s.core) == count > 0
        assert corpus.term_stats(s.core, turns[:50]).n_docs == count
