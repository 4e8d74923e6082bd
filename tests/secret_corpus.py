"""A corpus of secrets, personal data and look-alikes, generated at test time.

Nothing here is a real credential: every key, token, number and password is drawn from random
characters when the tests run (a fixed seed keeps failures reproducible), so the repository never
holds a string a secret scanner should flag. Personal numbers with a check digit are drawn until
the check digit is right, as a real one would be.

Each case is (name, text as a user would write it, the part that must never be echoed back).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any

Case = tuple[str, str, str]

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


class Draw:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        # A real key mixes its character classes; redraw the rare draw that does not.
        while True:
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            kinds = [set(value) & set(group) for group in (UPPER, LOWER, DIGITS)
                     if set(group) & set(alphabet)]
            if all(kinds) or n < 12:
                return value

    def password(self) -> str:
        return (self.chars(LOWER, 4) + self.rng.choice("!#%&*") + self.chars(DIGITS, 3)
                + self.chars(UPPER, 3))

    def digits(self, n: int, first: str = "123456789") -> str:
        return self.rng.choice(first) + self.chars(DIGITS, n - 1)

    def until(self, make: Callable[[], str], valid: Callable[[str], Any]) -> str:
        for _ in range(10_000):
            value = make()
            if valid(value):
                return value
        raise AssertionError("no valid value drawn")


def _luhn_complete(partial: str) -> str:
    total = 0
    for position, char in enumerate(reversed(partial + "0")):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return partial + str((10 - total % 10) % 10)


def _uuid(d: Draw) -> str:
    return "-".join(d.chars(HEX, n) for n in (8, 4, 4, 4, 12))


def secrets(seed: int = 14) -> list[Case]:
    d = Draw(seed)
    pem = "\n".join(d.chars(B64, 64) for _ in range(4))
    # (name, the text with {} where the secret goes, the secret)
    table = [
        ("aws-access-key-id", "Deploy used {} yesterday", "AKIA" + d.chars(UPPER + DIGITS, 16)),
        ("aws-temporary-key-id", "the session key is {}", "ASIA" + d.chars(UPPER + DIGITS, 16)),
        ("aws-secret-in-prose", "The AWS secret access key is {} for prod", d.chars(B64, 40)),
        ("aws-secret-ini", "aws_secret_access_key = {}", d.chars(B64, 40)),
        ("aws-secret-env", "AWS_SECRET_ACCESS_KEY={}", d.chars(B64, 40)),
        ("db-password-env", "DB_PASSWORD={}", d.password()),
        ("root-pw-prose", "the root pw is {}", d.password()),
        ("password-yaml", "password: {}", d.password()),
        ("password-sentence", "the staging password is {}", d.password()),
        ("passphrase", "GPG passphrase = {}", d.password()),
        ("cli-password-flag", "run it with --password={}", d.password()),
        ("netrc", "machine api.example.net login deploy password {}", d.password()),
        ("redis-url-no-user", "cache at redis://:{}@cache.internal:6379/0", d.password()),
        ("postgres-url", "postgres://app:{}@db.internal:5432/app", d.password()),
        ("mongodb-srv", "mongodb+srv://svc:{}@cluster0.example.net/x", d.chars(ALNUM, 16)),
        ("https-userinfo", "clone https://ci:{}@git.example.com/a.git", d.chars(ALNUM, 20)),
        ("slack-webhook", "alerts go to https://hooks.slack.com/services/T"
         + d.chars(UPPER + DIGITS, 8) + "/B" + d.chars(UPPER + DIGITS, 10) + "/{}",
         d.chars(ALNUM, 24)),
        ("slack-bot-token", "bot {}",
         f"xoxb-{d.digits(12)}-{d.digits(12)}-{d.chars(LOWER + DIGITS, 24)}"),
        ("slack-user-token", "user token {}",
         f"xoxp-{d.digits(11)}-{d.digits(11)}-{d.chars(LOWER + DIGITS, 32)}"),
        ("private-key-pem", "-----BEGIN RSA PRIVATE KEY-----\n{}\n", pem),
        ("private-key-body-only", "the key file holds:\n{}", "MIIE" + pem[4:]),
        ("openssh-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{}",
         d.chars(B64, 40)),
        ("azure-storage-connection", "DefaultEndpointsProtocol=https;AccountName=acmelogs;"
         "AccountKey={};EndpointSuffix=core.windows.net", d.chars(B64, 86) + "=="),
        ("azure-service-bus", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName="
         "RootManageSharedAccessKey;SharedAccessKey={}", d.chars(B64, 43) + "="),
        ("azure-sas-token", "https://acme.blob.core.windows.net/logs?sv=2022-11-02&ss=b&srt=sco"
         "&sp=rl&se=2027-01-01T00:00:00Z&sig={}", d.chars(ALNUM, 43) + "%3D"),
        ("npm-token", "publish with {}", "npm_" + d.chars(ALNUM, 36)),
        ("npmrc-auth-token", "//registry.npmjs.org/:_authToken={}", _uuid(d)),
        ("hex-64-key", "the HMAC signing key is {}", d.chars(HEX, 64)),
        ("base64-44-key", "encryption key {} for backups", d.chars(B64, 43) + "="),
        ("twilio-api-key", "twilio {}", "SK" + d.chars(HEX, 32)),
        ("twilio-auth-token", "TWILIO_AUTH_TOKEN={}", d.chars(HEX, 32)),
        ("sendgrid", "SENDGRID {}", f"SG.{d.chars(URLSAFE, 22)}.{d.chars(URLSAFE, 43)}"),
        ("discord-bot", "discord bot {}",
         f"M{d.chars(ALNUM, 25)}.{d.chars(ALNUM, 6)}.{d.chars(URLSAFE, 27)}"),
        ("heroku-api-key", "HEROKU_API_KEY={}", _uuid(d)),
        ("authorization-basic", "send Authorization: Basic {}", d.chars(B64, 30) + "=="),
        ("authorization-bearer", "Authorization: Bearer {}", d.chars(URLSAFE, 40)),
        ("mailgun", "mailgun {}", "key-" + d.chars(HEX, 32)),
        ("shopify-access", "shop token {}", "shpat_" + d.chars(HEX, 32)),
        ("huggingface", "HF {}", "hf_" + d.chars(UPPER + LOWER, 34)),
        ("digitalocean", "doctl auth with {}", "dop_v1_" + d.chars(HEX, 64)),
        ("pypi-token", "twine uses {}", "pypi-AgEIcHlwaS5vcmc" + d.chars(URLSAFE, 80)),
        ("telegram-bot", "telegram {}", f"{d.digits(9)}:AA{d.chars(URLSAFE, 33)}"),
        ("datadog-api-key", "DD_API_KEY={}", d.chars(HEX, 32)),
        ("datadog-app-key", "datadog application key: {}", d.chars(HEX, 40)),
        ("rails-secret-key-base", "secret_key_base: {}", d.chars(HEX, 128)),
        ("gcp-private-key-id", '"private_key_id": "{}"', d.chars(HEX, 40)),
        ("stripe-webhook-secret", "webhook {}", "whsec_" + d.chars(ALNUM, 32)),
        ("stripe-live-key", "stripe {}", "sk_live_" + d.chars(ALNUM, 24)),
        ("stripe-restricted-key", "stripe {}", "rk_live_" + d.chars(ALNUM, 24)),
        ("github-classic-token", "token {} for CI", "ghp_" + d.chars(ALNUM, 36)),
        ("github-fine-grained", "{}",
         f"github_pat_11{d.chars(UPPER + DIGITS, 20)}_{d.chars(ALNUM, 59)}"),
        ("github-app-token", "app {}", "ghs_" + d.chars(ALNUM, 36)),
        ("gitlab-token", "runner {}", "glpat-" + d.chars(URLSAFE, 20)),
        ("google-api-key", "maps {}", "AIza" + d.chars(URLSAFE, 35)),
        ("google-oauth-secret", "client secret {}", "GOCSPX-" + d.chars(URLSAFE, 28)),
        ("openai-key", "the key {} works", "sk-proj-" + d.chars(URLSAFE, 48)),
        ("anthropic-key", "{}", "sk-ant-api03-" + d.chars(URLSAFE, 80)),
        ("jwt", "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI{}."
         + d.chars(URLSAFE, 43), d.chars(ALNUM, 30)),
        ("api-key-assignment", "API_KEY={} for the sandbox", d.chars(ALNUM, 12)),
        ("client-secret-yaml", "client_secret: {}", d.chars(URLSAFE + "~.", 40)),
        ("artifactory", "artifactory {}", "AKCp8" + d.chars(ALNUM, 68)),
        ("mailchimp", "mailchimp {}", d.chars(HEX, 32) + "-us12"),
        ("square", "square {}", "sq0atp-" + d.chars(URLSAFE, 22)),
        ("sentry-dsn", "SENTRY_DSN=https://{}@o4505.ingest.sentry.io/45", d.chars(HEX, 32)),
        ("docker-auth", '"auths": {{"ghcr.io": {{"auth": "{}"}}}}', d.chars(B64, 40)),
        ("kubernetes-token", "token: {}", d.chars(B64, 60)),
        ("vault-token", "VAULT_TOKEN={}", "hvs." + d.chars(URLSAFE, 90)),
        ("okta-ssws", "Authorization: SSWS {}", "00" + d.chars(URLSAFE, 40)),
        ("generic-random-token", "use {} to log in", d.chars(ALNUM, 48)),
        ("terraform-cloud", "tfe {}", f"{d.chars(ALNUM, 14)}.atlasv1.{d.chars(ALNUM, 67)}"),
    ]
    return [(name, template.format(secret), secret) for name, template, secret in table]


def _spaced(number: str) -> str:
    return " ".join(number[i:i + 4] for i in range(0, len(number), 4))


def _ric(d: Draw) -> str:
    from stdnum.cn import ric

    def make() -> str:
        return ("11010" + d.digits(1, DIGITS) + "19" + d.digits(2, "6789")
                + f"{d.rng.randint(1, 12):02d}{d.rng.randint(1, 28):02d}" + d.digits(3, DIGITS))

    return d.until(lambda: make() + d.rng.choice(DIGITS + "X"), ric.is_valid)


def _nir(d: Draw) -> str:
    from stdnum.fr import nir

    body = (d.rng.choice("12") + d.digits(2, DIGITS) + f"{d.rng.randint(1, 12):02d}"
            + f"{d.rng.randint(1, 95):02d}" + d.digits(3, DIGITS) + d.digits(3, DIGITS))
    return body + nir.calc_check_digits(body)


def personal_data(seed: int = 15) -> list[Case]:
    import phonenumbers
    from stdnum import iban
    from stdnum.br import cpf
    from stdnum.ca import sin
    from stdnum.es import dni
    from stdnum.in_ import aadhaar
    from stdnum.it import codicefiscale
    from stdnum.nl import bsn
    from stdnum.us import ssn

    d = Draw(seed)

    def phone(region: str, national: str, style: int, digits: int, first: str = "23456789"
              ) -> str:
        def make() -> str:
            return national + d.digits(digits, first)

        def valid(number: str) -> bool:
            return phonenumbers.is_valid_number(phonenumbers.parse(number, region))

        parsed = phonenumbers.parse(d.until(make, valid), region)
        return phonenumbers.format_number(parsed, style)

    style = phonenumbers.PhoneNumberFormat
    intl, nat = style.INTERNATIONAL, style.NATIONAL
    us_bare = phone("US", "415", style.E164, 7).lstrip("+1")
    ssn_value = d.until(lambda: f"{d.digits(3, '1234567')}-{d.digits(2)}-{d.digits(4)}",
                        ssn.is_valid)
    de_iban = "DE00" + d.digits(18)
    de_iban = iban.format(de_iban[:2] + iban.calc_check_digits(de_iban) + de_iban[4:])
    gb_iban = "GB00NWBK" + d.digits(14)
    gb_iban = gb_iban[:2] + iban.calc_check_digits(gb_iban) + gb_iban[4:]
    fr_iban = "FR00" + d.digits(23)
    fr_iban = iban.format(fr_iban[:2] + iban.calc_check_digits(fr_iban) + fr_iban[4:])
    user = d.chars(LOWER, 6)
    return [
        ("email", f"ask {user}.{d.chars(LOWER, 5)}@example.com about billing", f"{user}."),
        ("email-plus", f"mail {(s := user + '+ops@' + d.chars(LOWER, 7) + '.io')} first", s),
        ("phone-us-dashes", f"the on-call phone is {(s := phone('US', '212', nat, 7))}", s),
        ("phone-us-bare", f"call {us_bare} after six", us_bare),
        ("phone-us-international", f"dial {(s := phone('US', '617', intl, 7))}", s),
        ("phone-france", f"the Paris office is {(s := phone('FR', '1', intl, 8))}", s),
        ("phone-japan", f"Tokyo desk {(s := phone('JP', '3', intl, 8, '12345678'))}", s),
        ("phone-uk-national", f"London line {(s := phone('GB', '020 7', nat, 7))}", s),
        ("phone-germany", f"Berlin {(s := phone('DE', '30', intl, 8))}", s),
        ("phone-australia", f"Sydney support {(s := phone('AU', '2', intl, 8, '89'))}", s),
        ("ssn", f"her SSN is {ssn_value}", ssn_value),
        ("ssn-compact", f"ssn {(s := ssn_value.replace('-', ''))} on the form", s),
        ("iban-de", f"pay to {de_iban}", de_iban),
        ("iban-gb-compact", f"IBAN {gb_iban}", gb_iban),
        ("iban-fr", f"refund to {fr_iban} please", fr_iban),
        ("card-visa", f"paid with {(s := _luhn_complete('4' + d.digits(14, DIGITS)))}", s),
        ("card-mastercard-spaced",
         f"card {(s := _spaced(_luhn_complete('51' + d.digits(13, DIGITS))))} declined", s),
        ("card-amex", f"amex {(s := _luhn_complete('37' + d.digits(12, DIGITS)))} on file", s),
        ("canada-sin", f"SIN {(s := d.until(lambda: d.digits(9), sin.is_valid))}", s),
        ("india-aadhaar",
         f"Aadhaar {(s := d.until(lambda: d.digits(12, '23456789'), aadhaar.is_valid))}", s),
        ("netherlands-bsn", f"BSN {(s := d.until(lambda: d.digits(9), bsn.is_valid))}", s),
        ("brazil-cpf", f"CPF {(s := cpf.format(d.until(lambda: d.digits(11), cpf.is_valid)))}", s),
        ("spain-dni", f"DNI {(s := (n := d.digits(8)) + dni.calc_check_digit(n))}", s),
        ("italy-codice-fiscale", "codice fiscale " + (s := (
            p := d.chars(UPPER, 6) + d.digits(2) + d.rng.choice("ABCDEHLMPRST") + "1"
            + d.digits(1, "0123456") + d.rng.choice("ABCDEFGHILM") + d.digits(3))
            + codicefiscale.calc_check_digit(p)), s),
        ("france-nir", f"NIR {(s := _nir(d))}", s),
        ("china-ric", f"resident ID {(s := _ric(d))}", s),
    ]


def look_alikes(seed: int = 16) -> list[str]:
    d = Draw(seed)
    sha = d.chars(HEX, 40)
    return [
        "token: string",
        "Password: minimum 12 characters, one digit and one symbol.",
        "Secret: rotate every 90 days and log who did it.",
        "The remote is git@github.com:acme/platform.git, push over SSH.",
        f"Fixed in commit {sha} (short {sha[:7]}).",
        f"The image digest is sha256:{d.chars(HEX, 64)} in the lock file.",
        f"Request id {d.chars(HEX, 8)}-{d.chars(HEX, 4)}-4{d.chars(HEX, 3)}-a{d.chars(HEX, 3)}-"
        f"{d.chars(HEX, 12)} in the logs.",
        "Builds on MEM-20261123-k7x2mq4a and MEM-20261123-001.",
        f"See MEM-20260201-{d.chars('abcdefghijklmnopqrstuvwxyz234567', 8)} for the decision.",
        "password: ${DB_PASSWORD}",
        "api_key: <token>",
        "secret: <redacted>",
        "DB_PASSWORD=******** in the example env file",
        "export API_KEY=$API_KEY before running the job",
        "Read the key with os.environ['DB_PASSWORD'], never a literal.",
        "The API key lives in AWS Secrets Manager under prod/api/key.",
        "Set it with `gh secret set NPM_TOKEN` in the repo settings.",
        "Released on 2026-02-01 at 2026-02-01T10:30:00Z.",
        "Needs Python 3.11.4, Node v20.10.0 and chart 2.0.0-rc.1.",
        "PostgreSQL listens on localhost:5432 and 10.0.0.12:5432.",
        "The epoch 1767225600 is 2026-01-01.",
        "Order numbers like 1234567890123457 are not card numbers.",
        "Timeout is 30000 ms; HTTP 429 means back off; port range 30000-32767.",
        "See lines 120-134 of app/settings.py and PR #1234.",
        "AuthTokenRefreshMiddleware renews the session token before expiry.",
        "Call https://api.example.com/v1/users?page=2&per_page=50 to list users.",
        f"The pod api-{d.chars(HEX, 10)}-{d.chars(LOWER + DIGITS, 5)} restarted twice.",
        "Rate limiting uses a token bucket of 100 tokens.",
        "kind: Secret with type: kubernetes.io/tls holds the certificate.",
        "PASSWORD_MIN_LENGTH=12 and TOKEN_TTL_SECONDS=3600 in settings.",
        "Reset the password through the admin panel, never by SQL.",
        f"Built 7.{d.chars(DIGITS, 1)}.3+build.{d.chars(HEX, 7)} on CI run 4821.",
        "The color #1a2b3c and the ratio 16:9 come from the design system.",
        "The private key stays in the HSM; only the public key is exported.",
    ]
