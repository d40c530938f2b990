"""Rebuild the shipped subsets of ``datasets/`` from the full data of the shared folder.

    python datasets/make_subsets.py            # needs ../shared (or $MEMLAB_SHARED)

* ``locomo/locomo_conv-30.json``: the LoCoMo sample ``conv-30``, byte-for-byte the JSON object
  of the dev5 file, as a one-element list (the LoCoMo file format).
* ``stsb/sts-train-sample.csv`` and ``stsb/sts-dev-sample.csv``: 500 pairs each, seeded, drawn
  only from the STS-B sources whose text licence allows redistribution with attribution
  (``headlines``, ``images``, ``track5.en-en``; see ``stsb/README.md``), in the original
  tab-separated format.

The review log ``reviews/py-fsrs_review_logs_josh.csv`` is the whole log, copied unchanged.
The script is deterministic: running it again writes identical files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from memlab.datasets import shared_dir

HERE = Path(__file__).resolve().parent
#: STS-B sources whose text may be redistributed with attribution (CC BY-SA / EMM).
STSB_SOURCES = ("headlines", "images", "track5.en-en")
STSB_PAIRS = 500
SEED = 20261130


def stsb_sample(source: Path, target: Path, n: int = STSB_PAIRS) -> int:
    lines = [
        line
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.split("\t")[1:2] and line.split("\t")[1] in STSB_SOURCES
    ]
    chosen = sorted(random.Random(SEED).sample(range(len(lines)), min(n, len(lines))))
    target.write_text("".join(lines[i] + "\n" for i in chosen), encoding="utf-8")
    return len(chosen)


def main() -> None:
    shared = shared_dir()
    samples = json.loads((shared / "data" / "locomo" / "locomo_dev5.json").read_text("utf-8"))
    conv = [s for s in samples if s["sample_id"] == "conv-30"]
    (HERE / "locomo" / "locomo_conv-30.json").write_text(
        json.dumps(conv, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    for split in ("train", "dev"):
        n = stsb_sample(
            shared / "data" / "stsb" / f"sts-{split}.csv",
            HERE / "stsb" / f"sts-{split}-sample.csv",
        )
        print(f"stsb {split}: {n} pairs")


if __name__ == "__main__":
    main()
