"""The screen for secrets and personal data, run on every text before it is written anywhere.

Detection comes from kept libraries behind `loa_mem.core.detectors` (detect-secrets for provider
keys, secret-named values and entropy; phonenumbers; python-stdnum for IBANs, national ids and
the Luhn check of card numbers) and from `loa_mem.core.secretshapes`, the regular expressions of
what no library has (provider formats detect-secrets lacks, passwords as people write them, and
the shapes that only look like secrets). This module puts them together:

- e-mail addresses, the body of a private key without its BEGIN line, long random tokens, hex
  keys named as keys, and base64 of any of these or of a `user:password` pair;
- a value on the line after its key (`password:` then the value) and a key split over two
  lines are read as one;
- context that makes a match harmless: placeholders and documentation examples, type names in
  API docs (`token: string`), policy sentences ("Password: minimum 12 characters"), ids,
  digests, URL paths, public keys and certificates;
- the cheap look that decides which library a text needs, so a text of plain words imports none.

A finding names its kind, never the text: `refuse_sensitive` raises a `Refused` that says which
field held what kind of thing, and where; no message, log or output of loa-mem repeats the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from loa_mem.core import secretshapes as shapes
from loa_mem.core.errors import Refused

__all__ = ["Finding", "first_finding", "found_in", "refuse_sensitive", "scan", "screen"]


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int


_SECRET = "a password or secret"
_EMAIL = re.compile(r"(?i)(?<![\w.+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}"
                    r"(?![\w-])")
# The body of a private key pasted without its BEGIN line (PEM, OpenSSH, PuTTY).
_KEY_BODY = re.compile(r"(?m)^(?:MII[A-Za-z0-9+/]{20,}|(?:[A-Za-z0-9+/]{64}\n){2})"
                       r"|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20,}|\bPrivate-Lines:\s*\d")
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_~-])[A-Za-z0-9+/_~-]{20,}={0,2}(?![A-Za-z0-9+/_~-])")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_HEX_PART = re.compile(r"[0-9a-fA-F]{32,}")
_KEY_WORD = re.compile(r"(?i)(?:key|secret|token|passw|credential|api|hmac|signing|auth|dsn)")
_HASH_WORD = re.compile(r"(?i)\b(?:sha\w*|commit|digest|hash|checksum|rev|revision|"
                        r"fingerprint|etag|object|blob|md5)\b")
# The cheap look: could detect-secrets find anything at all in this text.
_MAYBE_SECRET = re.compile(r"(?i)[A-Za-z0-9+/_~=.-]{16,}|pass|pwd|\bpw\b|secret|key|token|auth"
                           r"|bearer|sig=|@")
_MAYBE_NUMBER = re.compile(r"\d(?:[\w ()./-]{0,3}\d){6}")
_URL_USER = re.compile(r"://([^\s/:@]*):$")


def _is_sentence(rest: str) -> bool:
    """`minimum 12 characters`, `rotate every 90 days`: a lowercase word followed by more words
    is a rule about the secret, not the secret."""
    words = rest.split()
    return len(words) >= 2 and words[0].isalpha() and words[0].islower()


def _named_value(text: str, start: int, end: int, strict: bool = False) -> bool:
    value = text[start:end]
    if strict:
        return shapes.looks_like_password(value)
    rest = text[start:].split("\n", 1)[0]
    return not (shapes.is_not_a_value(value) or _is_sentence(rest))


def _url_password(text: str, start: int, end: int) -> bool:
    """A password in a URL that is neither a placeholder nor the user name again
    (`postgres:postgres@localhost`, the default of a local database)."""
    user = _URL_USER.search(text[max(0, start - 80):start])
    return (_named_value(text, start, end)
            and not (user and user.group(1) == text[start:end]))


def _own_rules(text: str, depth: int) -> list[Finding]:
    found = [Finding("an e-mail address", m.start()) for m in _EMAIL.finditer(text)]
    if shapes.MAYBE_PROVIDER.search(text):
        found += _providers(text)
        found += [Finding("a private key", m.start()) for m in _KEY_BODY.finditer(text)]
        if depth == 0:
            found += _encoded(text)
    found += _passwords(text)
    return found


def _providers(text: str) -> list[Finding]:
    return [Finding(kind, m.start()) for kind, needles, rule in shapes.PROVIDER_RULES
            if any(needle in text for needle in needles) for m in re.finditer(rule, text)
            if not (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"))
            and not shapes.is_doc_example(m.group())]


def _passwords(text: str) -> list[Finding]:
    found = [Finding(_SECRET, start) for start, value in shapes.table_values(text)
             if shapes.looks_like_password(value)] if "|" in text else []
    lowered = text.lower()
    values = shapes.joined_values(text) if "\n" in text else text
    for kind, needles, rule, group, strict in shapes.PASSWORD_RULES:
        if not any(needle in lowered for needle in needles):
            continue
        for match in re.finditer(rule, values):
            start, end = match.span(group)
            if kind == "a password in a URL":
                keep = _url_password(values, start, end)
            else:
                keep = _named_value(values, start, end, strict)
            if keep:
                found.append(Finding(kind, start))
    return found


def _encoded(text: str) -> list[Finding]:
    """Base64 of a secret: a `user:password` pair (basic auth, docker and npm configs) or a
    text holding any secret the screen finds."""
    found = []
    for match in _BASE64.finditer(text):
        plain = shapes.decoded(match.group())
        if plain is None:
            continue
        if shapes.basic_auth_pair(plain):
            found.append(Finding("base64 of a user and password", match.start()))
            continue
        inner = _scan(plain, depth=1)
        if inner:
            found.append(Finding(f"base64 of {inner[0].kind}", match.start()))
    return found


def _word(text: str, start: int) -> str:
    return text[start:].split(None, 1)[0] if text[start:].strip() else ""


def _vendor_tokens(text: str) -> list[Finding]:
    """detect-secrets' provider formats and the own ones, also over hard-wrapped lines."""
    from loa_mem.core import detectors

    found = []
    for kind, start, end in detectors.vendor_tokens(text):
        if kind == "a password in a URL":
            if _url_password(text, start, end):
                found.append(Finding(kind, start))
        elif not shapes.is_doc_example(_word(text, start)):
            found.append(Finding(kind, start))
    for token, places in shapes.wrapped_tokens(text) if "\n" in text else ():
        spans = [(f.kind, f.start) for f in _providers(token)]
        spans += [(kind, start) for kind, start, _ in detectors.vendor_tokens(token)]
        found += [Finding(kind, places[start]) for kind, start in spans
                  if not shapes.is_doc_example(_word(token, start))]
    return found


