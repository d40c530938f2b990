"""Secret screening: kinds found, redaction, rejection, no false alarms on prose."""

from __future__ import annotations

import pytest

from memlab.store import MemoryStore, SecretFoundError
from memlab.store.secrets import find_secrets, screen, shannon_entropy

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----"
SAMPLES = {
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
    "private_key": PEM,
    "github_token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack_token": "xoxb-123456789012-abcdefABCDEF",
    "api_key": "sk-proj-abcDEF123ghiJKL456mnoPQR789",
    "token": "Authorization: Bearer 9f8A7b6C5d4E3f2G1h0IjKlMnOpQ",
}


@pytest.mark.parametrize(("kind", "secret"), list(SAMPLES.items()))
def test_each_kind_is_found_and_redacted(kind: str, secret: str) -> None:
    text = f"note: {secret} end"
    assert [m.kind for m in find_secrets(text)] == [kind]
    red, n = screen(text, "redact")
    assert (
        n == 1 and f"[REDACTED:{kind}]" in red and red.startswith("note: ") and red.endswith(" end")
    )
    with pytest.raises(SecretFoundError, match=kind):
        screen(text, "reject")
    assert screen(text, "allow") == (text, 0)


def test_aws_secret_assignment() -> None:
    text = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    red, n = screen(text)
    assert n == 1 and red == "aws_secret_access_key = [REDACTED:aws_secret_access_key]"


@pytest.mark.parametrize(
    "prose",
    [
        "The token ring network was replaced in 1998.",
        "password = correcthorsebatterystaple",  # low-entropy words, no digits
        "Use the sk- prefix for keys.",
        "Bearer of bad news arrived today",
    ],
)
def test_no_false_alarms(prose: str) -> None:
    assert find_secrets(prose) == []


def test_entropy() -> None:
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


def test_store_modes(clock) -> None:
    text = "deploy key " + SAMPLES["github_token"]
    rej = MemoryStore(clock=clock, secrets="reject")
    with pytest.raises(SecretFoundError):
        rej.ingest(text)
    assert len(rej) == 0
    allow = MemoryStore(clock=clock, secrets="allow")
    assert allow.get(allow.ingest(text).memory_id).content == text
    with pytest.raises(ValueError, match="secrets mode"):
        screen("x", "maybe")
