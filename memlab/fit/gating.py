"""Fit prediction-error gates on labelled pairs (STS-B by default).

Classes (:func:`memlab.gate.labels_from_scores`): 0 REINFORCE, 1 UPDATE, 2 CREATE.
:func:`fit_gate` finds the two thresholds that maximise macro-F1 exactly. :class:`LearnedGate`
is a multinomial logistic regression over :func:`pair_features`; the classes are ordered, so it
thresholds the score ``P(reinforce) + P(update) / 2``, and it never REINFORCEs a pair whose
negation differs (that would merge two contradicting memories).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from memlab.fit.metrics import confusion_matrix, macro_f1
from memlab.gate import Gate, has_negation, labels_from_scores, numbers, words
from memlab.progress import progress as progress_bar

STSB_COLUMNS: tuple[str, ...] = (
    "genre",
    "source",
    "year",
    "pair_id",
    "score",
    "sentence1",
    "sentence2",
)


def load_stsb(path: str | Path) -> pd.DataFrame:
    """Read an STS-B file into a frame with columns :data:`STSB_COLUMNS` (``score`` float 0-5);
    ``ValueError`` names the line of a row with fewer than 7 fields or a bad score.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"STS-B file not found: {path}")
    rows: list[list[str]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        for line_no, fields in enumerate(
            csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE), start=1
        ):
            if not fields or fields == [""]:
                continue
            if len(fields) < 7:
                raise ValueError(
                    f"{path}:{line_no}: expected at least 7 tab-separated fields, got {len(fields)}"
                )
            rows.append(fields[:7])
    if not rows:
        raise ValueError(f"STS-B file {path} has no pairs")
    frame = pd.DataFrame(rows, columns=list(STSB_COLUMNS))
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = scores.isna() | (scores < 0) | (scores > 5)
    if bad.any():
        first = int(np.nonzero(bad.to_numpy())[0][0])
        raise ValueError(
            f"{path}: score must be a number in [0, 5], "
            f"got {frame['score'].iloc[first]!r} (pair {first + 1})"
        )
    frame["score"] = scores.astype(float)
    return frame


_EMBED_CACHE: dict[tuple[str, str], NDArray[np.float32]] = {}