def _keyword_values(text: str) -> list[Finding]:
    from loa_mem.core import detectors

    found = []
    offset = 0
    for line in text.split("\n"):
        for start, value in detectors.keyword_values(line):
            first = value.split()[0] if value.split() else value
            if not (shapes.is_not_a_value(first) or _is_sentence(value)):
                found.append(Finding(_SECRET, offset + start))
        offset += len(line) + 1
    return found


def _random_tokens(text: str) -> list[Finding]:
    """Long tokens too random to be words (keys of providers no library knows by name), and hex
    keys: a long hex string named as a key, never a sha or a digest."""
    from loa_mem.core import detectors

    found = []
    ids: list[tuple[int, int]] | None = None
    for match in _TOKEN.finditer(text):
        ids = shapes.id_spans(text) if ids is None else ids
        if any(a <= match.start() < b for a, b in ids):
            continue
        token, before = match.group(), text[max(0, match.start() - 60):match.start()]
        hex_part = max(_HEX_PART.findall(token), key=len, default="")
        if hex_part and len(hex_part) >= len(token.replace("-", "")) - 8:
            context = before + token[:token.find(hex_part)]
            if _KEY_WORD.search(context) and not _HASH_WORD.search(before[-30:]):
                found.append(Finding("a hex key", match.start()))
            continue
        if (detectors.looks_generated_not_secret(token, text) or shapes.is_code_name(token)
                or shapes.is_doc_example(text[match.start():match.end() + 3])):  # "eyJ...": cut
            continue
        mixed = any(c.isdigit() for c in token) or (len(token) >= 30 and not token.isupper()
                                                    and not token.islower())
        threshold = min(math.log2(len(token)) - 0.35, 4.3)
        if mixed and detectors.entropy(token, "b64") >= threshold:
            found.append(Finding("a high-entropy key", match.start()))
    return found


def scan(text: str) -> list[Finding]:
    """Every secret and every piece of personal data in `text`, by kind and position."""
    return _scan(text, depth=0)


def _scan(text: str, depth: int) -> list[Finding]:
    findings = _own_rules(text, depth)
    if _MAYBE_SECRET.search(text):
        findings += _vendor_tokens(text)
        findings += _keyword_values(text)
        findings += _random_tokens(text)
    if _MAYBE_NUMBER.search(text):
        from loa_mem.core import detectors

        findings += [Finding(kind, start) for kind, start, end in detectors.phone_numbers(text)
                     if not shapes.is_number_field(text, start, end)]
        findings += [Finding(kind, start) for kind, start, _ in (
            detectors.national_ids(text) + detectors.card_numbers(text))]
    if not findings:
        return []
    exempt = shapes.harmless_spans(text)
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
