"""Secret screening: find credentials in any text the store keeps, then reject, redact or allow.

The rule set has two sources.

* **detect-secrets** (Yelp, 1.5.0): the regular expressions of its regex plugins (AWS access key
  ids and quoted secret keys, Azure storage account keys, credentials in URLs, GitHub, GitLab,
  Slack, SendGrid, PyPI, Telegram, Twilio, Discord, Mailchimp, Square, OpenAI) are taken from
  the plugins' public ``denylist`` attributes, its keyword list (``keyword.DENYLIST``) names the
  assignments worth a look, and its JWT plugin's ``is_formally_valid`` checks JSON web tokens.
  detect-secrets reports *values* per line, not positions, and several of its expressions stop
  short of the secret's end (Stripe keys: 24 characters of today's 99; JWT: the signature is
  matched lazily, i.e. not at all) or run to the end of the line (npm), so the patterns are run
  here with ``finditer``, fenced with token boundaries, and only where their match is exactly
  the secret.
* **memlab's own rules** for what detect-secrets lacks or gets imprecise: Stripe live and test
  keys of any length, Azure SAS signatures and Service Bus keys, ``Authorization: Basic``
  headers, npm and Vault tokens, AWS session tokens, GitHub fine-grained tokens, Google API
  keys, ``sk-`` API keys, PEM private key blocks, passwords in connection URLs, ``Bearer``
  tokens, and ``NAME = value`` / ``"name": "value"`` / ``<name>value</name>`` assignments whose
  name says password, secret, token or key and whose value is credible (not a placeholder, a
  path, a URL, a prose word; for token-like names: random-looking).

Redaction is span-exact: only the secret value is replaced by ``[REDACTED:<kind>]``; the key
name, the quotes and every character outside the secret are kept (a PEM block keeps its
``BEGIN``/``END`` lines and loses its body; a header mentioned in prose is no secret at all).
The original is stored nowhere (that is the point), so screening is the one place where given
text is changed. Screening is idempotent: a redacted text has nothing left to redact.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SECRET_MODES: tuple[str, ...] = ("reject", "redact", "allow")

#: The marker that replaces a secret: ``[REDACTED:<kind>]``.
MARKER = "[REDACTED:{kind}]"
_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")

#: Bits per character a token-like value must reach (Shannon entropy of its characters).
MIN_ENTROPY_BITS = 3.0


class SecretFoundError(ValueError):
    """Raised in ``reject`` mode when a text contains a secret."""


@dataclass(frozen=True)
class SecretMatch:
    """One secret: its kind and its span ``text[start:end]`` (the value only)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Rule:
    """One detector: a pattern, the group that is the secret, an optional check of the value.

    ``source`` says where the pattern comes from (``"detect-secrets:<Plugin>"`` or
    ``"memlab"``).
    """

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    check: Callable[[str], bool] | None = None
    source: str = "memlab"


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``'s character distribution."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# ----------------------------------------------------------------------------- value checks

_L = r"(?<![A-Za-z0-9_])"  # the token starts here
_R = r"(?![A-Za-z0-9_])"  # ... and ends here


def _bounded(pattern: re.Pattern[str], right: bool = True) -> re.Pattern[str]:
    return re.compile(_L + "(?:" + pattern.pattern + ")" + (_R if right else ""), pattern.flags)