def pair_similarities(
    sentences1: Sequence[str], sentences2: Sequence[str], embedder: Any, *, progress: bool = False
) -> NDArray[np.float64]:
    """Cosine similarity of each pair under ``embedder``; vectors are cached per (embedder, text)
    for the process, so overlapping texts are embedded once. ``progress`` embeds in batches of
    256 under a progress bar.
    """
    if len(sentences1) != len(sentences2):
        raise ValueError(
            f"need as many first as second sentences, got {len(sentences1)} and {len(sentences2)}"
        )
    name = str(getattr(embedder, "name", repr(embedder)))
    texts = list(dict.fromkeys([*sentences1, *sentences2]))
    missing = [t for t in texts if (name, t) not in _EMBED_CACHE]
    if missing:
        step = 256 if progress else len(missing)
        starts = progress_bar(range(0, len(missing), step), desc="embedding", enabled=progress)
        parts = [embedder.embed_documents(missing[i : i + step]) for i in starts]
        vectors = np.concatenate([np.asarray(v, dtype=np.float32) for v in parts])
        for text, vector in zip(missing, vectors, strict=False):
            _EMBED_CACHE[(name, text)] = vector
    a = np.stack([_EMBED_CACHE[(name, t)] for t in sentences1]).astype(np.float64)
    b = np.stack([_EMBED_CACHE[(name, t)] for t in sentences2]).astype(np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.clip(np.einsum("ij,ij->i", a, b) / np.where(norms > 0, norms, 1.0), -1.0, 1.0)


def _check_pairs(
    similarities: ArrayLike, labels: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    s = np.asarray(similarities, dtype=float).ravel()
    y = np.asarray(labels).ravel()
    if s.shape != y.shape:
        raise ValueError(
            f"similarities and labels must have the same length, got {s.shape[0]} and {y.shape[0]}"
        )
    if np.isnan(s).any() or ((s < -1) | (s > 1)).any():
        raise ValueError("similarities must be numbers in [-1, 1]")
    if not np.isin(y, (0, 1, 2)).all():
        raise ValueError("labels must be gate codes 0 (reinforce), 1 (update) or 2 (create)")
    if len(classes := np.unique(y)) < 2:  # one class: any threshold fits it, none means a thing
        raise ValueError(f"a gate is fitted on pairs of two classes or more, got {len(classes)}")
    return s, y.astype(np.int64)


@dataclass(frozen=True)
class FittedGate:
    """Thresholds chosen on labelled pairs: ``gate`` and the training ``macro_f1``."""

    gate: Gate
    macro_f1: float
    n_pairs: int

    def codes(self, similarities: ArrayLike) -> NDArray[np.int64]:
        """Decision codes of the gate (0 reinforce, 1 update, 2 create)."""
        return self.gate.codes(similarities)


def fit_gate(similarities: ArrayLike, labels: ArrayLike) -> FittedGate:
    """The REINFORCE/UPDATE thresholds with the highest macro-F1 on the pairs (exact search).

    A pair is REINFORCE when ``similarity > reinforce``, UPDATE when ``> update``, else CREATE
    (:class:`memlab.gate.Gate`). Thresholds are placed midway between consecutive distinct
    similarities (or at -1 / 1 at the ends); ties in macro-F1 go to the first found (lowest cuts).
    """
    s, y = _check_pairs(similarities, labels)
    order = np.argsort(s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    n = len(s)
    # cut k: the k lowest pairs fall below the threshold; only cuts between distinct values
    cuts = np.concatenate(([0], np.nonzero(np.diff(s_sorted) > 0)[0] + 1, [n]))
    if s_sorted[0] <= -1.0:  # a threshold of -1 cannot put a similarity of -1 above it
        cuts = cuts[1:]
    cum = np.zeros((3, n + 1))
    for c in range(3):
        cum[c, 1:] = np.cumsum(y_sorted == c)
    actual = cum[:, n]
    ci = cum[:, cuts]  # class counts below each cut
    best = (-1.0, 0, 0)
    for a, i in enumerate(cuts):  # i: create/update cut; j >= i: update/reinforce cut
        j = cuts[a:]
        tp_create = ci[2, a]
        f_create = 2 * tp_create / (i + actual[2]) if i + actual[2] > 0 else 0.0
        tp_update = ci[1, a:] - ci[1, a]
        f_update = np.divide(
            2 * tp_update, (j - i) + actual[1], out=np.zeros(len(j)), where=(j - i) + actual[1] > 0
        )
        tp_reinforce = actual[0] - ci[0, a:]
        f_reinforce = np.divide(
            2 * tp_reinforce,
            (n - j) + actual[0],
            out=np.zeros(len(j)),
            where=(n - j) + actual[0] > 0,
        )
        score = (f_create + f_update + f_reinforce) / 3.0
        b = int(np.argmax(score))
        if score[b] > best[0] + 1e-12:
            best = (float(score[b]), int(i), int(j[b]))

    def threshold(k: int) -> float:
        if k == 0:
            return -1.0
        if k == n:
            return 1.0
        return float((s_sorted[k - 1] + s_sorted[k]) / 2.0)

    reinforce, update = threshold(best[2]), threshold(best[1])
    f1 = macro_f1(y, Gate(reinforce, update).codes(s))
    return FittedGate(Gate.fitted(reinforce, update, macro_f1=f1, n_pairs=n), f1, n)


def pair_features(
    similarities: ArrayLike, texts1: Sequence[str], texts2: Sequence[str]
) -> NDArray[np.float64]:
    """Features of each pair: cosine, its square, word Jaccard, length ratio, negation mismatch,
    negation x cosine, number mismatch and Jaccard x cosine."""
    s = np.asarray(similarities, dtype=float).ravel()
    if not (len(s) == len(texts1) == len(texts2)):
        raise ValueError(
            f"need one similarity per pair, got {len(s)}, {len(texts1)} and {len(texts2)}"
        )
    rows = []
    for text1, text2 in zip(texts1, texts2, strict=True):
        w1, w2 = set(words(text1)), set(words(text2))
        union = w1 | w2
        jaccard = len(w1 & w2) / len(union) if union else 1.0
        n1, n2 = len(words(text1)), len(words(text2))
        ratio = min(n1, n2) / max(n1, n2) if max(n1, n2) else 1.0
        negation = float(has_negation(text1) != has_negation(text2))
        number_change = float(numbers(text1) != numbers(text2))
        rows.append((jaccard, ratio, negation, number_change))
    lex = np.array(rows, dtype=float).reshape(len(s), 4)
    jaccard, ratio, negation, number_change = lex.T
    return np.column_stack(
        [s, s * s, jaccard, ratio, negation, negation * s, number_change, jaccard * s]
    )


@dataclass
class LearnedGate:
    """Multinomial logistic regression gate over :func:`pair_features` (see the module docs),
    its classes weighted inversely to their frequency (macro-F1 rather than accuracy).

    Parameters
    ----------
    l2 : float
        L2 penalty on the (standardised) feature weights.
    """

    l2: float = 1e-3
    coef_: NDArray[np.float64] | None = field(default=None, init=False, repr=False)
    mean_: NDArray[np.float64] | None = field(default=None, init=False, repr=False)
    scale_: NDArray[np.float64] | None = field(default=None, init=False, repr=False)

    def fit(
        self,
        similarities: ArrayLike,
        texts1: Sequence[str],
        texts2: Sequence[str],
        labels: ArrayLike,
    ) -> LearnedGate:
        """Fit on labelled pairs; returns self."""
        s, y = _check_pairs(similarities, labels)
        x = pair_features(s, texts1, texts2)
        self.mean_ = x.mean(axis=0)
        self.scale_ = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        z = np.column_stack([np.ones(len(x)), (x - self.mean_) / self.scale_])
        onehot = np.eye(3)[y]
        counts = np.bincount(y, minlength=3).astype(float)
        weights = (len(y) / (3 * np.maximum(counts, 1)))[y]
        weights = weights / weights.sum()
        n_feat = z.shape[1]
        penalty = np.ones((n_feat, 3))
        penalty[0] = 0.0  # intercepts are not penalised

        def objective(flat: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            coef = flat.reshape(n_feat, 3)
            log_p = log_softmax(z @ coef, axis=1)
            loss = -float(weights @ (onehot * log_p).sum(axis=1)) + self.l2 * float(
                (penalty * coef**2).sum()
            )
            grad = (
                z.T @ ((np.exp(log_p) - onehot) * weights[:, None]) + 2 * self.l2 * penalty * coef
            )
            return loss, grad.ravel()

        result = minimize(
            objective, np.zeros(n_feat * 3), jac=True, method="L-BFGS-B", options={"maxiter": 1000}
        )
        self.coef_ = result.x.reshape(n_feat, 3)
        self.result_ = result
        self.score_gate_ = fit_gate(self.scores(s, texts1, texts2), y).gate
        return self

    def scores(
        self, similarities: ArrayLike, texts1: Sequence[str], texts2: Sequence[str]
    ) -> NDArray[np.float64]:
        """Ordinal score ``P(reinforce) + P(update) / 2`` in [0, 1] of each pair."""
        p = self.probabilities(similarities, texts1, texts2)
        return np.clip(p[:, 0] + 0.5 * p[:, 1], 0.0, 1.0)

    def probabilities(
        self, similarities: ArrayLike, texts1: Sequence[str], texts2: Sequence[str]
    ) -> NDArray[np.float64]:
        """Class probabilities (pairs x 3: reinforce, update, create)."""
        if self.coef_ is None or self.mean_ is None or self.scale_ is None:
            raise ValueError("this LearnedGate is not fitted yet; call fit() first")
        x = pair_features(similarities, texts1, texts2)
        z = np.column_stack([np.ones(len(x)), (x - self.mean_) / self.scale_])
        return softmax(z @ self.coef_, axis=1)

    def codes(
        self, similarities: ArrayLike, texts1: Sequence[str], texts2: Sequence[str]
    ) -> NDArray[np.int64]:
        """Decision codes (0 reinforce, 1 update, 2 create); a pair whose negation differs is
        never REINFORCEd (at most UPDATE)."""
        scores = self.scores(similarities, texts1, texts2)  # raises when not fitted
        codes = self.score_gate_.codes(scores)
        flip = [has_negation(a) != has_negation(b) for a, b in zip(texts1, texts2, strict=True)]
        codes[np.array(flip, dtype=bool) & (codes == 0)] = 1  # the negation guard
        return codes


def _report(y: NDArray[np.int64], codes: NDArray[np.int64]) -> dict[str, Any]:
    return {"macro_f1": macro_f1(y, codes), "confusion": confusion_matrix(y, codes).tolist()}


def evaluate_gates(
    train: pd.DataFrame, test: pd.DataFrame, embedder: Any, *, progress: bool = False
) -> dict[str, Any]:
    """Default thresholds, thresholds fitted on ``train`` and the learned gate, scored on ``test``
    (STS-B frames): each with ``macro_f1`` and ``confusion`` (rows true, columns predicted class).
    """
    s_train, s_test = (
        pair_similarities(list(f["sentence1"]), list(f["sentence2"]), embedder, progress=progress)
        for f in (train, test)
    )
    y_train = labels_from_scores(train["score"].to_numpy())
    y_test = labels_from_scores(test["score"].to_numpy())
    fitted = fit_gate(s_train, y_train)
    learned = LearnedGate().fit(
        s_train, list(train["sentence1"]), list(train["sentence2"]), y_train
    )
    return {
        "default": _report(y_test, Gate().codes(s_test)),
        "fitted": {
            "thresholds": [fitted.gate.reinforce, fitted.gate.update],
            **_report(y_test, fitted.codes(s_test)),
        },
        "learned": _report(
            y_test, learned.codes(s_test, list(test["sentence1"]), list(test["sentence2"]))
        ),
        "n_train": int(len(train)),
        "n_test": int(len(test)),
    }
