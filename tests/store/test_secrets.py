"""Secret screening: fresh examples of every class, hard negatives, exact spans, properties."""

from __future__ import annotations

import base64
import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.secrets import MARKER, find_secrets, redact, screen, shannon_entropy
from memlab.store import MAX_CONTENT_BYTES, MemoryStore, SecretFoundError

# Written for these tests (not drawn from the experiment's generator): text, the secrets in it.
# The first group slipped past the screening before it became a detector with context.
FORMER_BYPASSES: dict[str, tuple[str, list[str]]] = {
    "aws key pair in prose": (
        "Ops gave me AKIA2E0A8F3B244C9986 with secret 5KvHg3R0jN7qTzXw2/bLs9Yd+Fp4aMcE1uGi8oZe "
        "for the archive bucket.",
        ["AKIA2E0A8F3B244C9986", "5KvHg3R0jN7qTzXw2/bLs9Yd+Fp4aMcE1uGi8oZe"],
    ),
    "slack app-level token": (
        "socket mode wants xapp-1-A07ZK3HQ2MN-7301928374650-c0ffee5b4a39281706f5e4d3c2b1a09f8e"
        " for the listener",
        ["xapp-1-A07ZK3HQ2MN-7301928374650-c0ffee5b4a39281706f5e4d3c2b1a09f8e"],
    ),
    "oauth client secret in prose": (
        "Google login app - client secret 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 as of Monday",
        ["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"],
    ),
    "laravel app key": (
        "APP_KEY=base64:Q2hhbmdlLXRoaXMta2V5LWJ5LWFydGlzYW4tb2theT8=",
        ["base64:Q2hhbmdlLXRoaXMta2V5LWJ5LWFydGlzYW4tb2theT8="],
    ),
    "django secret key": (
        "DJANGO_SECRET_KEY=k#9v!p2(zq-x_4w@m8e)r7t^y6u&i5o*3l1s0d",
        ["k#9v!p2(zq-x_4w@m8e)r7t^y6u&i5o*3l1s0d"],
    ),
    "sms provider key pair": (
        "twilio account AC8f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c, auth token "
        "0a9b8c7d6e5f40312a3b4c5d6e7f8091",
        ["0a9b8c7d6e5f40312a3b4c5d6e7f8091"],
    ),
    "e-mail api key": (
        "Mailgun answered 401 for key-9c1f0e2d3b4a59687f6e5d4c3b2a1908, so I rotated it",
        ["key-9c1f0e2d3b4a59687f6e5d4c3b2a1908"],
    ),
    "e-commerce api key": (
        "shop admin token 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 (custom app)",
        ["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"],
    ),
    ".netrc": ("machine git.example.net login robot password Qz7-vine-Harbor", ["Qz7-vine-Harbor"]),
    "container registry auth": (
        '{"auths": {"quay.io": {"auth": "'
        + base64.b64encode(b"robot:Qz7-vine-Harbor").decode()
        + '"}}}',
        [base64.b64encode(b"robot:Qz7-vine-Harbor").decode()],
    ),
    "sshpass": ("cron: sshpass -p 'Lantern#88x' rsync -a /srv/ backup@nas:/vol1/", ["Lantern#88x"]),
    "mysql -p": ("mysql -h 127.0.0.1 -u shop -pW1nd0wSill! shop", ["W1nd0wSill!"]),
    "curl -u": ("curl -u deploy:Br1ck-Path-42 https://ci.example.org/job/x", ["Br1ck-Path-42"]),
    "password said in words": ("the router password's Kettle-57-Moss now", ["Kettle-57-Moss"]),
}
OTHER_CLASSES: dict[str, tuple[str, list[str]]] = {
    "database url of another dialect": (
        "SQLALCHEMY_DATABASE_URI = 'mssql+pymssql://reporter:Gr8-Lakes%2199@sql01.corp:1433/dw'",
        ["Gr8-Lakes%2199"],
    ),
    "jdbc password parameter": (
        "spring.datasource.url=jdbc:mysql://db:3306/shop?user=shop&password=Fern7-Lodge&ssl=1",
        ["Fern7-Lodge"],
    ),
    "kafka sasl": (
        'sasl.jaas.config=x.ScramLoginModule required username="ingest" password="p4-Kestrel-19";',
        ["p4-Kestrel-19"],
    ),
    "rails secret_key_base": (
        "production:\n  secret_key_base: 4be1c09f7d2a3e8b6c5f0a19d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3",
        ["4be1c09f7d2a3e8b6c5f0a19d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3"],
    ),
    "uuid api token": (
        "POSTMARK_SERVER_TOKEN=5f0c2a9e-7b1d-4e3f-a6c8-9d2b0e4f1a73",
        ["5f0c2a9e-7b1d-4e3f-a6c8-9d2b0e4f1a73"],
    ),
    "PGPASSWORD": ("PGPASSWORD=Oak7!ledger pg_dump -h db -U app app > app.sql", ["Oak7!ledger"]),
    "wifi password": (
        "the guest wifi password is Sunny-Porch-2024 if anyone asks",
        ["Sunny-Porch-2024"],
    ),
    "camelCase client secret": (
        '{"clientId": "web-portal", "clientSecret": "c7Yp2Lq9Wx4Zr8Tn3Vb6Mk1Hs5Jd0Fg"}',
        ["c7Yp2Lq9Wx4Zr8Tn3Vb6Mk1Hs5Jd0Fg"],
    ),
    "bearer token": (
        "Authorization: Bearer 9f8A7b6C5d4E3f2G1h0IjKlMnOpQ",
        ["9f8A7b6C5d4E3f2G1h0IjKlMnOpQ"],
    ),
    "pem block": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7q9Xk2Lm4Np6Rt8Vw0Yz3Bc5Ef7Hk9Mn2Pq4\n"
        "-----END RSA PRIVATE KEY-----",
        ["MIIEowIBAAKCAQEA7q9Xk2Lm4Np6Rt8Vw0Yz3Bc5Ef7Hk9Mn2Pq4"],
    ),
}
CASES = {**FORMER_BYPASSES, **OTHER_CLASSES}