_CLASSES = tuple(re.compile(p) for p in ("[a-z]", "[A-Z]", "[0-9]", "[^A-Za-z0-9]"))


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters ``value`` mixes."""
    return sum(1 for c in _CLASSES if c.search(value))


def _random_looking(value: str) -> bool:
    """A character distribution of a random string: letters and digits mixed, or (a random
    string may draw no digit) upper and lower case mixed as no identifier mixes them."""
    if shannon_entropy(value) < MIN_ENTROPY_BITS or not any(c.isalpha() for c in value):
        return False
    if any(c.isdigit() for c in value):
        return True
    letters = [c for c in value if c.isalpha()]
    upper = sum(c.isupper() for c in letters) / len(letters)
    return len(value) >= 20 and 0.25 <= upper <= 0.75 and shannon_entropy(value) >= 4.0


def _mixed_alnum(value: str) -> bool:
    return _classes(value) >= 3 or (_classes(value) == 2 and shannon_entropy(value) >= 3.5)


def _basic_auth(value: str) -> bool:
    """``Basic <base64>`` whose payload decodes to printable ``user:password``."""
    if len(value) % 4:
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep and password) and decoded.isprintable()


_PLACEHOLDERS = frozenset(
    """none null nil true false yes no password passwd secret token key value redacted hidden
    masked required optional string str example placeholder changeme todo tbd undefined empty
    env see here your mine unset default auto same blank n/a na""".split()
)
#: Parts of a name that make an assignment about a secret rather than the secret itself.
_NOT_SECRET_PARTS = frozenset(
    """policy hint length len min max reset field prompt strength rule rules expiry expires
    expiration age rotation label changed required url uri path file dir id ids name names type
    types count format mode enabled regex pattern validator manager store arn ref version
    header location endpoint kind limit timeout ttl size prefix""".split()
)

_FORMAT_SLOT = re.compile(r"%(?:\(\w+\)[sdr]|[sdr]$|\w+%$)")  # %(pw)s, %s, %DB_PASS%
_PATHLIKE = re.compile(r"(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]*)+|[A-Za-z]:\\\S*")


def _placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    return (
        not v
        or v[0] in "$<{[("
        or bool(_FORMAT_SLOT.match(v))
        or "(" in v
        or "{{" in v
        or len(set(v)) <= 2
        or low in _PLACEHOLDERS
        or low.startswith(("your", "my_", "my-", "<", "example", "xxx", "***", "process.env"))
        or "://" in v
        or bool(_PATHLIKE.fullmatch(v))
        or bool(_MARKER_RE.search(v))
    )


def _credible_password(value: str, quoted: bool) -> bool:
    """A value given to a password-like name: not a placeholder, not a prose word."""
    if _placeholder(value) or " " in value.strip():
        return False
    if quoted:
        return len(value) >= 4
    if len(value) < 6:
        return False
    if value.isalpha() and (value.islower() or value.istitle()):
        return False  # a word: "password: Whatever" is prose
    return _classes(value) >= 2


def _credible_secret(value: str, quoted: bool) -> bool:
    if _placeholder(value) or " " in value.strip() or len(value) < 8:
        return False
    if value.isalpha() and (value.islower() or value.istitle() or value.isupper()):
        return False
    return _classes(value) >= 2


def _credible_token(value: str, quoted: bool) -> bool:
    if _placeholder(value) or len(value) < 16 or " " in value:
        return False
    return _random_looking(value)


#: Keyword classes of assignment names: (kind, keyword pattern, value check). detect-secrets'
#: keyword list is added to the matching class when it loads.
_NAME_CLASSES: tuple[tuple[str, tuple[str, ...], Callable[[str, bool], bool]], ...] = (
    (
        "password",
        ("password", "passwd", "pwd", "passphrase", "db_?pass", "key_?pass", "contrase(?:ñ|n)a"),
        _credible_password,
    ),
    (
        "secret",
        ("secret", "priv_?key", "private_?key", "signing_?key", "encryption_?key"),
        _credible_secret,
    ),
    (
        "token",
        (
            "token",
            "api_?key",
            "auth_?key",
            "access_?key",
            "account_?key",
            "service_?key",
            "client_?key",
            "db_?key",
            "database_?key",
            "master_?key",
            "credentials?",
            "sas",
            "signature",
        ),
        _credible_token,
    ),
)

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# After the name: closing quote, separator, then a quoted or bare value.
_ASSIGNMENT_VALUE = re.compile(
    r"""["'\]]{0,2}(?:[ \t]*(?::=|=>|=|:)[ \t]*|(?P<prose>[ \t]+(?:is|was)[ \t]+(?:now[ \t]+)?))"""
    r"""(?:"(?P<dq>[^"\n]{1,2048})"|'(?P<sq>[^'\n]{1,2048})'|`(?P<bq>[^`\n]{1,2048})`"""
    r"""|(?P<bare>[^\s"'`,;&()\]}>]{1,2048}))"""
)
_XML_VALUE = re.compile(r">(?P<bare>[^<\s]{1,2048})</")


