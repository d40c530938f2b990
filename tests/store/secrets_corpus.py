"""A corpus of realistic fake secrets and tricky non-secrets for the screening tests.

Every secret is built at import time from seeded random characters in its format's shape
(prefix, length, alphabet, structure), so none is a real credential and none is a published
example key. Each case is (format, text, secret): ``secret`` occurs once in ``text`` and is
exactly what must be redacted, no more and no less.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from urllib.parse import quote

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    fmt: str
    text: str
    secret: str


def make_secrets(seed: int = 20261201) -> list[Case]:
    rng = random.Random(seed)

    def rs(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    def password(n: int = 14) -> str:
        # at least one of each class, some symbols URLs and shells tolerate
        core = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase)]
        core += [rng.choice(string.digits), rng.choice("!*^~_+-")]
        core += [rng.choice(ALNUM + "!*^~_+-") for _ in range(n - 4)]
        rng.shuffle(core)
        return "".join(core)

    def b64url(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    def jwt() -> str:
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {"sub": rs(string.digits, 10), "name": "svc-" + rs(string.ascii_lowercase, 6)}
        claims["iat"] = rng.randrange(1_600_000_000, 1_800_000_000)
        return header + "." + b64url(json.dumps(claims).encode()) + "." + rs(B64URL, 43)

    def pem_body(lines: int, sep: str = "\n") -> str:
        body = ["MII" + rs(B64, 61)] + [rs(B64, 64) for _ in range(lines - 2)]
        return sep.join([*body, rs(B64, 40) + "=="])

    cases: list[Case] = []

    def add(fmt: str, template: str, secret: str) -> None:
        cases.append(Case(fmt, template.format(s=secret), secret))

    for t in (
        "aws_access_key_id = {s}",
        "export AWS_ACCESS_KEY_ID={s}",
        "The deploy user's key is {s}; rotate it monthly.",
    ):
        add("aws_access_key_id", t, "AKIA" + rs(UPPER_DIGITS, 16))
    for t in ("temporary key {s} from sts assume-role", '"AccessKeyId": "{s}",'):
        add("aws_temporary_key_id", t, "ASIA" + rs(UPPER_DIGITS, 16))
    for t in (
        "aws_secret_access_key = {s}",
        'AWS_SECRET_ACCESS_KEY="{s}"',
        "aws_secret_key: {s}",
    ):
        add("aws_secret_access_key", t, rs(ALNUM + "/+", 40))
    for t in (
        "aws_session_token = {s}",
        "export AWS_SESSION_TOKEN={s}",
        "X-Amz-Security-Token: {s}",
    ):
        prefix = rng.choice(["IQoJb3JpZ2luX2VjE", "FwoGZXIvYXdzE"])
        add("aws_session_token", t, prefix + rs(B64, 280) + "=")
    for t in ("git remote set-url origin https://{s}@github.com/acme/api.git", "GH_TOKEN={s}"):
        add("github_classic_token", t, "ghp_" + rs(ALNUM, 36))
    for t in ("oauth token {s} for the CI app", "installation token: {s}"):
        add("github_app_token", t, rng.choice(["gho_", "ghs_", "ghu_"]) + rs(ALNUM, 36))
    for t in ("fine-grained PAT {s} (repo scope)", "GITHUB_TOKEN: {s}"):
        add("github_fine_grained_token", t, "github_pat_" + rs(ALNUM, 22) + "_" + rs(ALNUM, 59))
    for t in ("CI_JOB_TOKEN fallback: {s}", "gitlab token {s} expires in May"):
        add("gitlab_token", t, "glpat-" + rs(ALNUM + "_-", 20))
    for t in ("SLACK_BOT_TOKEN={s}", "the user token {s} posts as me"):
        kind = rng.choice(["xoxb", "xoxp"])
        add(
            "slack_token",
            t,
            f"{kind}-{rs(string.digits, 12)}-{rs(string.digits, 13)}-{rs(ALNUM.lower(), 24)}",
        )
    for t in ("alerts go to {s}", "webhook_url: {s}"):
        add(
            "slack_webhook",
            t,
            f"https://hooks.slack.com/services/T{rs(UPPER_DIGITS, 8)}/B{rs(UPPER_DIGITS, 10)}/"
            + rs(ALNUM, 24),
        )
    for t, n in (("STRIPE_SECRET_KEY={s}", 99), ("charge with {s} in prod", 24)):
        add("stripe_live_key", t, "sk_live_" + rs(ALNUM, n))
    add("stripe_restricted_key", "restricted key {s} (read-only)", "rk_live_" + rs(ALNUM, 99))
    for t in ('stripe.api_key = "{s}"', "test mode key: {s}"):
        add("stripe_test_key", t, "sk_test_" + rs(ALNUM, 99))
    add("stripe_webhook_secret", "STRIPE_WEBHOOK_SECRET={s}", "whsec_" + rs(ALNUM, 32))
    for t in ("maps key {s} restricted to our referrer", "GOOGLE_API_KEY={s}"):
        add("google_api_key", t, "AIza" + rs(ALNUM + "_-", 35))
    for t in ("Authorization: Bearer {s}", "id_token={s}", "cookie session={s}; Path=/"):
        add("jwt", t, jwt())
    for label, lines in (("RSA PRIVATE KEY", 12), ("OPENSSH PRIVATE KEY", 8)):
        body = pem_body(lines)
        add(
            "pem_private_key",
            f"key for the bastion:\n-----BEGIN {label}-----\n{{s}}\n-----END {label}-----\n"
            "Keep the passphrase in the vault.",
            body,
        )
    body = pem_body(10)
    add(
        "pem_encrypted_private_key",
        "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        f"DEK-Info: AES-128-CBC,{rs('0123456789ABCDEF', 32)}\n\n{{s}}\n"
        "-----END EC PRIVATE KEY-----",
        body,
    )
    body = pem_body(8) + "\n=" + rs(B64, 4)
    add(
        "pgp_private_key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n{s}\n"
        "-----END PGP PRIVATE KEY BLOCK-----\nimported on the build box",
        body,
    )
    public = "\n".join(rs(B64, 64) for _ in range(4))
    body = "\n".join(rs(B64, 64) for _ in range(6)) + "\n" + rs(B64, 20) + "="
    add(
        "putty_private_key",
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 4\n"
        + public
        + "\nPrivate-Lines: 7\n{s}\nPrivate-MAC: "
        + rs(LOWER_HEX, 40),
        body,
    )
    body = pem_body(9, sep="\\n")
    add(
        "pem_in_json",
        '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n'
        '-----END PRIVATE KEY-----\\n", "client_email": "svc@proj.iam.gserviceaccount.com"}}',
        body,
    )
    for t in (
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};"
        "EndpointSuffix=core.windows.net",
        "storage conn: AccountName=backup01;AccountKey={s}",
    ):
        add("azure_storage_key", t, rs(B64, 86) + "==")
    for t in (
        "https://acme.blob.core.windows.net/exports/q4.csv?sv=2022-11-02&ss=b&srt=o&sp=r"
        "&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig={s}",
        "SAS URL ?sv=2021-08-06&sr=c&sp=rwl&sig={s}&se=2026-06-01",
    ):
        add("azure_sas_token", t, quote(rs(B64, 43) + "=", safe=""))
    add(
        "azure_service_bus_key",
        "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName="
        "RootManageSharedAccessKey;SharedAccessKey={s}",
        rs(B64, 43) + "=",
    )
    for user in ("deploy", "grafana"):
        creds = base64.b64encode(f"{user}:{password()}".encode()).decode()
        add("basic_auth_header", "curl -H 'Authorization: Basic {s}' https://ci.internal/", creds)
    for t in ("SENDGRID_API_KEY={s}", "mail via {s}"):
        add("sendgrid_key", t, "SG." + rs(B64URL, 22) + "." + rs(B64URL, 43))
    for t in ("//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}"):
        add("npm_token", t, "npm_" + rs(ALNUM, 36))
    for t in ("[pypi]\nusername = __token__\npassword = {s}", "twine upload -p {s} dist/*"):
        add("pypi_token", t, "pypi-AgEIcHlwaS5vcmc" + rs(B64URL, 120))
    for t in ("VAULT_TOKEN={s}", "vault login {s}"):
        add("vault_token", t, "hvs." + rs(ALNUM + "_-", 90))
    for t in ("twilio api key {s}", "TWILIO_API_KEY={s}"):
        add("twilio_api_key", t, "SK" + rs(LOWER_HEX, 32))
    add("twilio_auth_token", "TWILIO_AUTH_TOKEN={s}", rs(LOWER_HEX, 32))
    for t in ("TELEGRAM_BOT_TOKEN={s}", "the bot answers with token {s}"):
        add(
            "telegram_bot_token",
            t,
            str(rng.randrange(10**8, 10**10)) + ":AA" + rs(ALNUM + "_-", 33),
        )
    for t in (
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/prod",
        "mysql://root:{s}@localhost:3306/shop",
        "mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/?retryWrites=true",
        "redis://:{s}@cache.internal:6379/0",
        "broker: amqp://worker:{s}@rabbit:5672/vhost",
    ):
        add("url_password", t, password())
    for t in (
        "DB_PASSWORD={s}",
        "POSTGRES_PASSWORD={s}",
        "export MYSQL_ROOT_PASSWORD='{s}'",
    ):
        add("env_password", t, password())
    for t in ("SECRET_KEY={s}", "SECRET_KEY = '{s}'", "app.config['SECRET_KEY'] = \"{s}\""):
        add("secret_key", t, rng.choice(["django-insecure-", ""]) + rs(ALNUM + "!@#%^*-_=+", 50))
    for t in (
        "client_secret={s}",
        '"client_secret": "{s}",',
        "OAUTH_CLIENT_SECRET: {s}",
    ):
        add("client_secret", t, rng.choice(["GOCSPX-", "Q8f~"]) + rs(ALNUM + "_-", 28))
    for t in (
        '{{"user": "svc_reports", "password": "{s}", "host": "10.0.0.5"}}',
        '{{"db": {{"username": "etl", "password":"{s}"}}}}',
    ):
        add("json_password", t, password())
    for t in ("Use `DB_PASSWORD={s}` in .env", "password: `{s}` (rotate monthly)"):
        add("markdown_password", t, password())
    add("yaml_password", "database:\n  user: app\n  password: {s}\n  port: 5432", password())
    add(
        "xml_password",
        "<connection><user>sa</user><password>{s}</password></connection>",
        password(),
    )
    add(
        "ado_connection_string",
        "Server=tcp:acme.database.windows.net,1433;Database=crm;User ID=crm_app;"
        "Password={s};Encrypt=True;",
        password(),
    )
    for t in (
        "The staging DB password is {s} - do not share it.",
        "my wifi password was {s}.",
        "Note: the root password is now {s}",
    ):
        add("password_in_prose", t, password())
    for t in ("OPENAI_API_KEY={s}", "client = OpenAI(api_key='{s}')"):
        add("openai_key", t, "sk-proj-" + rs(ALNUM + "_-", 74) + "T3BlbkFJ" + rs(ALNUM, 20))
    for t in ("ANTHROPIC_API_KEY={s}", "x-api-key: {s}"):
        add("anthropic_key", t, "sk-ant-api03-" + rs(ALNUM + "_-", 93) + "AA")
    for t in ("Authorization: Bearer {s}", "curl -H 'authorization: bearer {s}' api/v2/me"):
        add("bearer_token", t, rs(ALNUM, 40))
    for t in ("api_key: {s}", "X-API-KEY={s}", 'const apiKey = "{s}";'):
        add("generic_api_key", t, rs(ALNUM, 32))
    for t in ('auth_token = "{s}"', "access_token={s}&expires_in=3600"):
        add("generic_token", t, rs(ALNUM + "-_", 40))
    add(
        "discord_bot_token",
        "DISCORD_TOKEN={s}",
        rng.choice("MNO") + rs(ALNUM, 23) + "." + rs(ALNUM, 6) + "." + rs(ALNUM + "_-", 27),
    )
    add("mailchimp_key", "mailchimp key {s}", rs(LOWER_HEX, 32) + "-us" + str(rng.randrange(1, 21)))
    add("square_secret", "square oauth secret {s}", "sq0csp-" + rs(ALNUM + "_-", 43))
    return cases


SECRETS: list[Case] = make_secrets()

#: Texts with no secret in them, chosen to look like ones.
_rng = random.Random(7)


def _hex(n: int) -> str:
    return "".join(_rng.choice(LOWER_HEX) for _ in range(n))


def _uuid() -> str:
    h = _hex(32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _b64_prose(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


NON_SECRETS: list[str] = [
    # hashes and ids
    f"Fixed in commit {_hex(40)} (see the changelog).",
    f"git cherry-pick {_hex(7)} {_hex(7)}",
    f"sha256: {_hex(64)}  memlab-0.1.0.tar.gz",
    f"checksum = {_hex(64)}",
    f"docker pull ghcr.io/acme/api@sha256:{_hex(64)}",
    f"oid sha256:{_hex(64)}\nsize 1048576",
    f"cache_key = {_hex(32)}",
    f'etag: "{_hex(32)}"',
    f"request {_uuid()} took 230 ms",
    f"token_id = {_uuid()}",
    f"api_key_id: {_uuid()}",
    f'{{"trace_id": "{_hex(32)}", "span_id": "{_hex(16)}"}}',
    f"session {_uuid()} closed by the user",
    f"md5 of the file is {_hex(32)}",
    # base64 of prose and data
    f"The payload was {_b64_prose('The quick brown fox jumps over the lazy dog')}",
    f"decoded banner: {_b64_prose('Welcome to the staging cluster, be nice')}",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    f'"integrity": "sha512-{_b64_prose("not a secret, just a lockfile digest value!!")}"',
    f"basic idea: {_b64_prose('idea without any separator in it')}",
    # versions
    "Upgraded numpy==1.26.4 and scipy>=1.11.0 on Python 3.11.7",
    "release v2.14.3-rc.1+build.20260105 is out",
    "node v20.11.0, npm 10.2.4, pnpm 8.15.1",
    "kernel 6.5.0-1022-azure #23~22.04.1-Ubuntu SMP",
    # prose about passwords, secrets, tokens and keys
    "Reset your password every 90 days and never reuse an old one.",
    "The password is stored as a bcrypt hash, never in clear.",
    "Her password was reset yesterday after the phishing test.",
    "The secret is Patience, said the baker.",
    "My password is: see the password manager",
    "the api token is rotated every 30 days by the scheduler",
    "The password field must be at least 12 characters long.",
    "password: see the team vault",
    "password = correcthorsebatterystaple",
    "Password: Whatever you choose, make it long.",
    "Never paste your API key into a chat window.",
    "Set DB_PASSWORD in the environment, not in code.",
    "The secret to good bread is time.",
    "secret_name: prod-db-credentials",
    "password_min_length = 12",
    "PASSWORD_RESET_TIMEOUT = 259200",
    "token_type: Bearer",
    "max_tokens = 4096",
    "The tokenizer splits max_connections into two tokens.",
    "password: ${DB_PASSWORD}",
    'api_key = os.environ["API_KEY"]',
    "export GITHUB_TOKEN=$(gh auth token)",
    "DB_PASSWORD=<your password here>",
    "password: ********",
    "client_secret: REDACTED",
    "session_token_ttl = 3600",
    "Send the bearer token in the Authorization header.",
    "Bearer of bad news arrived today",
    "Basic authentication is deprecated for the API.",
    "Stripe keys start with sk_live_ or sk_test_; publishable ones with pk_.",
    f"publishable key pk_live_{''.join(_rng.choice(ALNUM) for _ in range(24))} is safe in JS",
    "Files starting with -----BEGIN RSA PRIVATE KEY----- must never be committed; if one leaks,"
    " rotate it and tell security. That is the whole policy.",
    "The header line -----BEGIN OPENSSH PRIVATE KEY----- marks a key.\nNothing follows here.",
    "A key file has -----BEGIN RSA PRIVATE KEY----- then the key then -----END RSA PRIVATE KEY-----"
    " lines, nothing else.",
    "Files starting with -----BEGIN EC PRIVATE KEY----- must never be committed to the repository"
    " or shared in chat because anyone holding them can sign as us",
    # files and URLs without credentials
    "pwd: /srv/app/releases/2026-01-05",
    "The key lives in /home/alice/.ssh/id_ed25519 (mode 600).",
    r"C:\Users\bob\AppData\Roaming\secrets\config.json",
    "https://github.com/acme/api/blob/main/src/auth/token.py#L42",
    "postgres://db.internal:5432/prod (credentials come from the environment)",
    "clone ssh://git@github.com:22/acme/api.git",
    "https://user@example.com/dav/notes",
    "https://example.com:8443/api/v1/search?q=password+reset&page=2",
    "password_reset_url = https://accounts.example.com/reset",
    "arn:aws:iam::123456789012:role/deploy-readonly",
    "see https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html",
    # look-alikes
    "Meeting at 12:30:45, bot 123456789 posted the agenda.",
    "ACCESS_DENIED for ACME_CORP_ADMINISTRATORS on the new bucket",
    "AbstractSingletonProxyFactoryBeanConfigurationHolderImpl is a class name",
    "IPv6 2001:0db8:85a3:0000:0000:8a2e:0370:7334 and MAC 00:1b:44:11:3a:b7",
    "colours #1e90ff and #ff6347, build 20260105.3",
    "slack channel C024BE91L and user U0G9QF9C6",
    "She wrote eyJ at the start of every JSON blob she base64-encoded.",
    "max_connections = 200 and shared_buffers = 4GB in postgresql.conf",
    "The café on Müllerstraße opens at 07:00.",
]