@pytest.mark.parametrize("name", list(CASES))
def test_each_class_found_as_exactly_its_span(name: str) -> None:
    text, secrets = CASES[name]
    spans = [(m.start, m.end) for m in find_secrets(text)]
    for s in secrets:
        start = text.index(s)
        assert (start, start + len(s)) in spans, (name, spans)
    red, n = screen(text, "redact")
    assert n == len(spans) and not any(s in red for s in secrets)
    with pytest.raises(SecretFoundError) as error:
        screen(text, "reject")
    assert not any(s in str(error.value) for s in secrets)
    assert screen(text, "allow") == (text, 0)
    assert screen(red, "redact") == (red, 0)  # idempotent: nothing left to redact


HARD_NEGATIVES = [
    "I forgot my password again and had to call the helpdesk",
    "reset your password via the link we sent you",
    "Do you remember the password for the old laptop? I don't.",
    "the wifi password is on the fridge",
    "password: see the team vault",
    "sha1 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 matches the release",
    "commit 8d3e5b1c9a7f2e4d6b8a0c1e3f5a7b9d2c4e6f80 fixed the race",
    "request 123e4567-e89b-12d3-a456-426614174000 timed out",
    "key_id = 123e4567-e89b-12d3-a456-426614174000",
    'cache_key = "9e107d9d372bb6826bd81d3542a419d6"',
    "Upgrade to 4.18.2 costs $1,499.00 per seat",
    "ISBN 978-3-16-148410-0, call +44 20 7946 0958",
    "![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAIAQMAAAD+wSzIAAAABlBMVEX///+"
    "/v7+jQ3Y5AAAADklEQVQI12P4AIX8EAgALgAD/aNpbtEAAAAASUVORK5CYII)",
    "def verify(password: str) -> bool:\n    return hasher.verify(password)",
    "const token = await auth.getAccessToken({ scopes });",
    "see https://accounts.example.com/password/reset?user=42",
    "the secret ingredient is cardamom",
    "Tokens per minute: 90000; key rotation every 90 days.",
    "publishable key pk_live_51HqLyjWDarjtT1zdp7dc goes in the page",
    "public key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq7Kx9Lm2Np5Rt8Vw1Yz4Bc7Ef0Hk3 me@laptop",
    'password_hash = "$2b$12$KIXQJt1v0Ldg3kN8Zq5pEuJ7mW2xY4rT6sV8bN0cM1aQ3dF5gH7iK"',
    "password: ${DB_PASSWORD}",
    "python -m pytest -q -p no:cacheprovider tests/store",
    r"C:\Users\bob\AppData\Roaming\secrets\config.json",
    "psql --password --username=app2 shop",  # the next option, not a password
    "mysql -u root --password --host db",
    "mysql -u root -p -P3307 -h db",
    "mysqladmin -u root -p -S/tmp/mysql.sock status",
]


