"""KeepInputs.from_frame on a store's frame: estimated importance is estimated again, own texts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from memlab.gate import Gate
from memlab.keep import KeepInputs, effective_importance
from memlab.store import MemoryStore

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def test_from_frame_reads_the_auto_flag_and_the_own_text() -> None:
    s = MemoryStore(gate=Gate.off())
    auto = s.ingest("Oscar the greyhound lives in Portland", now=T0).memory_id
    given = s.ingest("a given importance here", importance=0.6, now=T0).memory_id
    ctx = s.ingest("short own text", context="a long context about Lisbon", now=T0).memory_id
    frame = s.to_dataframe(now=T0 + timedelta(days=3))
    inputs = KeepInputs.from_frame(frame, T0 + timedelta(days=3))
    pos = {int(m): i for i, m in enumerate(frame["id"])}
    assert np.isnan(inputs.importance[pos[auto]]) and inputs.importance[pos[given]] == 0.6
    assert inputs.texts[pos[ctx]] == "short own text"
    assert effective_importance(inputs)[pos[given]] == 0.6
    sweep = s.forget_sweep(now=T0 + timedelta(days=3)).set_index("id")
    assert effective_importance(inputs)[pos[auto]] == sweep.loc[auto, "importance"]