def _name_parts(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [p for p in re.split(r"[_.\-]+", spaced.lower()) if p]


# ----------------------------------------------------------------------------- rule set

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


#: Lower-case substrings one of which a text must hold for a kind's rules to be run at all (each
#: rule's match contains one); a cheap pre-filter, as a regex starting with a look-behind
#: cannot skip ahead to a literal prefix.
_HINTS: dict[str, tuple[str, ...]] = {
    "stripe_key": ("sk_", "rk_", "whsec_"),
    "github_token": ("gh", "github_pat_"),
    "google_api_key": ("aiza",),
    "aws_session_token": ("iqojb3jpz2lu", "fwogzxivyxdz", "token"),
    "aws_secret_access_key": ("aws",),
    "aws_access_key_id": ("a3t", "abia", "acca", "akia", "asia"),
    "azure_sas_token": ("sig=",),
    "azure_key": ("sharedaccesskey",),
    "azure_storage_key": ("accountkey=",),
    "basic_auth": ("basic",),
    "npm_token": ("npm_", "_auth"),
    "vault_token": ("s.",),
    "api_key": ("sk-",),
    "jwt": ("eyj",),
    "gitlab_token": ("gl", "gr1348941"),
    "sendgrid_key": ("sg.",),
    "pypi_token": ("pypi-",),
    "telegram_bot_token": (":",),
    "twilio_key": ("ac", "sk"),
    "discord_token": (".",),
    "mailchimp_key": ("-us",),
    "square_secret": ("sq0csp-",),
    "slack_webhook": ("hooks.slack.com",),
    "slack_token": ("xox",),
    "url_password": ("://",),
    "token": ("bearer",),
}
#: The same for the keyword classes of assignments (every keyword contains one of these).
_NAME_HINTS: dict[str, tuple[str, ...]] = {
    "password": ("pass", "pwd", "contras"),
    "secret": ("secret", "priv", "signing", "encryption"),
    "token": ("token", "key", "credential", "sas", "signature"),
}


@functools.lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The regex rules, specific ones first (detect-secrets is imported on first use)."""
    from detect_secrets.plugins import (
        aws,
        azure_storage_key,
        basic_auth,
        discord,
        github_token,
        gitlab_token,
        mailchimp,
        openai,
        pypi_token,
        sendgrid,
        slack,
        square_oauth,
        telegram_token,
        twilio,
    )

    ds = "detect-secrets:"
    out: list[Rule] = [
        # memlab's own, specific formats
        Rule("stripe_key", re.compile(_L + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}" + _R)),
        Rule("stripe_key", re.compile(_L + r"whsec_[A-Za-z0-9+/=]{24,}" + _R)),
        Rule("github_token", re.compile(_L + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _R)),
        Rule("github_token", re.compile(_L + r"github_pat_[A-Za-z0-9_]{22,255}" + _R)),
        Rule("google_api_key", re.compile(_L + r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
        Rule(
            "aws_session_token",
            re.compile(_L + r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{60,}"),
        ),
        Rule(
            "aws_session_token",
            re.compile(
                r"(?i)(?:aws_session_token|aws_security_token|x-amz-security-token)"
                r"""["']?\s*[:=]\s*["']?(?P<v>[A-Za-z0-9/+=]{60,})"""
            ),
            "v",
        ),
        Rule(
            "aws_secret_access_key",
            re.compile(
                r"""(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?"""
                r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
            ),
            "v",
        ),
        Rule(
            "azure_sas_token",
            re.compile(r"(?i)(?<=[?&;])sig=(?P<v>[A-Za-z0-9%+/=]{20,200})"),
            "v",
            _random_looking,
        ),
        Rule(
            "azure_key",
            re.compile(r"(?i)SharedAccessKey=(?P<v>[A-Za-z0-9+/]{42,44}={0,2})(?![A-Za-z0-9+/=])"),
            "v",
        ),
        Rule(
            "basic_auth",
            re.compile(r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
            "v",
            _basic_auth,
        ),
        Rule("npm_token", re.compile(_L + r"npm_[A-Za-z0-9]{36}" + _R)),
        Rule("npm_token", re.compile(r"_auth(?:Token)?\s*=\s*(?P<v>[^\s\"']{16,})"), "v"),
        Rule("vault_token", re.compile(_L + r"hv[sbr]\.[A-Za-z0-9_-]{24,}(?![A-Za-z0-9_-])")),
        Rule("vault_token", re.compile(_L + r"s\.[A-Za-z0-9]{24}" + _R), 0, _mixed_alnum),
        Rule(
            "api_key",
            re.compile(
                _L + r"sk-(?:proj-|ant-(?:[a-z]+\d\d-)?|svcacct-|admin-|live-|test-)?"
                r"[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])"
            ),
            0,
            _random_looking,
        ),
        Rule(
            "jwt",
            re.compile(
                _L + r"eyJ[A-Za-z0-9_-]{8,}={0,2}\.[A-Za-z0-9_-]{8,}={0,2}\.[A-Za-z0-9_-]*={0,2}"
                r"(?![A-Za-z0-9_=-])"
            ),
            0,
            _jwt_valid,
            ds + "JwtTokenDetector (validity check)",
        ),
    ]
    # detect-secrets' expressions where the match is exactly the secret:
    # (kind, plugin, index in its denylist or None for all, secret group, fence with boundaries)
    taken: list[tuple[str, type, int | None, int, bool]] = [
        ("aws_access_key_id", aws.AWSKeyDetector, 0, 0, True),
        ("aws_secret_access_key", aws.AWSKeyDetector, 1, 1, False),
        ("github_token", github_token.GitHubTokenDetector, None, 0, True),
        ("gitlab_token", gitlab_token.GitLabTokenDetector, None, 0, True),
        ("sendgrid_key", sendgrid.SendGridDetector, None, 0, True),
        ("pypi_token", pypi_token.PypiTokenDetector, None, 0, True),
        ("telegram_bot_token", telegram_token.TelegramBotTokenDetector, None, 0, True),
        ("twilio_key", twilio.TwilioKeyDetector, None, 0, True),
        ("discord_token", discord.DiscordBotTokenDetector, None, 0, True),
        ("mailchimp_key", mailchimp.MailchimpDetector, None, 0, True),
        ("square_secret", square_oauth.SquareOAuthDetector, None, 0, True),
        ("api_key", openai.OpenAIDetector, None, 0, True),
        ("slack_webhook", slack.SlackDetector, 1, 0, True),
        ("slack_token", slack.SlackDetector, 0, 0, True),
        ("url_password", basic_auth.BasicAuthDetector, None, 1, False),
    ]
    for kind, plugin, index, group, fence in taken:
        patterns = list(plugin.denylist) if index is None else [plugin.denylist[index]]
        check = _url_password_ok if kind == "url_password" else None
        for pattern in patterns:
            compiled = _bounded(pattern) if fence else pattern
            out.append(Rule(kind, compiled, group, check, ds + plugin.__name__))
    azure = azure_storage_key.AzureStorageKeyDetector.denylist[0]  # AccountKey=<88>: keep name
    out.append(
        Rule(
            "azure_storage_key",
            re.compile(r"(?<=AccountKey=)" + azure.pattern.removeprefix("AccountKey=")),
            0,
            None,
            ds + "AzureStorageKeyDetector",
        )
    )
    out += [
        # credentials in URLs the detect-secrets expression leaves out (!, $, * ... in them)
        Rule(
            "url_password",
            re.compile(
                r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@?#\"'<>]{0,128}:"
                r"(?P<v>[^\s/?#\"'<>]{1,256})@(?=[A-Za-z0-9\[])"
            ),
            "v",
            _url_password_ok,
        ),
        Rule(
            "token",
            re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])"),
            "v",
            _random_looking,
        ),
    ]
    return tuple(out)


