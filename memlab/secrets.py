"""Secret screening: find credentials in any text the store keeps, then reject, redact or allow.

Three layers, most specific first: well-known token formats (their prefix and shape name the
issuer) and PEM private key blocks; shapes of credentials (a URL's userinfo password,
``Authorization`` values, command-line passwords); and context: a name that says password,
secret, token, key, auth or credential, an assignment, then a value that passes the test of the
name's class (a *password* mixes letters with digits or symbols and is no word, identifier,
path or placeholder; a *secret*, *token* or *key* looks random). A name that says the value is
not the secret (``password_hash``, ``key_id``, ``public_key``) is passed over.

Redaction is span-exact: only the value becomes ``[REDACTED:<kind>]``. The original is stored
nowhere, so screening is the one place where given text is changed; it is idempotent.
"""

from __future__ import annotations

import base64
import bisect
import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

#: What the store does with a secret it finds: refuse the text, replace the secret, or keep it.
SECRET_MODES: tuple[str, ...] = ("reject", "redact", "allow")

#: The marker that replaces a secret: ``[REDACTED:<kind>]``.
MARKER = "[REDACTED:{kind}]"
_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")

#: Bits per character a random-looking value must reach (Shannon entropy of its characters).
MIN_ENTROPY_BITS = 3.0


class SecretFoundError(ValueError):
    """Raised in ``reject`` mode when a text contains a secret."""


@dataclass(frozen=True)
class SecretMatch:
    """One secret: its kind and its span ``text[start:end]`` (the value only)."""

    kind: str
    start: int
    end: int


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``'s character distribution."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


# ----------------------------------------------------------------------------- value tests


