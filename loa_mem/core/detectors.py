"""The outside detectors behind one module: detect-secrets, phonenumbers and python-stdnum.

Each library is imported on first use only, by the scan that needs it (`sensitive.scan` asks for
one only when a cheap look at the text says it could find something), so a text of plain words
costs no import at all. Measured on the 2-core reference machine (bench/bench_screen.py):
detect-secrets ~35 ms to import with `requests` deferred (~125 ms without), phonenumbers ~15 ms,
python-stdnum's modules ~20 ms.

Every function returns spans `(kind, start, end)`; `sensitive` decides what counts (context,
placeholders, ids) and words the refusal. Nothing here verifies a key online: detect-secrets can,
and loa-mem never asks it to.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

Span = tuple[str, int, int]

# detect-secrets plugin class -> the kind a refusal names
_REGEX_PLUGINS = {
    "aws.AWSKeyDetector": "an AWS access key",
    "artifactory.ArtifactoryDetector": "an Artifactory token",
    "azure_storage_key.AzureStorageKeyDetector": "an Azure storage key",
    "basic_auth.BasicAuthDetector": "a password in a URL",
    "discord.DiscordBotTokenDetector": "a Discord bot token",
    "github_token.GitHubTokenDetector": "a GitHub token",
    "gitlab_token.GitLabTokenDetector": "a GitLab token",
    "jwt.JwtTokenDetector": "a JSON web token",
    "mailchimp.MailchimpDetector": "a Mailchimp key",
    "npm.NpmDetector": "an npm token",
    "openai.OpenAIDetector": "an OpenAI key",
    "private_key.PrivateKeyDetector": "a private key",
    "pypi_token.PypiTokenDetector": "a PyPI token",
    "sendgrid.SendGridDetector": "a SendGrid key",
    "slack.SlackDetector": "a Slack token or webhook",
    "square_oauth.SquareOAuthDetector": "a Square token",
    "stripe.StripeDetector": "a Stripe key",
    "telegram_token.TelegramBotTokenDetector": "a Telegram bot token",
    "twilio.TwilioKeyDetector": "a Twilio key",
}


@contextmanager
def _deferred(*names: str) -> Iterator[None]:
    """Modules a library imports at its top but uses only for what loa-mem never asks of it:
    detect-secrets imports `requests` (~90 ms) only to verify keys online, python-stdnum's
    `util` imports `pydoc` and `ssl` only to describe its modules and to call web services.
    While the library loads, each is a module that imports the real one on first attribute
    use; afterwards the name is free again for anyone who imports it."""
    stand_ins = {}
    for name in names:
        if name in sys.modules:
            continue
        stand_in = types.ModuleType(name)

        def real(attribute: str, name: str = name) -> Any:
            sys.modules.pop(name, None)
            return getattr(importlib.import_module(name), attribute)

        stand_in.__getattr__ = real  # type: ignore[method-assign]
        sys.modules[name] = stand_ins[name] = stand_in
    try:
        yield
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


def _package(name: str) -> None:
    """Load package `name` without running its `__init__` yet: detect-secrets' imports the
    whole scanner (multiprocessing, logging, every plugin and filter) and phonenumbers' every
    part of the library, where loa-mem needs a few modules of each. The `__init__` runs when
    the package is first asked for an attribute that is neither set nor one of its modules."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    loader, places = spec.loader, list(spec.submodule_search_locations)

    def complete(attribute: str) -> Any:
        if attribute.startswith("__") or importlib.machinery.PathFinder.find_spec(
                f"{name}.{attribute}", places) is not None:
            raise AttributeError(attribute)  # a module of the package: the import loads it
        del package.__getattr__
        loader.exec_module(package)
        return getattr(package, attribute)

    package.__getattr__ = complete  # type: ignore[method-assign]
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)


def _module(name: str) -> Any:
    """A module of detect-secrets, loaded with only the modules it needs (see `_package`)."""
    _package("detect_secrets")
    _package("detect_secrets.filters")
    with _deferred("requests"):
        return importlib.import_module(f"detect_secrets.{name}")


def _plugin(module: str, name: str) -> Any:
    return getattr(_module(module), name)


@cache
def _vendor_plugins() -> list[tuple[str, Any]]:
    plugins = []
    for path, kind in _REGEX_PLUGINS.items():
        module, name = path.split(".")
        plugins.append((kind, _plugin(f"plugins.{module}", name)()))
    return plugins


@cache
def _keyword_plugin() -> Any:
    return _plugin("plugins.keyword", "KeywordDetector")()


@cache
def _entropy_plugins() -> tuple[Any, Any]:
    return (_plugin("plugins.high_entropy_strings", "Base64HighEntropyString")(),
            _plugin("plugins.high_entropy_strings", "HexHighEntropyString")())


@cache
def _heuristic() -> Any:
    return _module("filters.heuristic")


def vendor_tokens(text: str) -> list[Span]:
    """Keys and tokens of the providers detect-secrets knows, by their own formats."""
    plugins = _vendor_plugins()
    found: list[Span] = []
    for kind, plugin in plugins:
        for regex in plugin.denylist:
            for match in regex.finditer(text):
                group = match.lastindex or 0
                found.append((kind, match.start(group), match.end(group)))
    return found


# A word of every entry of the keyword plugin's DENYLIST (`api_?key`, `db_?pass`, `pwd`,
# `contraseña`, ...), matched as its patterns match them (ignoring case); a test checks the list.
KEYWORD_WORDS = re.compile(r"key|pass|pwd|secret|contrase[ñn]a", re.IGNORECASE)