def _jwt_valid(token: str) -> bool:
    from detect_secrets.plugins.jwt import JwtTokenDetector

    return bool(JwtTokenDetector.is_formally_valid(token))


def _url_password_ok(value: str) -> bool:
    return not _placeholder(value) and not value.isdigit()


@functools.lru_cache(maxsize=1)
def _keyword_classes() -> tuple[
    tuple[str, re.Pattern[str], Callable[[str, bool], bool], tuple[str, ...]], ...
]:
    """(kind, keyword pattern, value check, pre-filter hints) per class of assignment name."""
    from detect_secrets.plugins.keyword import DENYLIST

    out = []
    used: set[str] = set()
    for kind, words, check in _NAME_CLASSES:
        extra = [w for w in DENYLIST if w not in used and _keyword_class(w) == kind]
        alts = [w.replace("_?", "[_-]?") for w in dict.fromkeys([*words, *extra])]
        used.update(alts)
        hints = _NAME_HINTS[kind]
        if not all(any(h in w for h in hints) for w in alts):
            hints = ("",)  # a keyword without a known hint: no pre-filter for this class
        out.append((kind, re.compile("(?i)(?:" + "|".join(alts) + ")"), check, hints))
    return tuple(out)


def _keyword_class(word: str) -> str:
    if any(k in word for k in ("pass", "pwd", "contras")):
        return "password"
    if "secret" in word or "priv" in word:
        return "secret"
    return "token"