@pytest.mark.parametrize("text", HARD_NEGATIVES)
def test_hard_negatives_untouched(text: str) -> None:
    assert find_secrets(text) == []
    assert screen(text, "reject") == (text, 0)


def test_redaction_replaces_exactly_the_spans() -> None:
    aws, pw = FORMER_BYPASSES["aws key pair in prose"], "Qz7-vine-Harbor"
    text = f"before {aws[0]} middle password {pw} after"
    red, matches = redact(text)
    assert [text[m.start : m.end] for m in matches] == [*aws[1], pw]
    expected = text
    for secret, m in zip([*aws[1], pw], matches, strict=True):
        expected = expected.replace(secret, MARKER.format(kind=m.kind))
    assert red == expected
    assert red.startswith("before Ops gave me ") and red.endswith(" after")


# ----------------------------------------------------------------------------- properties

FRAGMENTS = [t for t, _ in CASES.values()] + HARD_NEGATIVES


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=40), max_size=6).map("\n".join))
def test_redaction_changes_nothing_outside_the_spans(text: str) -> None:
    red, matches = redact(text)
    pos, parts = 0, []
    for m in matches:
        assert pos <= m.start < m.end <= len(text)
        parts += [text[pos : m.start], MARKER.format(kind=m.kind)]
        pos = m.end
    assert red == "".join([*parts, text[pos:]])
    assert redact(red)[1] == []


WORDS = st.sampled_from(
    "password passwd pwd secret token key auth credential api_key my the wifi is was for = : "
    "- again reset link via forgot changed stored required expired strong weak now new old "
    "Password Token Secret Key v2.1.0 12:30 2026-01-05 $19.99 /srv/app ~/.ssh/id_rsa "
    "https://example.com/login bob@example.org <your-password> ${TOKEN} getPassword() "
    "check_password".split()
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=12).map(" ".join))
def test_names_separators_and_words_alone_are_no_secret(text: str) -> None:
    """Keywords, assignment shapes, words, versions, paths, addresses and placeholders in any
    order: no candidate value in them, so nothing is redacted."""
    assert redact(text) == (text, [])


# ----------------------------------------------------------------------------- store


def test_entropy() -> None:
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


def test_store_modes(clock) -> None:
    text, secrets = FORMER_BYPASSES["e-commerce api key"]
    rej = MemoryStore(clock=clock, secrets="reject")
    with pytest.raises(SecretFoundError):
        rej.ingest(text)
    assert len(rej) == 0
    red = MemoryStore(clock=clock, secrets="redact")
    assert secrets[0] not in red.get(red.ingest(text).memory_id).content
    allow = MemoryStore(clock=clock, secrets="allow")
    assert allow.get(allow.ingest(text).memory_id).content == text
    with pytest.raises(ValueError, match="secrets mode"):
        screen("x", "maybe")


class _CountingText(str):
    """A text that counts the characters read from it one by one."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[override]
        _CountingText.reads += 1
        return str.__getitem__(self, index)


@pytest.mark.parametrize("text", ["token_" * 300, "x" * 2000 + "key" * 300, "pwKeyAuthSig" * 150])
def test_long_name_with_many_keywords_read_once(text: str) -> None:
    """A run of name characters holding many keywords (an identifier, base64url, random
    letters) is read once, not once per keyword: screening stays linear in the text."""
    _CountingText.reads = 0
    assert find_secrets(_CountingText(text)) == find_secrets(text) == []
    assert _CountingText.reads <= 3 * len(text)


FILE = find_secrets.__code__.co_filename


def _steps(text: str) -> int:
    """Lines of memlab.secrets run to screen ``text`` (a measure of work, not of time)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        count += 1
        return local

    def calls(frame, event, arg):
        return local(frame, event, arg) if frame.f_code.co_filename == FILE else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        find_secrets(text)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize("redacted", [False, True])
