"""Secret screening on ingest: find credentials in text and reject, redact or allow them.

Detected: AWS access key ids and secret keys given as ``aws_secret_access_key = ...``,
PEM private key blocks, GitHub tokens (``ghp_``, ``gho_``, ``ghs_``, ``ghu_``, ``ghr_``,
``github_pat_``),
Slack tokens (``xox[abprs]-``) and webhooks, OpenAI/Anthropic-style keys (``sk-``...),
Google API keys (``AIza``...), JSON web tokens, and ``Bearer <token>`` / ``api_key=<value>``
assignments whose value looks random (Shannon entropy >= 3.5 bits per character, >= 20 chars).

Redaction replaces each secret with ``[REDACTED:<kind>]``; the original is not stored
anywhere (that is the point), so screening is the one place where given text is changed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

SECRET_MODES: tuple[str, ...] = ("reject", "redact", "allow")


class SecretFoundError(ValueError):
    """Raised in ``reject`` mode when content contains a secret."""


_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    (
        "aws_access_key_id",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    ),
    (
        "aws_secret_access_key",
        re.compile(r"(?i)(?<=aws_secret_access_key)(\s*[:=]\s*[\"']?)[A-Za-z0-9/+=]{40}\b"),
    ),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("api_key", re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}\b")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
)

# Generic credentials: the value after "Bearer" or a key-like assignment, if it looks random.
_GENERIC = re.compile(
    r"(?i)(?:\bbearer\s+|\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|token)\b\s*[:=]\s*[\"']?)"
    r"(?P<value>[A-Za-z0-9._~+/=-]{20,})"
)

MIN_ENTROPY_BITS = 3.5


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``'s character distribution."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


@dataclass(frozen=True)
class SecretMatch:
    kind: str
    start: int
    end: int


def find_secrets(text: str) -> list[SecretMatch]:
    """Non-overlapping secrets in ``text``, in order of position."""
    found: list[SecretMatch] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            start = m.start() + (len(m.group(1)) if kind == "aws_secret_access_key" else 0)
            found.append(SecretMatch(kind, start, m.end()))
    for m in _GENERIC.finditer(text):
        value = m.group("value")
        if shannon_entropy(value) >= MIN_ENTROPY_BITS and any(ch.isdigit() for ch in value):
            found.append(SecretMatch("token", m.start("value"), m.end("value")))
    found.sort(key=lambda s: (s.start, -(s.end - s.start)))
    merged: list[SecretMatch] = []
    for s in found:
        if merged and s.start < merged[-1].end:
            last = merged[-1]
            if s.end > last.end:
                merged[-1] = SecretMatch(last.kind, last.start, s.end)
            continue
        merged.append(s)
    return merged


def screen(text: str, mode: str = "redact") -> tuple[str, int]:
    """Apply ``mode`` to ``text``: returns (text to store, number of secrets redacted).

    ``reject`` raises :class:`SecretFoundError` naming the kinds found; ``redact``
    replaces each with ``[REDACTED:<kind>]``; ``allow`` returns the text unchanged.
    """
    if mode not in SECRET_MODES:
        raise ValueError(f"secrets mode must be one of {SECRET_MODES}, got {mode!r}")
    if mode == "allow":
        return text, 0
    matches = find_secrets(text)
    if not matches:
        return text, 0
    if mode == "reject":
        kinds = sorted({m.kind for m in matches})
        raise SecretFoundError(
            f"content contains {len(matches)} secret(s) ({', '.join(kinds)}); not stored"
        )
    parts: list[str] = []
    pos = 0
    for m in matches:
        parts.append(text[pos : m.start])
        parts.append(f"[REDACTED:{m.kind}]")
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), len(matches)


__all__ = [
    "SECRET_MODES",
    "SecretFoundError",
    "SecretMatch",
    "find_secrets",
    "screen",
    "shannon_entropy",
]