def _assignments(text: str, present: frozenset[str]) -> Iterable[SecretMatch]:
    """``name = value`` / ``"name": "value"`` / ``<name>value</name>`` with a credible value.

    ``present`` holds the pre-filter hints found in ``text.lower()`` (:func:`_present_hints`).
    """
    seen: set[int] = set()
    for kind, keyword, check, hints in _keyword_classes():
        if present.isdisjoint(hints):
            continue
        covered = 0  # end of the last value found: names inside it are part of the secret
        for k in keyword.finditer(text):
            start, end = k.start(), k.end()
            if start < covered:
                continue
            lo = max(0, start - 64)
            while start > lo and text[start - 1] in _NAME_CHARS:
                start -= 1
            hi = min(len(text), end + 64)
            while end < hi and text[end] in _NAME_CHARS:
                end += 1
            if end in seen:
                continue
            seen.add(end)
            m = _ASSIGNMENT_VALUE.match(text, end)
            if m is None and start > 0 and text[start - 1] == "<":
                m = _XML_VALUE.match(text, end)
            if m is None:
                continue
            name = text[start:end].strip(".-")
            if (
                len(name) > 48
                or (start > 0 and text[start - 1] in "+/=")  # inside base64, not a name
                or any(p in _NOT_SECRET_PARTS for p in _name_parts(name))
            ):
                continue
            group = next(g for g in ("dq", "sq", "bq", "bare") if m.groupdict().get(g) is not None)
            value_start, value_end = m.span(group)
            if m.groupdict().get("prose") and text[value_end - 1] == ".":
                value_end -= 1  # "the password is X." ends a sentence
            if group == "bare" and text[value_start] == "=":
                continue  # "==" is base64 padding, not an assignment
            if value_end > value_start and check(text[value_start:value_end], group != "bare"):
                covered = value_end
                yield SecretMatch(kind, value_start, value_end)


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


@functools.lru_cache(maxsize=1)
def _rules_by_hint() -> dict[str, tuple[int, ...]]:
    """Pre-filter hint -> the positions in :func:`rules` of the rules it lets run."""
    out: dict[str, list[int]] = {}
    for order, rule in enumerate(rules()):
        for h in _HINTS[rule.kind]:
            out.setdefault(h, []).append(order)
    return {h: tuple(orders) for h, orders in out.items()}


@functools.lru_cache(maxsize=1)
def _all_hints() -> tuple[str, ...]:
    hints = {h for hs in _HINTS.values() for h in hs}
    hints.update(h for *_, hs in _keyword_classes() for h in hs)
    return tuple(sorted(hints))


def _present_hints(low: str) -> frozenset[str]:
    """The pre-filter hints (of rules and assignment names) that ``low`` contains, each looked
    for once per text."""
    return frozenset([h for h in _all_hints() if h in low])


