"""The screen for secrets and personal data, run on every text before it is written anywhere.

Detection comes from kept libraries behind `loa_mem.core.detectors` (detect-secrets for provider
keys, secret-named values and entropy; phonenumbers; python-stdnum for IBANs, national ids and
the Luhn check of card numbers). This module holds only what no library has:

- the rules of free text: e-mail addresses, a password told in a sentence, a password in a URL
  (also with an empty user), `Authorization:` headers, connection-string keys, the body of a
  private key without its BEGIN line, long random tokens and hex keys named as keys;
- context that makes a match harmless: placeholders (`${VAR}`, `<token>`, `<redacted>`,
  `********`), type names in API docs (`token: string`), policy sentences ("Password: minimum 12
  characters"), memory ids, git SSH remotes, and hex strings that are shas or digests;
- the cheap look that decides which library a text needs, so a text of plain words imports none.

A finding names its kind, never the text: `refuse_sensitive` raises a `Refused` that says which
field held what kind of thing, and where; no message, log or output of loa-mem repeats the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from loa_mem.core.errors import Refused

__all__ = ["Finding", "first_finding", "found_in", "refuse_sensitive", "scan", "screen"]


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int


_SECRET = "a password or secret"
# Own rules: (kind, expression, the group holding the value; 0 for the whole match).
_RULES: tuple[tuple[str, re.Pattern[str], int], ...] = tuple(
    (kind, re.compile(rx), group) for kind, rx, group in (
        ("an e-mail address",
         r"(?i)(?<![\w.+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?![\w-])", 0),
        ("a password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@", 1),
        (_SECRET, r"(?i)\b(?:password|passphrase|passwd|pass ?code|pw|pwd)\s+(?:is|was|=|:)"
                  r"\s+[\"'`]?(\S{3,})", 1),
        (_SECRET, r"(?i)\blogin\s+\S+\s+password\s+(\S+)", 1),
        ("a bearer token or other authorization header",
         r"(?i)\b(?:authorization:\s*(?:basic|bearer|ssws|token|digest)|bearer)\s+"
         r"([A-Za-z0-9._~+/=-]{12,})", 1),
        ("a connection-string key",
         r"(?i)(?:^|[;&?\s])(?:SharedAccessKey|AccountKey|SharedSecret|sig|pwd|password)="
         r"([^;&\s]{8,})", 1),
        ("a private key", r"(?m)^(?:MII[A-Za-z0-9+/]{20,}|(?:[A-Za-z0-9+/]{64}\n){2})", 0),
        ("an API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", 0),
        ("a Google API key", r"\bAIza[A-Za-z0-9_-]{30,}", 0),
        ("a Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,}", 0),
        ("a GitHub token", r"\bgithub_pat_\w{30,}", 0),
        ("a Hugging Face token", r"\bhf_[A-Za-z]{30,}", 0),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{30,}", 0),
        ("a Stripe webhook secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}", 0),
    ))
# Values that name a type or stand in for the real thing, in docs and templates.
_NOT_A_VALUE = frozenset((
    "string", "str", "int", "integer", "number", "bool", "boolean", "float", "null", "none",
    "nil", "true", "false", "required", "optional", "any", "object", "array", "text", "bytes",
    "secret", "password", "token", "key", "value", "example", "sample", "redacted", "hidden",
    "masked", "removed", "omitted", "changeme", "placeholder", "tbd", "todo",
))
_PLACEHOLDER = re.compile(r"^(?:<[^>]*>?|\$\{?[\w.]*\}?|\{\{.*|%\(.*|\*+|x{3,}|X{3,}|\.{3}|…)")
# Code that reads the value from elsewhere: os.environ[...], getenv(...), ENV['...'], getpass().
_ENV_READ = re.compile(r"(?i)^(?:os\.environ|process\.env|ENV\[|[A-Za-z_][\w.]*\()")
_MEMORY_ID = re.compile(r"\bMEM-\d{8}-[a-z0-9]{3,}\b")
_SSH_REMOTE = re.compile(r"(?<![\w:/.@%+-])[\w.-]+@[\w.-]+:[\w./~-]+(?:\.git)?\b")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_~-])[A-Za-z0-9+/_~-]{20,}={0,2}(?![A-Za-z0-9+/_~-])")
_HEX_PART = re.compile(r"[0-9a-fA-F]{32,}")
_KEY_WORD = re.compile(r"(?i)(?:key|secret|token|passw|credential|api|hmac|signing|auth|dsn)")
_HASH_WORD = re.compile(r"(?i)\b(?:sha\w*|commit|digest|hash|checksum|rev|revision|"
                        r"fingerprint|etag|object|blob|md5)\b")
# The cheap look: which libraries could find anything at all in this text.
_MAYBE_SECRET = re.compile(r"(?i)[A-Za-z0-9+/_~=.-]{16,}|pass|pwd|\bpw\b|secret|key|token|auth"
                           r"|bearer|sig=|@")
_MAYBE_NUMBER = re.compile(r"\d(?:[\w ()./-]{0,3}\d){6}")


def _is_placeholder(value: str) -> bool:
    bare = value.strip("\"'`,;.)(")
    return (not bare or bool(_PLACEHOLDER.match(bare)) or bare.lower() in _NOT_A_VALUE
            or bool(_ENV_READ.match(value.strip("\"'`"))) or (bare.isdigit() and len(bare) < 8))


def _is_sentence(rest: str) -> bool:
    """`minimum 12 characters`, `rotate every 90 days`: a lowercase word followed by more words
    is a rule about the secret, not the secret."""
    words = rest.split()
    return len(words) >= 2 and words[0].isalpha() and words[0].islower()


def _named_value(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    rest = text[start:].split("\n", 1)[0]
    return not (_is_placeholder(value) or _is_sentence(rest))


def _own_rules(text: str) -> list[Finding]:
    found = []
    for kind, rule, group in _RULES:
        for match in rule.finditer(text):
            if group and not _named_value(text, match.start(group), match.end(group)):
                continue
            found.append(Finding(kind, match.start(group)))
    return found


def _keyword_values(text: str) -> list[Finding]:
    from loa_mem.core import detectors

    found = []
    offset = 0
    for line in text.split("\n"):
        for start, value in detectors.keyword_values(line):
            first = value.split()[0] if value.split() else value
            if not (_is_placeholder(first) or _is_sentence(value)):
                found.append(Finding(_SECRET, offset + start))
        offset += len(line) + 1
    return found


def _random_tokens(text: str) -> list[Finding]:
    """Long tokens too random to be words (keys of providers no library knows by name), and hex
    keys: a long hex string named as a key, never a sha or a digest."""
    from loa_mem.core import detectors

    found = []
    for match in _TOKEN.finditer(text):
        token, before = match.group(), text[max(0, match.start() - 60):match.start()]
        hex_part = max(_HEX_PART.findall(token), key=len, default="")
        if hex_part and len(hex_part) >= len(token.replace("-", "")) - 8:
            context = before + token[:token.find(hex_part)]
            if _KEY_WORD.search(context) and not _HASH_WORD.search(before[-30:]):
                found.append(Finding("a hex key", match.start()))
            continue
        if detectors.looks_generated_not_secret(token, text):
            continue
        mixed = any(c.isdigit() for c in token) or (len(token) >= 30 and not token.isupper()
                                                    and not token.islower())
        threshold = min(math.log2(len(token)) - 0.35, 4.3)
        if mixed and detectors.entropy(token, "b64") >= threshold:
            found.append(Finding("a high-entropy key", match.start()))
    return found


def _spans_exempt(text: str) -> list[tuple[int, int]]:
    return [m.span() for rx in (_MEMORY_ID, _SSH_REMOTE) for m in rx.finditer(text)]


def scan(text: str) -> list[Finding]:
    """Every secret and every piece of personal data in `text`, by kind and position."""
    from loa_mem.core import detectors

    findings: list[Finding] = []
    if _MAYBE_SECRET.search(text):
        findings += _own_rules(text)
        findings += [Finding(kind, start) for kind, start, end in detectors.vendor_tokens(text)]
        findings += _keyword_values(text)
        findings += _random_tokens(text)
    if _MAYBE_NUMBER.search(text):
        for kind, start, _ in (detectors.phone_numbers(text) + detectors.national_ids(text)
                               + detectors.card_numbers(text)):
            findings.append(Finding(kind, start))
    if not findings:
        return []
    exempt = _spans_exempt(text)
    kept = {f for f in findings if not any(a <= f.start < b for a, b in exempt)}
    return sorted(_most_specific(text, kept), key=lambda f: (f.start, f.kind))


_GENERIC = frozenset({_SECRET, "a high-entropy key", "a hex key"})


def _most_specific(text: str, findings: set[Finding]) -> set[Finding]:
    """One word found by a provider's own format and by the generic rules is named by the
    provider ("a GitHub token", not "a high-entropy key")."""
    def word(finding: Finding) -> tuple[int, int]:
        start = max(text.rfind(c, 0, finding.start + 1) for c in " \n\t") + 1
        ends = [i for i in (text.find(c, finding.start) for c in " \n\t") if i >= 0]
        return start, min(ends, default=len(text))

    specific = [word(f) for f in findings if f.kind not in _GENERIC]
    return {f for f in findings if f.kind not in _GENERIC or word(f) not in specific}


def first_finding(text: str) -> str | None:
    """The kinds found in `text`, for a message ("an e-mail address, a phone number"), or None."""
    findings = scan(text)
    return ", ".join(dict.fromkeys(f.kind for f in findings)) if findings else None


def refuse_sensitive(text: str, where: str) -> None:
    """Raise when `text` holds a secret or personal data; the message never echoes it."""
    findings = scan(text)
    if findings:
        kinds = ", ".join(dict.fromkeys(f.kind for f in findings))
        raise Refused(
            f"{where} looks like it contains {kinds} (at character {findings[0].start + 1})",
            "memories are committed to git; remove it and describe it instead",
        )


# Values loa-mem makes itself (times, ids, numbers): nothing a person typed, nothing to scan.
_MACHINE_MADE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?"
                           r"|MEM-\d{8}-[a-z0-9]+|-?[\d.]+)$")


def found_in(data: object, skip: frozenset[str] = frozenset()) -> Iterable[tuple[str, str, str]]:
    """(dotted path, the text, the kinds found) for every text in a parsed file that holds a
    secret or personal data; `validate` uses it on files edited by hand. Top-level keys in
    `skip` are not read."""
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items()
                         if path or str(k) not in skip)
        elif isinstance(value, list):
            stack.extend((f"{path}.{n}", v) for n, v in enumerate(value))
        elif isinstance(value, str) and value and not _MACHINE_MADE.match(value):
            kinds = first_finding(value)
            if kinds:
                yield path, value, kinds


def screen(fields: Iterable[tuple[str, str | None]]) -> None:
    """`refuse_sensitive` over (where, text) pairs; empty and missing texts are skipped."""
    for where, text in fields:
        if text:
            refuse_sensitive(text, where)
