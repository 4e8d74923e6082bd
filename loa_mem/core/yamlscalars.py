"""Plain and single-quoted YAML scalars as `yamlio` reads them (YAML 1.1 types, timestamps kept
as text), for the fast reader (`yamlfast`). Only forms whose meaning is certain are read here;
anything else answers `UNSURE` and its item goes to the full parser.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the catch-up paths' import budget
    from typing import Any

UNSURE: Any = object()


class Unsure(Exception):
    """This item holds something the fast reader does not read."""


VALUES: dict[str, Any] = {}  # `cached`'s values of short texts

_BOOL = {"yes": True, "Yes": True, "YES": True, "no": False, "No": False, "NO": False,
         "true": True, "True": True, "TRUE": True, "false": False, "False": False,
         "FALSE": False, "on": True, "On": True, "ON": True, "off": False, "Off": False,
         "OFF": False}
WORDS = {**_BOOL, "null": None, "Null": None, "NULL": None}
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+")
# PyYAML's implicit resolvers (YAML 1.1) of the types a digit can start; timestamps are not
# resolved by yamlio. A test checks these against PyYAML's own.
INT = re.compile(r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", re.X)
FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X)
# a plain scalar in a block: no indicator first, no ": " or " #" inside
_PLAIN = re.compile(r"(?:[^\s\-?:,\[\]{}#&*!|>'\"%@`]|[-?:](?=\S))"
                    r"(?:[^\t:#]|:(?=\S)|(?<=\S)#)*(?<![ ])")


def plain(text: str) -> Any:
    """The value of a plain scalar, or UNSURE."""
    if text in ("", "~"):
        return None
    alpha = text[0].isascii() and text[0].isalpha()
    if not (alpha and _prose(text)) and not _PLAIN.fullmatch(text):
        return UNSURE
    if alpha:  # YAML reads only these words as other types
        return WORDS.get(text, text)
    if _INT.fullmatch(text):  # the plain decimal forms YAML 1.1 reads as numbers
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text[0].isascii() and text[0].isdigit() and not (INT.match(text) or FLOAT.match(text)):
        return text  # a digit first, and neither number form: a timestamp, `90d`, `3.11.7`
    return _by_tag(text)


def _by_tag(text: str) -> Any:
    """The value of a plain scalar of an unusual form, by the type PyYAML resolves it to."""
    from loa_mem.core import yamlio

    tag = yamlio.plain_tag(text)
    if tag == "tag:yaml.org,2002:str":
        return text
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return _BOOL.get(text, UNSURE)
    if tag == "tag:yaml.org,2002:int" and _INT.fullmatch(text):
        return int(text)
    if tag == "tag:yaml.org,2002:float" and _FLOAT.fullmatch(text):
        return float(text)
    return UNSURE


def prose(text: str) -> Any:
    """`plain(text)` for a text that starts with an ASCII letter and holds no ':', '#' or tab,
    no space last (most of a grimoire file's text), told in a few steps; UNSURE for any other
    text, whatever `plain` makes of it."""
    if text[:1].isalpha() and text[0].isascii() and _prose(text):
        return WORDS.get(text, text)
    return UNSURE


def _prose(text: str) -> bool:
    """Whether a text that starts with a letter is a plain scalar, told without the pattern
    (most of a grimoire file's text): no ':', '#' or tab in it, no space last."""
    return text[-1] != " " and ":" not in text and "#" not in text and "\t" not in text


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYS: dict[str, str | None] = {}


def key(text: str) -> str | None:
    """A mapping key that reads as this string, or None."""
    found = _KEYS.get(text, UNSURE)
    if found is UNSURE:
        found = text if _KEY.fullmatch(text) and plain(text) == text else None
        if len(_KEYS) < 1000:
            _KEYS[text] = found
    return found  # type: ignore[no-any-return]


def quoted(text: str) -> Any:
    """The value of a whole single-quoted scalar on one line ('It''s' -> It's), or UNSURE."""
    if len(text) < 2 or not text.startswith("'") or not text.endswith("'"):
        return UNSURE
    body = text[1:-1]
    if "'" in body.replace("''", ""):
        return UNSURE
    return body.replace("''", "'")


def fold(lines: list[str]) -> str:
    """Lines of a multi-line flow scalar joined as YAML folds them: a line break between two
    lines is a space, each empty line a line break; spaces around breaks are dropped."""
    out = [lines[0].rstrip(" ")]
    pending = 0
    for line in lines[1:]:
        text = line.strip(" ")
        if not text:
            pending += 1
            continue
        out.append("\n" * pending if pending else " ")
        out.append(text)
        pending = 0
    out.append("\n" * pending if pending else "")
    return "".join(out)


# a continuation line of a plain scalar: no comment first, no ": ", " #" or tab inside
CONTINUED = re.compile(r"[^\s#](?:[^\t:#]|:(?=\S)|(?<=\S)#)*")


def closed(rest: str) -> bool:
    """Whether a single-quoted scalar starting `rest` ends on this line."""
    body = rest[1:].replace("''", "")
    return body.endswith("'") and body.count("'") == 1


def folded(text: str) -> str:
    """The value of a plain or single-quoted scalar over several lines, `text` its lines as
    they stand (the first one from the value's start), as `yamlitem` reads such a value: a
    text, or `Unsure` for anything else (a plain value that reads as another type, a quoted
    one closed before its last line, a continuation a plain scalar cannot hold, a blank
    line, a tab)."""
    lines = text.split("\n")
    first, *more = lines
    if "\t" in text or not all(line.strip(" ") for line in more):
        raise Unsure  # a tab, or a blank line (a line break inside, none when last): the parser's
    if first[:1].isalpha() and first[0].isascii():
        # plain prose, the most of what loa-mem folds: told without the patterns (what the
        # general way below gives such a text: its lines joined by one space)
        parts = [line.strip(" ") for line in lines]
        joined = " ".join(parts)
        if not any(part[0].isspace() for part in parts) and _prose(joined):
            return joined
    if first.startswith("'"):
        value = UNSURE if closed(first) else quoted(fold([first, *more]))
    elif all(CONTINUED.fullmatch(line.strip(" ")) for line in more):
        value = plain(fold([first, *more]))
    else:
        raise Unsure
    if type(value) is not str:
        raise Unsure
    return value


FLOW_ODD = re.compile(r"[\[\]{}'\"#&*!|>%@`:]")


def flow_list(text: str) -> Any:
    """A flow list of plain scalars ([a, b-c, 3]), or UNSURE."""
    if not (text.startswith("[") and text.endswith("]")):
        return UNSURE
    body = text[1:-1].strip(" ")
    if not body:
        return []
    if FLOW_ODD.search(body):
        return UNSURE
    items = []
    for part in body.split(","):
        value = plain(part.strip(" "))
        if value is UNSURE or value is None or part.strip(" ") == "":
            return UNSURE
        items.append(value)
    return items


# a time as loa-mem writes it: a plain scalar that reads as its own text (timestamps are kept)
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z").fullmatch
_LISTS: dict[str, list[Any]] = {}


def cached(text: str) -> Any:
    """The value of a scalar on one line as the fast reader reads it (`Unsure` when it does
    not): remembered for short texts (categories, ttls, sessions repeat) and flow lists
    (tags repeat; each caller gets its own copy), and told in a few steps for prose and times."""
    value = VALUES.get(text, UNSURE)
    return value if value is not UNSURE else uncached(text)


def uncached(text: str) -> Any:
    """`cached` of a text not in `VALUES`."""
    if "\n" in text:  # a value over several lines, as a layout's pattern finds it
        return folded(text)
    value = prose(text)
    if value is UNSURE:
        if _STAMP(text):
            value = text
        elif text[:1] == "[":
            found = _LISTS.get(text)
            if found is None:
                found = _words(text)
                if len(_LISTS) >= 4096:
                    _LISTS.clear()
                _LISTS[text] = found
            return list(found)
        else:
            value = _value(text)
    if len(text) < 64 and not isinstance(value, (list, dict)):
        if len(VALUES) >= 4096:  # full of texts met once (ids): start again
            VALUES.clear()
        VALUES[text] = value
    return value


# a flow list of words as loa-mem writes tags: `[a, b-c]`
_WORD_LIST = re.compile(r"\[([a-z0-9][a-z0-9-]*(?:, [a-z0-9][a-z0-9-]*)*)\]").fullmatch


def _words(text: str) -> list[Any]:
    """`_value` of a flow list, each word read once per process (tags repeat)."""
    found = _WORD_LIST(text)
    if found is None:
        value: list[Any] = _value(text)
        return value
    items = []
    for word in found.group(1).split(", "):
        item = VALUES.get(word, UNSURE)
        if item is UNSURE:
            item = plain(word)  # what the flow list's own reading gives a word
            if len(VALUES) < 4096:
                VALUES[word] = item
        if item is None or item is UNSURE:
            raise Unsure  # as `flow_list` refuses them
        items.append(item)
    return items


def _value(text: str) -> Any:
    if text.startswith("'"):
        value = quoted(text)
    elif text.startswith("["):
        value = flow_list(text)
    elif text == "{}":
        raise Unsure  # an empty mapping: left to the general reader
    else:
        value = plain(text.rstrip(" "))
    if value is UNSURE:
        raise Unsure
    return value