def find_secrets(text: str, *, prefilter: bool = True) -> list[SecretMatch]:
    """Non-overlapping secrets in ``text``, in order of position.

    Each match spans the secret value only. Where rules overlap, the most specific rule's span
    and kind stand (PEM blocks, then the format rules in order, then assignments); a less
    specific match survives only where it overlaps nothing or contains the whole span.

    ``prefilter`` (default) runs only the rules and assignment classes whose hints the text
    contains, a speed-up with the same findings; ``prefilter=False`` runs every one of them
    (the definition the pre-filter is tested against).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    found: list[tuple[int, int, int, str]] = []
    markers = [(m.start(), m.end()) for m in _MARKER_RE.finditer(text)]
    table = rules()
    if prefilter:
        present = _present_hints(text.lower())
        by_hint = _rules_by_hint()
        orders = sorted({order for h in present for order in by_hint.get(h, ())})
    else:
        present, orders = frozenset(_all_hints()), list(range(len(table)))
    for order in orders:
        rule = table[order]
        for m in rule.pattern.finditer(text):
            start, end = m.span(rule.group)
            if start < 0 or end <= start:
                continue
            if rule.check is not None and not rule.check(m.group(rule.group)):
                continue
            found.append((start, end, order, rule.kind))
    n = len(table)
    for s in _private_keys(text):
        found.append((s.start, s.end, -1, s.kind))
    for s in _assignments(text, present):
        found.append((s.start, s.end, n, s.kind))
    found = [f for f in found if not any(a < f[1] and f[0] < b for a, b in markers)]
    # Overlaps: the more specific rule's span stands; a less specific match is taken only
    # where it overlaps nothing, or where it covers a whole accepted span (a longer value).
    found.sort(key=lambda f: (f[2], f[0], -(f[1] - f[0])))
    accepted: list[tuple[int, int, str]] = []
    for start, end, _, kind in found:
        overlapping = [a for a in accepted if a[0] < end and start < a[1]]
        if not overlapping:
            accepted.append((start, end, kind))
        elif all(start <= a[0] and a[1] <= end for a in overlapping):
            kind = overlapping[0][2] if len(overlapping) == 1 else kind
            accepted = [a for a in accepted if a not in overlapping] + [(start, end, kind)]
    return [SecretMatch(kind, start, end) for start, end, kind in sorted(accepted)]


def redact(text: str) -> tuple[str, list[SecretMatch]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and the secrets found."""
    matches = find_secrets(text)
    if not matches:
        return text, matches
    parts: list[str] = []
    pos = 0
    for m in matches:
        parts.append(text[pos : m.start])
        parts.append(MARKER.format(kind=m.kind))
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), matches


def check_mode(mode: Any) -> str:
    """``mode`` if it is one of :data:`SECRET_MODES`, else a ValueError naming them."""
    if not isinstance(mode, str) or mode not in SECRET_MODES:
        raise ValueError(f"secrets mode must be one of {SECRET_MODES}, got {mode!r}")
    return mode


def screen(text: str, mode: str = "redact", *, field: str = "content") -> tuple[str, int]:
    """Apply ``mode`` to ``text``: returns (text to store, number of secrets redacted).

    ``reject`` raises :class:`SecretFoundError` naming ``field`` and the kinds found (never the
    secret); ``redact`` replaces each secret value with ``[REDACTED:<kind>]``; ``allow``
    returns the text unchanged.
    """
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
    """The copy of a search query to keep (in access events): redacted unless ``allow``.

    A query is never rejected (searching with a pasted key is not storing it); only the copy
    the store keeps is redacted, in ``reject`` mode as in ``redact`` mode.
    """
    check_mode(mode)
    return query if mode == "allow" else redact(query)[0]


def screen_meta(meta: Mapping[str, Any], mode: str = "redact") -> tuple[dict[str, Any], int]:
    """Screen the text fields of a memory's metadata (``project``, ``entity``, ``topics``).

    Returns a new dict (other keys unchanged) and the number of secrets redacted; ``reject``
    raises :class:`SecretFoundError` naming the field.
    """
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
    "Rule",
    "SECRET_MODES",
    "SecretFoundError",
    "SecretMatch",
    "check_mode",
    "find_secrets",
    "redact",
    "rules",
    "screen",
    "screen_meta",
    "screen_query",
    "shannon_entropy",
]