def _class_of(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` mixes."""
    return len({_class_of(c) for c in value})


def _changes(value: str) -> float:
    """Share of neighbouring characters of different classes: about 0.5 or more in random
    strings (hex included), below 0.2 in words, identifiers and camelCase names."""
    cls = [_class_of(c) for c in value]
    return sum(a != b for a, b in zip(cls, cls[1:], strict=False)) / max(len(value) - 1, 1)


_PLACEHOLDERS = frozenset(
    """none null nil true false yes no password passwd secret token key value redacted hidden
    masked required optional string str example placeholder changeme todo tbd undefined empty
    env see here your mine unset default auto same blank n/a na""".split()
)
_TEMPLATE = re.compile(  # a variable, template, format slot or mask in place of a value
    r"\$\{\w+\}|\$[A-Z_][A-Z0-9_]*|\$[a-z_][a-z0-9_]*|\$\(.*|<[^>]*>?|\{\{.*|.*\$\{.*"
    r"|%\(\w+\)s|%s|%\w+%|\*+|(?:your|my|process\.env|os\.environ|example|xxx).*|.*-----.*"
)
_NOT_VALUE = re.compile(
    r"""(?x)
      [(\[{].*  |  [A-Za-z_][\w.]*[(\[{].*                     # a call
    | (?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]*)+  |  (?:[A-Za-z]:)?\\\S*    # path
    | \w[\w+.-]*://\S*                                           # URL
    | [\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}                # e-mail address
    | [a-z]{2,}\d*(?:[._-][a-z]{2,}\d*)+\.?                    # host name, module path
    | [A-Za-z]+(?:[._-][A-Za-z]+)*[!?]*  |  [a-z]+(?:[A-Z][a-z]+)+  # word, identifier
    | v?\d+(?:[.:,/-]\d+)*(?:[-+.]?[A-Za-z]{1,5}\d*)?          # number, version, time
    """
)


def _stand_in(value: str) -> bool:
    """A placeholder, path, URL, address, word, identifier, number or redaction marker."""
    return (
        len(set(value)) <= 2
        or value.lower() in _PLACEHOLDERS
        or _NOT_VALUE.fullmatch(value) is not None
        or _TEMPLATE.fullmatch(value) is not None
        or _MARKER_RE.search(value) is not None
    )


def _random_looking(value: str, min_len: int = 16) -> bool:
    """Long enough, not a stand-in, characters spread (entropy) and mixed (class changes)."""
    return (
        len(value) >= min_len
        and not _stand_in(value)
        and shannon_entropy(value) >= MIN_ENTROPY_BITS
        and (_changes(value) >= 0.25 or len(value) >= 20 and _classes(value) >= 2)
        and not any(c.isspace() for c in value)
    )


def _password_like(value: str, min_len: int = 6) -> bool:
    """A password as people make them: letters with digits or symbols, not a stand-in."""
    return (
        min_len <= len(value) <= 256
        and any(c.isalpha() for c in value)
        and _classes(value) >= 2
        and not _stand_in(value)
        and not any(c.isspace() for c in value)
    )


def _basic_credentials(value: str) -> bool:
    """Base64 of printable ``user:password`` (an HTTP Basic header, a registry ``auth``)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode()
    except ValueError:  # bad base64 or UTF-8
        return False
    return bool(decoded.partition(":")[2]) and decoded.isprintable()  # a password after ":"


def _jwt_header(token: str) -> bool:
    """The first part of a JSON web token decodes to a JSON object naming ``alg`` or ``typ``."""
    head = token.split(".", 1)[0]
    try:
        obj = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, RecursionError):  # bad base64, UTF-8 or JSON (or nested too deep)
        return False
    return isinstance(obj, dict) and bool({"alg", "typ"} & set(obj))


# ----------------------------------------------------------------------------- format rules


@dataclass(frozen=True)
class Rule:
    """One pattern: the group that is the secret, a check of it, and pre-filter hints (lower
    case substrings one of which every match contains)."""

    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    group: int | str = 0
    check: Callable[[str], bool] | None = None


def _rule(kind: str, body: str, hints: str, check: Callable[[str], bool] | None = None) -> Rule:
    """A rule whose secret is the group ``v`` if the pattern names one, else the whole match
    fenced by token boundaries."""
    if "(?P<v>" in body:
        return Rule(kind, re.compile(body), tuple(hints.split("|")), "v", check)
    pattern = re.compile(r"(?<![\w-])(?:" + body + r")(?![\w-])")
    return Rule(kind, pattern, tuple(hints.split("|")), 0, check)


_B64 = r"[A-Za-z0-9+/]"
_QV = r"""(?P<q>['"]?)(?P<v>[^\s'"]{%d,128})(?P=q)(?!\S)"""  # a value, maybe quoted
#: The format rules of :func:`find_secrets`, the most specific first (PEM blocks found apart).
RULES: tuple[Rule, ...] = (
    _rule(
        "aws_access_key_id",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
        "a3t|akia|asia|abia|acca",
    ),
    _rule(
        "aws_session_token",
        r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[\w/+=]{60,}",
        "fwogzxivyxdz|iqojb3jpz2lu",
    ),
    _rule("github_token", r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_\w{22,255}", "gh|github_pat_"),
    _rule("gitlab_token", r"gl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|oas)-[\w-]{20,}", "gl"),
    _rule("slack_token", r"xox[abposre]-[\w-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xox|xapp"),
    _rule("slack_webhook", r"https://hooks\.slack\.com/services/[\w/]{20,}", "hooks.slack"),
    _rule("stripe_key", r"[sr]k_(?:live|test)_[0-9A-Za-z]{16,247}|whsec_[\w+/=]{24,}", "k_|whsec_"),
    _rule("sendgrid_key", r"SG\.[\w-]{16,32}\.[\w-]{16,64}", "sg."),
    _rule("mailgun_key", r"key-[0-9a-f]{32}", "key-"),
    _rule("mailchimp_key", r"[0-9a-f]{32}-us\d{1,2}", "-us"),
    _rule("shopify_token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", "shp"),
    _rule("npm_token", r"npm_[A-Za-z0-9]{36}", "npm_"),
    _rule("pypi_token", r"pypi-AgE[\w-]{50,}", "pypi-"),
    _rule("vault_token", r"hv[sbr]\.[\w-]{24,}", "hvs.|hvb.|hvr."),
    _rule("api_key", r"sk-(?:[a-z]+\d*-)*[\w-]{20,}", "sk-", _random_looking),
    _rule("google_api_key", r"AIza[\w-]{35}", "aiza"),
    _rule("oauth_client_secret", r"GOCSPX-[\w-]{28}", "gocspx-"),
    _rule("telegram_bot_token", r"\d{8,10}:AA[\w-]{33}", ":aa"),
    _rule("discord_token", r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}", "."),
    _rule("twilio_key", r"SK[0-9a-fA-F]{32}", "sk"),
    _rule("square_secret", r"sq0(?:csp|atp)-[\w-]{22,43}", "sq0"),
    _rule("jwt", r"eyJ[\w-]{8,}={0,2}\.[\w-]{8,}={0,2}\.[\w-]*={0,2}", "eyj", _jwt_header),
    # shapes of credentials: URL userinfo of any scheme, HTTP auth headers, command lines
    _rule(
        "url_password",
        r"""(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@?#"'<>]{0,128}:(?P<v>[^\s/?#@"'<>]{1,256})@(?=[\w\[])""",
        "://",
        lambda v: (
            not (v.isdigit() or v.lower() in _PLACEHOLDERS or _TEMPLATE.fullmatch(v))
            and (_classes(v) >= 2 or not v.isalpha())
        ),  # "user:pass@" is an example, not a secret
    ),
    _rule(
        "basic_auth",
        r"(?i)\bbasic\s+(?P<v>" + _B64 + r"{6,}={0,2})(?![\w+/=])",
        "basic",
        _basic_credentials,
    ),
    _rule(
        "token", r"(?i)\bbearer\s+(?P<v>[\w.~+/-]{16,}=*)(?![\w.~+/=-])", "bearer", _random_looking
    ),
    # -p<pw>, -p <pw>, -a <pw>: a strong value only, never the next option (-p -P3307)
    _rule(
        "password",
        r"(?<=\s)-[pa](?: (?!-))?" + _QV % 6,
        " -p| -a",
        lambda v: _password_like(v) and (_classes(v) >= 3 or _changes(v) >= 0.4),
    ),
    _rule(
        "password",
        r"(?i)--pass(?:word|wd)?(?:=| +(?!-))" + _QV % 4,
        "--pass",
        lambda v: _password_like(v, 4),
    ),
    _rule(
        "password",
        r"""(?<=\s)(?:-u|--user)[ =]['"]?[^\s:'"]+:['"]?(?P<v>[^\s'"]{4,128})['"]?(?!\S)""",
        " -u|--user",
        lambda v: _password_like(v, 4),
    ),
)


# ----------------------------------------------------------------------------- PEM blocks

_PEM_BEGIN = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
    r"|---- BEGIN (?P<label2>SSH2 ENCRYPTED PRIVATE KEY) ----"
)
_PEM_LINE_BREAK = r"(?:\r?\n|\\r\\n|\\n|[ \t])"
_PEM_HEADERS = re.compile(r"(?:" + _PEM_LINE_BREAK + r"*[A-Za-z-]+: [^\n\\]*)*")
_B64_RUN = re.compile(_PEM_LINE_BREAK + r"*(?:[A-Za-z0-9+/=]+" + _PEM_LINE_BREAK + r"*)+")
_NEWLINE = r"(?:\r?\n|\\r\\n|\\n)"
_B64_LINES = re.compile(
    _NEWLINE + r"+(?:[A-Za-z0-9+/=]{16,}" + _NEWLINE + r")*[A-Za-z0-9+/=]{16,}(?![^\s\\])"
)
_B64_TOKEN = re.compile(r"[A-Za-z0-9+/=]{16,}")
_PEM_BREAKS = re.compile(_PEM_LINE_BREAK + "*")
_TRAILING_BREAKS = re.compile(r"(?:\s|\\[nr])+$")
_PUTTY = re.compile(
    r"Private-Lines: \d+\r?\n"
    r"(?P<body>[A-Za-z0-9+/=]{4,}(?![^\r\n])(?:\r?\n[A-Za-z0-9+/=]{4,}(?![^\r\n]))*)"
)


def _private_keys(text: str) -> Iterable[SecretMatch]:
    """The body of each PEM private key block (never the text after a header alone)."""
    if "BEGIN" not in text and "Private-Lines" not in text:
        return
    for b in _PEM_BEGIN.finditer(text):
        label = b.group("label") or b.group("label2")
        pos = _PEM_HEADERS.match(text, b.end()).end()  # Proc-Type:, DEK-Info: lines
        run = _B64_RUN.match(text, pos)
        if run is None:
            continue
        end_marker = re.compile(r"-{4,5} ?END " + re.escape(label) + r" ?-{4,5}")
        if end_marker.match(text, run.end()) is None:
            # no END line: only whole lines of base64, a real key's worth (a header followed
            # by prose is no key, and the prose stays)
            run = _B64_LINES.match(text, pos)
            if run is None or sum(c.isalnum() for c in run.group()) < 64:
                continue
        body_start = _PEM_BREAKS.match(text, pos).end()
        trailing = _TRAILING_BREAKS.search(text, body_start, run.end())
        body_end = trailing.start() if trailing else run.end()
        # base64 comes in long runs; words between a BEGIN and an END line are prose
        if _B64_TOKEN.search(text, body_start, body_end):
            yield SecretMatch("private_key", body_start, body_end)
    for p in _PUTTY.finditer(text):
        yield SecretMatch("private_key", p.start("body"), p.end("body"))


# ----------------------------------------------------------------------------- context

#: A word in a name that says what class of secret its value is.
_KEYWORD = re.compile(r"(?i)pass|pwd|pw|secret|token|key|auth|credential|sig|sas|private")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_PASSWORD_PART = re.compile(
    r"\w*pass(?:word|wd|phrase|code)|pass|passe|pwd|pw|pswd|passwort|contrase(?:ñ|n)a"
)
_SECRET_PART = re.compile(r"\w*secret(?:s|key)?|private|signing")
_TOKEN_PART = re.compile(
    r"\w*(?:token|apikey|authkey|accesskey|appkey)s?|key|auth|credentials?|sig|sas"
)
#: Parts of a name that make an assignment about a secret rather than the secret itself.
_NOT_SECRET_PARTS = frozenset(
    """policy hint length len min max reset field prompt strength rule rules expiry expires
    expiration age rotation label changed required url uri path file dir id ids name names type
    types count format mode enabled regex pattern validator manager store arn ref version
    header location endpoint kind limit timeout ttl size prefix hash hashed sha md5 checksum
    digest cache public pub publishable fingerprint etag integrity salt nonce mac""".split()
)
# After the name: closing quotes, then a separator, then the value (or a few words, then it).
_SEPARATOR = re.compile(r"""["'`\]]{0,2}(?:'s)?[ \t]*(?::=|=>|=|:|->|>)?[ \t]*""")
_VALUE = re.compile(  # quoted, or bare up to a separator (";" and "&" only before "name=")
    r""""(?P<dq>[^"\n]{1,1024})"|'(?P<sq>[^'\n]{1,1024})'|`(?P<bq>[^`\n]{1,1024})`"""
    r"""|(?P<bare>(?:[^\s"'`,;&<>]|[;&](?=[^\s;&])(?!\w+=)){1,1024})"""
)
_FILLER = re.compile(r"[a-z]{1,12}|[-:=]")
_AMBIGUOUS = frozenset("pass pw key keys auth sig sas private".split())
_SENTENCE_END = ".,;:)]}"
_WORD_BEFORE = re.compile(r"(\w+)[ \t]+$")


def _name_parts(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [p for p in re.split(r"[_.\-]+", spaced.lower()) if p]


@functools.lru_cache(maxsize=4096)
def _class_of_name(name: str) -> str | None:
    """``password``, ``secret``, ``token`` or None (no secret named, or a name about one)."""
    parts = _name_parts(name)
    if not parts or len(name) > 48 or any(p in _NOT_SECRET_PARTS for p in parts):
        return None
    for kind, part in (
        ("password", _PASSWORD_PART),
        ("secret", _SECRET_PART),
        ("token", _TOKEN_PART),
    ):
        if any(part.fullmatch(p) for p in parts):
            return kind
    return None


_CHECKS: dict[str, Callable[[str, bool], bool]] = {
    "password": lambda v, quoted: _password_like(v, 4 if quoted else 6),
    "secret": lambda v, quoted: _random_looking(v, 8) or (quoted and _password_like(v, 12)),
    "token": lambda v, quoted: _random_looking(v) or _basic_credentials(v) and len(v) >= 8,
}


def _overlapping(spans: list[Any], start: int, end: int) -> range:
    """Indices of the ``spans`` (start, end, ...; in order, disjoint) overlapping ``start:end``."""
    first = bisect.bisect_right(spans, start, key=itemgetter(1))
    return range(first, bisect.bisect_left(spans, end, lo=first, key=itemgetter(0)))


def _assignments(text: str, markers: list[tuple[int, int]]) -> Iterable[SecretMatch]:
    """A value after a name of a secret class (``name = value``, ``"name": "value"``, "the
    wifi password is value", ``password value``), when it passes the class's test."""
    covered = 0  # end of the last value found, or of the last name (its other keywords)
    for k in _KEYWORD.finditer(text):
        start, end = k.start(), k.end()
        if start < covered or _overlapping(markers, start, start + 1):
            continue
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < len(text) and text[end] in _NAME_CHARS:
            end += 1
        covered = end  # each name is read once, however many keywords it holds
        if start > 0 and text[start - 1] in "+/=" or "--" in text[start:end]:
            continue  # inside base64 or a PEM armour line, not a name
        if text[start:end].endswith(".") and text[end : end + 1].isspace():
            continue  # "... is key. It's" ends a sentence
        name = text[start:end].strip(".-")
        kind = _class_of_name(name)
        # a bare "pass", "key" or "auth" is a word of prose too: a value follows it directly
        words = 0 if name.lower() in _AMBIGUOUS else 4
        before = _WORD_BEFORE.search(text, max(0, start - 24), start)
        if kind is None or before and before.group(1).lower() in _NOT_SECRET_PARTS:
            continue  # no secret named, or "public key", "password hash"
        pos = _SEPARATOR.match(text, end).end()
        if pos == end and end < len(text) and not text[end].isspace():
            continue  # the name runs into a path or a word
        for _ in range(8):  # the value, or up to four words (and "is", ":") before it
            m = _VALUE.match(text, pos)
            if m is None:
                break
            group = next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)
            a, b = m.span(group)
            while group == "bare" and b > a + 1 and text[b - 1] in _SENTENCE_END:
                b -= 1  # "... is X." ends a sentence
            if _CHECKS[kind](text[a:b], group != "bare"):
                covered = b
                yield SecretMatch(kind, a, b)
                break
            filler = text[a:b].lower()
            words -= filler not in ("is", "was", "now", "-", ":", "=")
            if group != "bare" or not _FILLER.fullmatch(filler) or words < 0:
                break  # (separators and the spaces skipped here never cross a line)
            pos = m.end()
            while pos < len(text) and text[pos] in " \t":
                pos += 1


# ----------------------------------------------------------------------------- screening


_HINTS = frozenset(h for rule in RULES for h in rule.hints)


def find_secrets(text: str, *, prefilter: bool = True) -> list[SecretMatch]:
    """Non-overlapping secrets in ``text`` (each the value only), in order of position.

    Where findings overlap, the most specific stands (PEM blocks, then the format rules in
    order, then context); a less specific one survives where it overlaps nothing or, holding
    the others whole, as their wider span.
    ``prefilter=False`` runs every format rule, not only those whose hints the text contains
    (the same findings, slower: the definition the pre-filter is tested against).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    low = text.lower()
    present = {h for h in _HINTS if h in low} if prefilter else set(_HINTS)
    found: list[tuple[int, int, int, str]] = [
        (s.start, s.end, -1, s.kind) for s in _private_keys(text)
    ]
    for order, rule in enumerate(RULES):
        if present.isdisjoint(rule.hints):
            continue
        for m in rule.pattern.finditer(text):
            start, end = m.span(rule.group)
            if end > start and (rule.check is None or rule.check(m.group(rule.group))):
                found.append((start, end, order, rule.kind))
    markers = [(m.start(), m.end()) for m in _MARKER_RE.finditer(text)]
    found += [(s.start, s.end, len(RULES), s.kind) for s in _assignments(text, markers)]
    found.sort(key=lambda f: (f[2], f[0], -(f[1] - f[0])))
    accepted: list[tuple[int, int, str]] = []  # in order of position, none overlapping
    for start, end, _, kind in found:
        if _overlapping(markers, start, end):
            continue  # a marker is no secret, nor part of one
        hit = _overlapping(accepted, start, end)
        if not hit or start <= accepted[hit[0]][0] and accepted[hit[-1]][1] <= end:
            kind = accepted[hit[0]][2] if len(hit) == 1 else kind
            accepted[hit.start : hit.stop] = [(start, end, kind)]
    return [SecretMatch(kind, start, end) for start, end, kind in accepted]


def redact(text: str) -> tuple[str, list[SecretMatch]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and the secrets found."""
    matches = find_secrets(text)
    ends = [0, *(m.end for m in matches)]  # where the text before each secret begins
    parts = [text[ends[i] : m.start] + MARKER.format(kind=m.kind) for i, m in enumerate(matches)]
    return "".join(parts) + text[ends[-1] :], matches


def check_mode(mode: Any) -> str:
    """``mode`` if it is one of :data:`SECRET_MODES`, else a ValueError naming them."""
    if not isinstance(mode, str) or mode not in SECRET_MODES:
        raise ValueError(f"secrets mode must be one of {SECRET_MODES}, got {mode!r}")
    return mode


def screen(text: str, mode: str = "redact", *, field: str = "content") -> tuple[str, int]:
    """Apply ``mode`` to ``text``: returns (text to store, number of secrets redacted).
    ``reject`` raises :class:`SecretFoundError` naming ``field`` and the kinds found (never the
    secret)."""
    check_mode(mode)
    if mode == "allow":
        return text, 0
    red, matches = redact(text)
    if matches and mode == "reject":
        kinds = sorted({m.kind for m in matches})
        raise SecretFoundError(
            f"{field} contains {len(matches)} secret(s) ({', '.join(kinds)}); not stored"
        )
    return red, len(matches)


def screen_query(query: str, mode: str = "redact") -> str:
    """The copy of a search query to keep (in access events): redacted unless ``allow``, never
    rejected (searching with a pasted key is not storing it)."""
    check_mode(mode)
    return query if mode == "allow" else redact(query)[0]


def screen_meta(meta: Mapping[str, Any], mode: str = "redact") -> tuple[dict[str, Any], int]:
    """:func:`screen` the text fields of a memory's metadata (``project``, ``entity``,
    ``topics``): a new dict and the number of secrets redacted."""
    out = dict(meta)
    total = 0
    for key in ("project", "entity"):
        value = out.get(key)
        if isinstance(value, str):
            out[key], n = screen(value, mode, field=key)
            total += n
    topics = out.get("topics")
    if topics is not None and not isinstance(topics, str):
        screened = []
        for t in topics:
            if isinstance(t, str):
                t, n = screen(t, mode, field="topics")
                total += n
            screened.append(t)
        out["topics"] = tuple(dict.fromkeys(screened))
    return out, total


__all__ = [
    "MARKER",
    "MIN_ENTROPY_BITS",
    "RULES",
    "Rule",
    "SECRET_MODES",
    "SecretFoundError",
    "SecretMatch",
    "check_mode",
    "find_secrets",
    "redact",
    "screen",
    "screen_meta",
    "screen_query",
    "shannon_entropy",
]
