"""Smoke test of experiments/bench_store.py's functions on tiny inputs (no time asserted)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_helpers import experiment


def _bench() -> Any:
    return experiment("bench_store")


def test_texts_are_seeded_and_repeat_some() -> None:
    b = _bench()
    a, again = b.make_texts(300, seed=3), b.make_texts(300, seed=3)
    assert a == again and len(a) == 300
    assert len(set(a)) < len(a)  # about 3 % said again (the gate's reinforce path)
    assert len(b.make_queries(20, seed=7, texts=a)) == 20


def test_exact_top10_streamed_equals_one_matrix() -> None:
    b = _bench()
    rng = np.random.default_rng(0)
    mat = rng.standard_normal((250, 16)).astype(np.float32)
    q = rng.standard_normal((5, 16)).astype(np.float32)
    ids = np.arange(250) + 1
    blocks = ((ids[i : i + 40], mat[i : i + 40]) for i in range(0, 250, 40))
    got, _ = b.exact_top10_sims(q, blocks)
    want = [set((np.argsort(-(mat @ v))[:10] + 1).tolist()) for v in q]
    assert got == want
    assert b.recall_at_10(got, want) == 1.0


def test_tie_recall_counts_a_memory_as_similar_as_the_tenth() -> None:
    b = _bench()
    rng = np.random.default_rng(1)
    mat = rng.standard_normal((300, 16)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    q = mat[:3] + 0.1 * rng.standard_normal((3, 16)).astype(np.float32)
    ids = np.arange(300) + 1
    mat[299] = mat[np.argsort(-(mat @ q[0]))[9]]  # memory 300: a copy of query 0's 10th
    exact, sims = b.exact_top10_sims(q, [(ids, mat)])
    assert np.allclose(sims, -np.sort(-(q @ mat.T), axis=1)[:, :10])
    got = [set(x) for x in exact]
    swapped = sorted(exact[0], key=lambda m: -float(mat[m - 1] @ q[0]))
    assert 300 not in exact[0]  # the tie is broken by id: the copy is the 11th
    got[0] = set(swapped[:9]) | {300}  # the copy instead of the 10th: same cosine
    got[1] = set(sorted(exact[1])[:5]) | {int(m) for m in np.argsort(q[1] @ mat.T)[:5] + 1}
    got_sims = [[float(mat[m - 1] @ v) for m in g] for g, v in zip(got, q, strict=True)]
    assert b.recall_at_10(got, exact) == pytest.approx((0.9 + 0.5 + 1.0) / 3)
    assert b.tie_recall_at_10(got_sims, sims) == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert b.tie_recall_at_10(got_sims, sims, epsilon=2.0) == 1.0  # cosines differ by <= 2


def test_choose_takes_the_fastest_setting_reaching_the_target() -> None:
    b = _bench()
    curve = [
        {"ef": 32, "recall_at_10": 0.90, "query_ms_p50": 0.1},
        {"ef": 64, "recall_at_10": 0.96, "query_ms_p50": 0.3},
        {"ef": 128, "recall_at_10": 0.99, "query_ms_p50": 0.5},
    ]
    assert b.choose(curve, 0.95)["ef"] == 64
    assert b.choose(curve, 0.999)["ef"] == 128  # none reaches it: the best recall


@pytest.mark.parametrize("index", ["annoy", "hnsw"])
def test_run_store_small(tmp_path: Path, index: str) -> None:
    pytest.importorskip("usearch") if index == "hnsw" else pytest.importorskip("annoy")
    b = _bench()
    res = b.run_store("hashing", 300, index, [5], [200], [16, 64], 12, tmp_path)
    assert res["n"] == 300 and sum(res["decisions"].values()) == 300
    assert 0.0 <= res["chosen"]["recall_at_10"] <= 1.0
    for c in res["curve"]:  # an exact top-10 id is within the allowance: ties count more
        assert c["recall_at_10"] <= c["recall_at_10_ties"] <= 1.0
        assert c["index_recall_at_10"] <= c["index_recall_at_10_ties"] <= 1.0
    assert res["open_index"] == "loaded"  # the saved index is trusted on reopening
    assert len(res["search_rounds"]) == b.SEARCH_ROUNDS  # pooled: the p50 within the rounds'
    p50s = [x["p50"] for x in res["search_rounds"]]
    assert min(p50s) <= res["search_ms_no_embed"]["p50"] <= max(p50s)
    md = b._markdown(
        {"run_at": "x", "machine": "m", "cpus": 2, "blas_threads": 1, "total_s": 1.0,
         "targets_met": b.targets_met([res]), "runs": [res]}
    )  # fmt: skip
    assert f"| hashing | {index} | 300 |" in md
    curve = res["keyword_budget"]["keyword_side_curve"]
    assert [c["max_postings"] for c in curve] == [None, *b.KEYWORD_BUDGETS]
    assert curve[0]["recall_at_10_vs_no_budget"] == 1.0  # the reference itself
    assert "## The keyword side alone, by budget" in md
    assert "each round's p50, overlapped (serial; FTS5)" in md
    # the keyword side ranked by the index held in memory, beside FTS5's ranking of it
    ki = res["keyword_index"]
    assert ki["built"] and ki["unusable"] is None and ki["same_as_fts5"] == ki["queries"] == 12
    assert 0 < ki["rows"] <= res["n"] + 200  # the bench ingests 200 single texts after the n
    assert res["keyword_search_fts5_ms"]["p50"] > 0 and res["search_ms_fts5"]["p50"] > 0


def test_keyword_budget_curve_measures_what_the_budget_drops() -> None:
    from memlab.gate import Gate
    from memlab.store import MemoryStore

    b = _bench()
    texts = [f"filler entry {i} on item{i}" for i in range(91)]
    texts += [f"shared topic note number {i}" for i in range(9)] + ["shared zanzibar ferry"]
    # "shared" is in 10 of 101 memories, under the 10 % frequent-term cap
    with MemoryStore(gate=Gate.off()) as store:
        store.ingest_many(texts)
        with store.core.read():
            search = lambda q, budget: [  # noqa: E731
                m for m, _ in store.core.keyword_search(q, 50, max_postings=budget)
            ]
            contents = lambda ids: [store.get(m).content for m in ids]  # noqa: E731
            curve = b.keyword_budget_curve(
                search, contents, ["shared zanzibar"], [("zanzibar", texts[-1])], budgets=(1,)
            )
    none, one = curve
    assert none["max_postings"] is None and none["recall_at_10_vs_no_budget"] == 1.0
    # a budget of one posting keeps only "zanzibar": one of the unbudgeted top 10 is left
    assert one["max_postings"] == 1 and one["recall_at_10_vs_no_budget"] == 0.1
    assert none["known_item_hit_at_10"] == one["known_item_hit_at_10"] == 1.0


def test_run_index_small(tmp_path: Path) -> None:
    pytest.importorskip("usearch")
    b = _bench()
    res = b.run_index(500, [16, 128], 10, tmp_path)
    assert [c["ef"] for c in res["curve"]] == [16, 128]
    assert res["curve"][1]["recall_at_10"] >= res["curve"][0]["recall_at_10"] - 0.2
    assert all(c["recall_at_10"] <= c["recall_at_10_ties"] <= 1.0 for c in res["curve"])
    assert not list(tmp_path.glob("*.npy"))  # the vectors' memmap is removed
    graph = b.run_index(1200, [64], 5, tmp_path, "hnsw8x12s2-f16", [10, 100])  # adds in 1,000s
    assert graph["index"] == "hnsw8x12s2-f16"
    assert graph["graph"] == {"connectivity": 8, "expansion_add": 12, "dtype": "f16", "shards": 2}
    assert (
        b._label(graph)
        == "hashing hnsw8x12s2-f16 1,200 (degree 8, breadth 12, f16, 2 shards) (index only)"
    )
    assert 0.0 < graph["curve"][0]["recall_at_10"] <= 1.0 and graph["add_per_s"] > 0
    by_depth = graph["curve"][0]["recall_at_10_by_depth"]
    assert (
        set(by_depth) == {"10", "100"}
        and by_depth["10"] == graph["curve"][0]["recall_at_10_graph_order"]
    )  # the graph's own top 10, re-scored, is the same set
    # at the 1M targets' size an index-only run is judged on its query and recall only
    # (its add rate is no ingest, its RSS holds the memory-mapped vectors)
    judged = b.targets_met([{**graph, "n": 1_000_000}])
    assert [k.split(": ")[1].split()[0] for k in judged] == ["index", "recall@10"]


def test_index_kinds_of_the_bench(tmp_path: Path) -> None:
    pytest.importorskip("usearch")
    b = _bench()
    assert b.index_options("annoy") == {"index": "annoy"}
    assert b.index_options("hnsw32") == {"index": "hnsw", "hnsw_connectivity": 32}
    assert b.index_options("hnsw-f16") == {"index": "hnsw", "hnsw_dtype": "f16"}
    assert b.index_options("hnsw24-f32") == {
        "index": "hnsw", "hnsw_connectivity": 24, "hnsw_dtype": "f32"
    }  # fmt: skip
    with pytest.raises(ValueError, match="unknown index kind"):
        b.index_options("hnswx")
    with pytest.raises(ValueError, match="unknown graph dtype"):
        b.index_options("hnsw-f64")
    assert b.graph_options("hnsw32x64") == {"connectivity": 32, "expansion_add": 64}
    assert b.graph_options("hnsw32x64s4-f16") == {
        "connectivity": 32, "expansion_add": 64, "shards": 4, "dtype": "f16"
    }  # fmt: skip
    assert b.index_options("hnsws1") == {"index": "hnsw", "hnsw_shards": 1}
    assert b.graph_options("hnsw") == {}
    with pytest.raises(ValueError, match="needs a degree"):
        b.graph_options("hnswx64")
    with pytest.raises(ValueError, match="index-only runs"):
        b.index_options("hnsw32x64")  # the store's graph takes 4 x its degree
    res = b.run_store("hashing", 200, "hnsw8-f16", [5], [200], [16], 8, tmp_path, 7)
    assert res["index"] == "hnsw8-f16" and res["open_index"] == "loaded"
    assert res["graph"] == {"connectivity": 8, "dtype": "f16", "shards": 1}
    assert b._label(res) == "hashing hnsw8-f16 200 (degree 8, f16) (keyword budget 7)"
    point = res["curve"][0]  # the store's vector side, and the index alone beside it
    assert 0.0 <= point["index_recall_at_10"] <= 1.0 and point["index_ms_p50"] > 0


def test_bench_keyword_small(tmp_path: Path) -> None:
    bk = experiment("bench_keyword")
    res = bk.run(600, 12, tmp_path)
    assert [c["max_postings"] for c in res["curve"]] == [None, *_bench().KEYWORD_BUDGETS]
    assert res["curve"][0]["recall_at_10_vs_no_budget"] == 1.0
    assert all(0.0 <= c["known_item_hit_at_10"] <= 1.0 for c in res["curve"])
    assert not list(tmp_path.iterdir())  # the keyword file is removed
    md = bk.markdown({"run_at": "x", "machine": "m", "cpus": 2, "total_s": 1.0, "runs": [res]})
    assert "| 600 | none |" in md


def test_probe_ivf_fastscan_helpers(tmp_path: Path) -> None:
    probe = experiment("probe_ivf_fastscan")
    rng = np.random.default_rng(5)
    x = rng.normal(size=(120_000, 8)).astype(np.float32)  # more rows than one block of 50,000
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = x[[3, 70_000, 119_999]] + 0.01
    best = probe.exact_best(q, x, 8)
    full = np.argsort(-(q @ x.T), axis=1)[:, :8]
    assert [set(row) for row in best.tolist()] == [set(row) for row in full.tolist()]
    # the judged 8 are the best of the first 16 hits by exact cosine, a missing hit (-1) never
    hits = np.concatenate([full, np.argsort(-(q @ x.T), axis=1)[:, 8:24]], axis=1)[:, ::-1]
    hits = np.ascontiguousarray(hits)
    hits[:, 0] = -1
    share, judged = probe.score(hits, q, x, best)
    first = hits[:, :16]
    sims = np.where(first >= 0, np.einsum("ij,ikj->ik", q, x[np.maximum(first, 0)]), -2)
    expect = [frozenset(first[r][np.argsort(-sims[r])[:8]].tolist()) for r in range(3)]
    assert judged == expect and -1 not in set().union(*judged)
    assert share == pytest.approx(1.0)  # the exact best 8 are all among the 24 hits
    rows = [
        {"index": name, "code_bytes": b, "ms_2_threads": [t, t + 1], "ms_1_thread": [2 * t, 2 * t],
         "exact_best_8_found": 0.9, "judged_equal": eq}
        for name, b, t, eq in (("cells", 384, 170.0, 1.0), ("fast", 48, 70.0, 0.98))
    ]  # fmt: skip
    out = {"run_at": "x", "machine": "m", "cpus": 2, "faiss": "1", "total_s": 1.0,
           "base_texts": 10, "memories": 9, "queries": 3, "cells": 4, "nprobe": 8,
           "rows": rows}  # fmt: skip
    probe.write_markdown(out, tmp_path / "probe.md")
    text = (tmp_path / "probe.md").read_text()
    assert "| fast | 48 | 70-71 | 140-140 | 0.900 | 0.980 |" in text
    assert "saves 0.100 ms a text" in text


def test_bench_two_cores_report(tmp_path: Path) -> None:
    two = experiment("bench_two_cores")
    runs = [
        {"config": "gated ingest", "round": 1, "processes": 1, "per_s": [1000.0],
         "together_per_s": 1000.0, "load": [1.0, 1.0]},
        {"config": "gated ingest", "round": 1, "processes": 2, "per_s": [900.0, 700.0],
         "together_per_s": 1600.0, "load": [1.0, 1.2]},
    ]  # fmt: skip
    assert two.run_of(runs, "gated ingest", 1, 2)["per_s"] == [900.0, 700.0]
    out = {"run_at": "x", "machine": "m", "cpus": 2, "total_s": 1.0, "base": 10, "texts": 5,
           "rounds": 1, "runs": runs,
           "summary": {"gated ingest": {"ratios": [1.6], "median": 1.6}}}  # fmt: skip
    two.write_markdown(out, tmp_path / "two.md")
    text = (tmp_path / "two.md").read_text()
    assert "| gated ingest | 1 | 1000 texts/s | 900 + 700 | 1600 | 1.60 | 1.0-1.2 |" in text


def test_proto_ingest_pipeline_digest_and_report(tmp_path: Path) -> None:
    proto = experiment("proto_ingest_pipeline")
    from memlab.gate import Decision
    from memlab.store import IngestResult

    one = IngestResult(Decision.CREATE, 0.4123456, 7, 3, 0, (), "novel")
    assert proto.digest([one]) == proto.digest([replace(one)])
    # the digest reads every field that tells a result: decision, rule, similarity, memory,
    # nearest (a similarity differing past the 6th decimal is the same result)
    for changed in (replace(one, decision=Decision.RELATED), replace(one, rule="same-fact"),
                    replace(one, similarity=0.4124), replace(one, memory_id=8),
                    replace(one, nearest_id=None)):  # fmt: skip
        assert proto.digest([changed]) != proto.digest([one])
    assert proto.digest([replace(one, similarity=0.41234561)]) == proto.digest([one])
    runs = [
        {"mode": "pipelined", "round": 1, "per_s": 900.0, "waited_s": 1.5,
         "decisions": {"create": 5}, "load": [1.0, 1.1]},
        {"mode": "store's ingest", "round": 1, "per_s": 1000.0, "waited_s": 0.0,
         "decisions": {"create": 5}, "load": [1.1, 1.2]},
    ]  # fmt: skip
    out = {"run_at": "x", "machine": "m", "cpus": 2, "total_s": 1.0, "base": 10, "texts": 5,
           "rounds": 1, "helper_threads": 1, "runs": runs, "ratios": [0.9],
           "median_ratio": 0.9, "same_results": True}  # fmt: skip
    proto.write_markdown(out, tmp_path / "p.md")
    text = (tmp_path / "p.md").read_text()
    assert "| 1 | pipelined | 900 | 1.50 | {'create': 5} | 1.0-1.1 |" in text
    assert "median 0.90" in text and "round: yes" in text
