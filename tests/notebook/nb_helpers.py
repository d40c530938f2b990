"""Helpers of the notebook tests: a simulated clock and a few notes to store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

NOTES = [
    ("The deploy script lives in ops/deploy.sh and needs the VPN", "infra", ["deploy"]),
    ("Alice prefers tabs over spaces in the Go services", "backend", ["style"]),
    (
        "The nightly backup of the orders database runs at 02:00 UTC",
        "infra",
        ["backup", "database"],
    ),
    ("Use pandas read_csv with dtype_backend='pyarrow' for the big exports", "data", ["pandas"]),
    ("The staging database password rotates every 30 days", "infra", ["database"]),
]


class Clock:
    """Simulated time: ``clock()`` is the current instant, ``advance(days=...)`` moves it."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now = self.now + timedelta(**delta)
        return self.now