def keyword_values(line: str) -> list[tuple[int, str]]:
    """Values assigned to a secret-sounding key (`password: …`, `DB_PASSWORD=…`,
    `"private_key_id": "…"`) in one line: (where the value starts, the value as written)."""
    if not KEYWORD_WORDS.search(line):
        return []  # no key word of the plugin's list: none of its patterns can match
    keyword = _keyword_plugin()
    found = []
    for secret in keyword.analyze_line(filename="memory.yaml", line=line, line_number=1):
        value = str(secret.secret_value)
        start = line.find(value)
        if start >= 0:
            found.append((start, value))
    return found


def entropy(token: str, charset: str) -> float:
    """Shannon entropy of `token` over base64 ("b64") or hex ("hex") characters."""
    b64, hexa = _entropy_plugins()
    return float((b64 if charset == "b64" else hexa).calculate_shannon_entropy(token))


def looks_generated_not_secret(token: str, line: str) -> bool:
    """detect-secrets' own filters: sequences (abcdef, 123456), UUIDs, ids (`id: …`),
    templates (`${…}`, `<…>`, `{…}`) and `$VAR` references."""
    heuristic = _heuristic()
    return bool(heuristic.is_sequential_string(token) or heuristic.is_potential_uuid(token)
                or heuristic.is_likely_id_string(token, line)
                or heuristic.is_templated_secret(token)
                or heuristic.is_prefixed_with_dollar_sign(token))


def phone_numbers(text: str) -> list[Span]:
    """Phone numbers libphonenumber calls valid: international ones in any country's format,
    national ones in the formats of the US/Canada and the UK."""
    _package("phonenumbers")
    from phonenumbers.phonenumbermatcher import Leniency, PhoneNumberMatcher

    found: dict[int, Span] = {}
    for region in ("US", "GB"):
        for match in PhoneNumberMatcher(text, region, leniency=Leniency.VALID):
            found.setdefault(match.start, ("a phone number", match.start, match.end))
    return list(found.values())


# python-stdnum modules by the words that name their number; the number is refused only when it
# also passes the module's check digits.
_NATIONAL_IDS = (
    (r"ssn|social security", ("us.ssn",), "a US social security number"),
    (r"sin|social insurance", ("ca.sin",), "a Canadian social insurance number"),
    (r"aadhaa?r|uidai", ("in_.aadhaar",), "an Aadhaar number"),
    (r"bsn|burgerservicenummer", ("nl.bsn",), "a Dutch citizen service number"),
    (r"cpf", ("br.cpf",), "a Brazilian CPF number"),
    (r"dni|nie|nif", ("es.dni", "es.nie"), "a Spanish identity number"),
    (r"nir|insee|s[ée]curit[ée] sociale", ("fr.nir",), "a French social security number"),
    (r"codice fiscale|tax code|cf", ("it.codicefiscale",), "an Italian tax code"),
    (r"pesel", ("pl.pesel",), "a Polish PESEL number"),
    (r"personnummer", ("se.personnummer",), "a Swedish personal number"),
    (r"steuer-?id|idnr|identifikationsnummer", ("de.idnr",), "a German tax id"),
    (r"resident id|id card|identity card|ric", ("cn.ric",), "a Chinese resident id"),
    (r"curp", ("mx.curp",), "a Mexican CURP"),
)
# Shapes precise enough to be refused without a naming word (check digits still decide).
_SHAPES = (
    (re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])"), "us.ssn",
     "a US social security number"),
    (re.compile(r"(?<![\w.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])"), "br.cpf",
     "a Brazilian CPF number"),
    (re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z]\b"), "it.codicefiscale",
     "an Italian tax code"),
    (re.compile(r"(?<![\w-])\d{17}[\dXx](?![\w-])"), "cn.ric", "a Chinese resident id"),
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_NUMBER = re.compile(r"(?<![\w.-])[\dA-Z][\dA-Z .-]{6,22}[\dA-Z](?![\w-])")
_CARD = re.compile(r"(?<![\w.-])(?:\d[ -]?){12,18}\d(?![\w-])")
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6)")


def _stdnum(name: str) -> Any:
    with _deferred("pydoc", "ssl"):
        return importlib.import_module(f"stdnum.{name}")


def _is_valid(name: str, value: str) -> bool:
    try:
        return bool(_stdnum(name).is_valid(value))
    except Exception:  # a module that cannot judge this value does not find it
        return False


def national_ids(text: str) -> list[Span]:
    """IBANs and national identity numbers that pass their check digits (python-stdnum)."""
    found: list[Span] = []
    for match in _IBAN.finditer(text):
        if _is_valid("iban", match.group()):
            found.append(("an IBAN", match.start(), match.end()))
    for regex, module, kind in _SHAPES:
        found.extend((kind, m.start(), m.end()) for m in regex.finditer(text)
                     if _is_valid(module, m.group()))
    lowered = text.lower()
    for words, modules, kind in _NATIONAL_IDS:
        for named in re.finditer(rf"\b(?:{words})\b", lowered):
            near = text[named.end():named.end() + 40]
            for match in _NUMBER.finditer(near):
                if any(_is_valid(module, match.group().strip()) for module in modules):
                    start = named.end() + match.start()
                    found.append((kind, start, start + len(match.group())))
    return found


def card_numbers(text: str) -> list[Span]:
    """Payment card numbers: 13-19 digits of a card network's prefix passing the Luhn check."""
    found: list[Span] = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if (13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and len(set(digits)) > 1
                and _stdnum("luhn").is_valid(digits)):
            found.append(("a payment card number", match.start(), match.end()))
    return found
