"""Secret screening: memlab's span-exact screening against detect-secrets used as it ships.

Measures on the test corpus (``tests/store/secrets_corpus.py``: fake but format-valid secrets
built from seeded random characters, and tricky non-secrets) and on real conversational text
(the LoCoMo dev5 turns in ../shared, when present; none of them holds a credential, so every
flag there is a false positive):

- memlab (``memlab.store.secrets.find_secrets``): recall = share of secrets found as exactly
  their span (one match, no character more or less), also on 100 fresh draws of the corpus
  (other seeds: the same formats and contexts, other random characters), false-positive rate =
  share of non-secret texts with any match;
- the baseline, detect-secrets 1.5.0 with its default plugins and filters
  (``SecretsCollection.scan_file`` over one file per text): recall = share of secrets it reports
  with the secret as the value (it reports values per line, no spans), share of secret texts it
  flags at all, and the same false-positive rate.

Run: ``python experiments/secrets_screening.py``. Writes experiments/results/secrets_screening.json
and .md.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev5.json"
sys.path.insert(0, str(ROOT / "tests" / "store"))

from secrets_corpus import NON_SECRETS, SECRETS, make_secrets  # noqa: E402

from memlab.store.secrets import find_secrets  # noqa: E402


def memlab_exact(text: str, secret: str) -> bool:
    start = text.index(secret)
    return [(m.start, m.end) for m in find_secrets(text)] == [(start, start + len(secret))]


def detect_secrets_values(texts: list[str]) -> list[list[str]]:
    """Values detect-secrets (default settings) reports for each text."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    out: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        for i, text in enumerate(texts):
            path = Path(tmp) / f"t{i}.txt"
            path.write_text(text, encoding="utf-8")
            found = SecretsCollection()
            found.scan_file(str(path))
            out.append([s.secret_value or "" for _, s in found])
    return out


def locomo_turns() -> list[str]:
    if not LOCOMO.exists():
        return []
    from memlab.eval.locomo import load_locomo

    return [t.text for conv in load_locomo(LOCOMO) for t in conv.turns if t.text.strip()]


def main() -> None:
    t0 = time.perf_counter()
    secret_texts = [c.text for c in SECRETS]
    exact = [memlab_exact(c.text, c.secret) for c in SECRETS]
    fp_memlab = [bool(find_secrets(t)) for t in NON_SECRETS]
    ds_secret = detect_secrets_values(secret_texts)
    ds_non = detect_secrets_values(NON_SECRETS)
    fresh = [c for seed in range(100, 200) for c in make_secrets(seed)]
    fresh_exact = [memlab_exact(c.text, c.secret) for c in fresh]
    turns = locomo_turns()
    loc_memlab = [bool(find_secrets(t)) for t in turns]
    loc_ds = [bool(v) for v in detect_secrets_values(turns)] if turns else []

    def share(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    ds_value = [
        any(v == c.secret for v in vals) for c, vals in zip(SECRETS, ds_secret, strict=True)
    ]
    by_format: dict[str, dict[str, int]] = {}
    for c, e, d in zip(SECRETS, exact, ds_value, strict=True):
        row = by_format.setdefault(c.fmt, {"n": 0, "memlab": 0, "detect_secrets": 0})
        row["n"] += 1
        row["memlab"] += int(e)
        row["detect_secrets"] += int(d)
    result = {
        "corpus": {
            "secrets": len(SECRETS),
            "formats": len({c.fmt for c in SECRETS}),
            "non_secrets": len(NON_SECRETS),
            "locomo_turns": len(turns),
        },
        "memlab": {
            "recall_exact_span": share(exact),
            "recall_exact_span_fresh_seeds": share(fresh_exact),
            "fresh_secrets": len(fresh),
            "false_positive_rate": share(fp_memlab),
            "locomo_false_positive_rate": share(loc_memlab),
            "kinds": dict(Counter(m.kind for t in secret_texts for m in find_secrets(t))),
        },
        "detect_secrets_default": {
            "recall_value_reported": share(ds_value),
            "secret_texts_flagged": share([bool(v) for v in ds_secret]),
            "false_positive_rate": share([bool(v) for v in ds_non]),
            "locomo_false_positive_rate": share(loc_ds),
        },
        "missed_by_memlab": [c.fmt for c, e in zip(SECRETS, exact, strict=True) if not e],
        "flagged_non_secrets_memlab": [t for t, f in zip(NON_SECRETS, fp_memlab, strict=True) if f],
        "by_format": by_format,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "secrets_screening.json").write_text(json.dumps(result, indent=2) + "\n")
    m, d, c = result["memlab"], result["detect_secrets_default"], result["corpus"]
    lines = [
        "# Secret screening: memlab vs detect-secrets defaults",
        "",
        f"Corpus: {c['secrets']} fake secrets of {c['formats']} formats, {c['non_secrets']} tricky "
        f"non-secrets; {c['locomo_turns']} LoCoMo dev5 turns as real prose (no credentials).",
        "",
        "| screening | recall | secret texts flagged | FP (tricky) | FP (LoCoMo turns) |",
        "|---|---|---|---|---|",
        f"| memlab (exact span) | {m['recall_exact_span']} | - | {m['false_positive_rate']} | "
        f"{m['locomo_false_positive_rate']} |",
        f"| detect-secrets 1.5.0 defaults (value reported) | {d['recall_value_reported']} | "
        f"{d['secret_texts_flagged']} | {d['false_positive_rate']} | "
        f"{d['locomo_false_positive_rate']} |",
        "",
        f"memlab on {m['fresh_secrets']} fresh draws of the same formats (seeds 100-199): "
        f"recall {m['recall_exact_span_fresh_seeds']}.",
        "",
        "Per format (secrets found exactly by memlab / reported by detect-secrets, of n):",
        "",
        "| format | n | memlab | detect-secrets |",
        "|---|---|---|---|",
        *(
            f"| {f} | {r['n']} | {r['memlab']} | {r['detect_secrets']} |"
            for f, r in sorted(by_format.items())
        ),
        "",
    ]
    (RESULTS / "secrets_screening.md").write_text("\n".join(lines))
    print("\n".join(lines[:11]))


if __name__ == "__main__":
    main()
