"""Parameter recovery of FSRS6Fitter: review logs simulated from known FSRS-6 weights, fitted back.

For two weight vectors (the defaults and ``ALTERNATIVE_WEIGHTS``) and three log sizes, simulate
(see :mod:`memlab.fit.recovery` for the learner and scheduler), fit, and report the mean absolute
error of the predicted R against the true R, the per-weight absolute errors, and the log loss of
the fitted, true and default weights on the simulated outcomes.

Run: ``python experiments/bench_fit_recovery.py``. Writes
experiments/results/bench_fit_recovery.json.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from memlab.fit.recovery import ALTERNATIVE_WEIGHTS, recover
from memlab.models.fsrs6 import DEFAULT_WEIGHTS

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "bench_fit_recovery.json"


def main() -> int:
    runs = []
    print(
        f"{'weights':>12} {'cards':>6} {'reviews':>8} {'R MAE':>7} {'R max':>6} "
        f"{'LL fit':>7} {'LL true':>7} {'LL dflt':>7} {'fit s':>6}"
    )
    for label, weights in (("default", DEFAULT_WEIGHTS), ("alternative", ALTERNATIVE_WEIGHTS)):
        for n_cards in (200, 1000, 5000):
            result = recover(weights, n_cards=n_cards, reviews_per_card=10, seed=7)
            runs.append({"weights_label": label, "n_cards": n_cards, **result.to_dict()})
            print(
                f"{label:>12} {n_cards:>6} {result.n_reviews:>8} {result.r_mae:>7.4f} "
                f"{result.r_max_error:>6.3f} {result.log_loss_fitted:>7.4f} "
                f"{result.log_loss_true:>7.4f} {result.log_loss_default:>7.4f} "
                f"{result.fit_seconds:>6.2f}"
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {"when": datetime.now(UTC).isoformat(timespec="seconds"), "runs": runs},
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
