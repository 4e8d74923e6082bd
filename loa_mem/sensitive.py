"""Secret and personal-data detection, run on every text before anything is written.

Hand-written rather than detect-secrets: that library costs ~330 ms to import here, more than
the whole budget of `remember`, and has no personal-data detectors (see the decision entry
"Secret detection is a small pattern table"). A finding names its kind, never the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loa_mem.errors import Refused


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int


# (kind, regular expression, lowercase substrings of which the text must hold one). The cheap
# substring test spares most texts most regular expressions; "" always runs the expression.
_TABLE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", ("private key",)),
    ("an AWS access key", r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}(?![A-Z0-9])",
     ("akia", "asia", "agpa", "aida", "aroa")),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
     ("gh", "github_pat_")),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}", ("glpat-",)),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", ("xox",)),
    ("a Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}", ("k_live_", "k_test_")),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}", ("aiza",)),
    ("an API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", ("sk-",)),
    ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
     ("eyj",)),
    ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}", ("bearer",)),
    ("a password in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@", ("://",)),
    ("a password or secret",
     r"(?i)\b(?:password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token"
     r"|client[_-]?secret|private[_-]?key|token)\b[\"']?\s*[:=]\s*[\"']?(?!<|\$\{|\*{3})[^\s\"',;]{4,}",
     (":", "=")),
    ("a password", r"(?i)\b(?:password|passphrase|passwd)\s+(?:is|was|=)\s+\S{3,}",
     ("pass",)),
    ("an e-mail address",
     r"(?i)(?<![\w.+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?![\w-])", ("@",)),
    ("a phone number",
     r"(?<![\w+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w-])",
     ("",)),
    ("a phone number", r"(?<![\w+])\+\d{1,3}(?:[ .-]?\d{2,4}){3,5}(?![\w-])", ("+",)),
)
_PATTERNS = tuple((kind, re.compile(rx), frozenset(hints)) for kind, rx, hints in _TABLE)
_HINTS = frozenset(h for _, _, hints in _TABLE for h in hints if h)
_CARD = re.compile(r"(?<![\w-])(?:\d[ -]?){12,18}\d(?![\w-])")
_TEN_DIGITS = re.compile(r"(?:\d\D{0,3}){10}")


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def scan(text: str) -> list[Finding]:
    lowered = text.lower()
    present = {hint for hint in _HINTS if hint in lowered}
    if _TEN_DIGITS.search(text) is not None:
        present.add("")
    findings: list[Finding] = []
    for kind, rx, hints in _PATTERNS:
        if hints & present:
            findings.extend(Finding(kind, m.start()) for m in rx.finditer(text))
    for match in _CARD.finditer(text) if "" in present else ():
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1:
            findings.append(Finding("a payment card number", match.start()))
    return sorted(findings, key=lambda f: f.start)


def refuse_sensitive(text: str, where: str) -> None:
    """Raise when `text` holds a secret or personal data; the message never echoes it."""
    findings = scan(text)
    if findings:
        kinds = ", ".join(dict.fromkeys(f.kind for f in findings))
        raise Refused(
            f"{where} looks like it contains {kinds} (at character {findings[0].start + 1})",
            "memories are committed to git; remove it and describe it instead",
        )