def test_work_linear_in_the_number_of_secrets(redacted: bool) -> None:
    """Thousands of secrets (an .env dump) or of markers (an export of a redacting store,
    screened again on import) cost each about the same: overlaps are found by bisection."""
    line = 'pwd: "ab1!"\n'
    texts = [line * 200, line * 800]
    if redacted:
        texts = [redact(t)[0] for t in texts]
    assert [len(redact(t)[1]) for t in texts] == ([0, 0] if redacted else [200, 800])
    small, large = (_steps(t) for t in texts)
    assert large <= 5 * small  # four times the secrets; quadratic work would be 16 times


def test_redacted_text_held_to_the_content_limit(clock) -> None:
    """A marker is longer than a short password: a text within the limit can outgrow it once
    redacted, and is refused then (stored, no export of it would import back)."""
    line = 'pwd: "ab1!"\n'
    text = line * (MAX_CONTENT_BYTES // len(line))
    assert len(text.encode()) <= MAX_CONTENT_BYTES < len(redact(text)[0].encode())
    store = MemoryStore(clock=clock)
    with pytest.raises(ValueError, match=r"secrets redacted.* is \d+ bytes; the maximum"):
        store.ingest(text)
    with pytest.raises(ValueError, match="item 1: the text to store"):
        store.ingest_many(["a note", {"content": line, "context": text[: -len(line)]}])
    assert len(store) == 0
    result = store.ingest(text[: len(text) // 4])
    assert result.redacted == len(text) // len(line) // 4


def test_import_redacts_own_text_and_context_apart(clock, tmp_path) -> None:
    """An export of an ``allow`` store imported into a redacting one: ``own_chars`` still ends
    the own text (the marker is longer than the key), as when the text is ingested there."""
    text, _ = FORMER_BYPASSES["e-commerce api key"]
    source = MemoryStore(clock=clock, secrets="allow")
    old = source.ingest(text, context="from the ops channel").memory_id
    source.export_jsonl(tmp_path / "dump.jsonl")
    target = MemoryStore(clock=clock)
    imported = target.get(target.import_jsonl(tmp_path / "dump.jsonl")[old])
    ingested = target.get(target.ingest(text, context="from the ops channel").memory_id)
    assert imported.own_text == ingested.own_text == screen(text)[0]
    assert imported.content == ingested.content


def test_import_holds_redacted_texts_to_the_content_limit(clock, tmp_path) -> None:
    """A content or an event text within the limit that outgrows it once redacted refuses its
    line (its export would not import back), and nothing is imported."""
    line = 'pwd: "ab1!"\n'
    big = line * (MAX_CONTENT_BYTES // len(line))
    source = MemoryStore(clock=clock, secrets="allow")
    source.ingest_many(["a short note", big])
    source.export_jsonl(tmp_path / "dump.jsonl")
    target = MemoryStore(clock=clock)
    with pytest.raises(ValueError, match="line 3: the content with its secrets redacted is"):
        target.import_jsonl(tmp_path / "dump.jsonl")
    header, small, _ = (tmp_path / "dump.jsonl").read_text().splitlines()
    record = json.loads(small)
    record["events"].append({"at": record["created_at"], "kind": "observation", "text": big})
    (tmp_path / "dump.jsonl").write_text(f"{header}\n{json.dumps(record)}\n")
    with pytest.raises(ValueError, match="line 2: event text is .* the content limit"):
        target.import_jsonl(tmp_path / "dump.jsonl")
    assert len(target) == 0


def test_token_with_a_deeply_nested_header_is_screened(clock) -> None:
    """A JWT-shaped token whose header decodes to JSON nested too deep for the parser is no
    token (a real header is a small object), not an error out of the screening."""
    head = base64.urlsafe_b64encode(b'{"a":' + b"[" * 20_000).decode().rstrip("=")
    token = f"{head}.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert find_secrets(token) == []
    store = MemoryStore(clock=clock, secrets="reject")
    assert store.get(store.ingest(f"odd {token}").memory_id).content == f"odd {token}"
