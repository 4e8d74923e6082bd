"""What the built-in summarizer says about structured files and logs, instead of quoting lines.

JSON, YAML and TOML are parsed (TOML with the standard library's `tomllib`, or `tomli` before
Python 3.11; YAML through `core.yamlio`): the summary names the top-level keys, counts the items
of each list and shows first values, so a JSON output never summarizes as the bullets `{` and
`}`. A log (`.log`, `.out`, `.err`, or any text with such lines) gives its first line, its error
lines (naming an error, a failure, an exception or a traceback) and its last line. Every value
is quoted from the file, cut at 80 characters. Pure: text in, lines out.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_KEYS = 12
MAX_ERRORS = 8
MAX_VALUE = 80
_ERROR = re.compile(r"\b(error|errors|fail|failed|failure|failing|traceback|exception)\b",
                    re.IGNORECASE)
_LOGS = (".log", ".out", ".err")


def kind(path: str) -> str | None:
    lowered = path.lower()
    for name, endings in (("json", (".json",)), ("yaml", (".yaml", ".yml")),
                          ("toml", (".toml",)), ("log", _LOGS)):
        if lowered.endswith(endings):
            return name
    return None


def parse(path: str, text: str) -> Any:
    """The parsed file; None when it is not JSON, YAML or TOML or does not parse."""
    found = kind(path)
    try:
        if found == "json":
            return json.loads(text)
        if found == "yaml":
            from loa_mem.core import yamlio

            return yamlio.load(text, path)
        if found == "toml":
            try:
                import tomllib
            except ImportError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
            return tomllib.loads(text)
    except Exception:  # a file that does not parse is summarized as text
        return None
    return None


def _value(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False, default=str)
    shown = shown if len(shown) <= MAX_VALUE else shown[:MAX_VALUE - 1] + "…"
    return "`" + shown.replace("`", "'") + "`"


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = list(value)
        more = ", …" if len(keys) > 5 else ""
        return f"object, {len(keys)} key(s): {', '.join(map(str, keys[:5]))}{more}"
    if isinstance(value, list):
        first = f"; first: {_value(value[0])}" if value else ""
        return f"list of {len(value)} item(s){first}"
    return _value(value)


def data_lines(data: Any) -> list[str]:
    """Top-level keys, item counts and first values of a parsed file."""
    if isinstance(data, dict):
        keys = list(data)
        out = [f"- {len(keys)} top-level key(s): {', '.join(map(str, keys[:MAX_KEYS]))}"
               + (", …" if len(keys) > MAX_KEYS else "")]
        out += [f"- `{key}`: {_describe(data[key])}" for key in keys[:MAX_KEYS]]
        return out
    return [f"- {_describe(data)}"]


def error_lines(text: str) -> list[str]:
    """The lines that name an error, a failure, an exception or a traceback, quoted."""
    found = [line.strip() for line in text.splitlines() if _ERROR.search(line)]
    if not found:
        return []
    unique = list(dict.fromkeys(found))
    out = [f"- {len(found)} error line(s)" + (f", {len(unique)} distinct" if len(unique) <
                                               len(found) else "")]
    out += [f"  - `{_cut(line)}`" for line in unique[:MAX_ERRORS]]
    return out


def _cut(line: str) -> str:
    line = line.replace("`", "'")
    return line if len(line) <= 160 else line[:159] + "…"


def summary_lines(path: str, text: str) -> list[str] | None:
    """What to say about a structured file or a log; None when it is neither (quote lines)."""
    data = parse(path, text)
    if data is not None:
        return data_lines(data)
    if kind(path) == "log" or (kind(path) is None and _ERROR.search(text)):
        errors = error_lines(text)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not errors or not lines:
            return None
        return [f"- first line: `{_cut(lines[0])}`", *errors,
                f"- last line: `{_cut(lines[-1])}`"]
    return None
