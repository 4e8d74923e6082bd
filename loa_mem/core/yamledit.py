"""Editing YAML in place: ruamel.yaml round trips, behind this one module.

A round trip keeps comments, key order and quoting, so an edited entry differs from what was
written only in the lines the change is about. Reading and plain dumping are `yamlio`'s (PyYAML's
libyaml, about 5x faster than a ruamel load); ruamel is imported only when something is edited.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from loa_mem.core.errors import InvalidFile
from loa_mem.core.yamlio import load, shift


def _unshift(text: str, indent: int) -> str:
    if indent <= 0:
        return text
    return "".join(line[indent:] if line[:indent].isspace() else line
                   for line in text.splitlines(True))


def _round_trip() -> Any:
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096
    rt.indent(mapping=2, sequence=2, offset=0)
    rt.representer.add_representer(type(None), _represent_null)
    rt.representer.add_representer(str, _represent_str)
    return rt


def _represent_str(representer: Any, text: str) -> Any:
    """A new string that loa-mem's readers (YAML 1.1, as PyYAML reads) would take for another
    type when written plain ("no", "on", "12:30") is single-quoted: ruamel writes YAML 1.2,
    where those are strings, so an agent named "no" came back as False. Plain strings loaded
    from the file stay as they were written (`_keep_plain`)."""
    from loa_mem.core import yamlio

    if text and yamlio.plain_tag(text) != "tag:yaml.org,2002:str":
        return representer.represent_scalar("tag:yaml.org,2002:str", text, style="'")
    return representer.represent_str(text)


def _keep_plain(node: Any) -> Any:
    """`node` (a loaded round-trip document) with each plain string value that YAML 1.1 reads
    as another type marked to be written plain again: quoting a hand-written `flag: no` on an
    edit would change what the file means to loa-mem's readers."""
    from ruamel.yaml.scalarstring import PlainScalarString

    from loa_mem.core import yamlio

    def kept(value: Any) -> Any:
        if type(value) is str and value and \
                yamlio.plain_tag(value) != "tag:yaml.org,2002:str":
            return PlainScalarString(value)
        return _keep_plain(value)

    if isinstance(node, dict):
        for key in list(node):
            node[key] = kept(node[key])
    elif isinstance(node, list):
        for at, value in enumerate(node):
            node[at] = kept(value)
    return node


def _represent_null(representer: Any, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def _nested_indents(lines: list[str]) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indents of the block collections under the item's keys, as
    written (ruamel applies one setting to a whole document, so it is read from the item)."""
    import itertools
    import re

    mapping, sequence, offset = 2, 2, 0
    found_map = found_seq = False
    body = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    scalar_at = -1  # the column of a key whose block scalar (| or >) is being skipped
    for line, following in itertools.pairwise(body):
        column = len(line) - len(line.lstrip())
        if scalar_at >= 0 and column > scalar_at:
            continue
        head = line.split("#", 1)[0].rstrip()
        scalar_at = column if re.search(r":\s*[|>][-+0-9]*$", head) else -1
        if not head.endswith(":"):
            continue
        inner = len(following) - len(following.lstrip())
        if inner <= column:
            continue
        stripped = following.lstrip()
        if stripped.startswith("- ") and not found_seq:
            after = len(stripped) - len(stripped[1:].lstrip()) - 1
            offset, sequence, found_seq = inner - column, inner - column + 1 + after, True
        elif not stripped.startswith("-") and not found_map:
            mapping, found_map = inner - column, True
    return mapping, max(sequence, offset + 2), offset


def edit_item(item_text: str, indent: int, change: Callable[[Any], None]) -> str:
    """Round-trip one list item's lines through ruamel, apply `change` to its mapping, and
    return the new lines. Comments, quoting and the item's own indentation survive, so only the
    lines the change is about differ."""
    import io
    import re

    text = _unshift(item_text, indent)
    lines = text.splitlines(keepends=True)
    lead = re.match(r"-[ ]+(?=[^\s#])", lines[0]) if lines else None
    if lead is None:  # an unusual item ("-" alone on its line): ruamel's default layout
        rt = _round_trip()
        document = _keep_plain(rt.load(text))
        change(document[0])
        out = io.StringIO()
        rt.dump(document, out)
        return shift(out.getvalue(), indent)
    column = lead.end()
    body = [lines[0][column:]] + [line[column:] if line[:column].isspace() else line.lstrip(" ")
                                  for line in lines[1:]]
    rt = _round_trip()
    mapping, sequence, offset = _nested_indents(body)
    rt.indent(mapping=mapping, sequence=sequence, offset=offset)
    document = _keep_plain(rt.load("".join(body)))
    change(document)
    out = io.StringIO()
    rt.dump(document, out)
    dumped = out.getvalue().splitlines(keepends=True)
    pad = " " * column
    rebuilt = [lines[0][:column] + dumped[0]] + [pad + line if line.strip() else line
                                                 for line in dumped[1:]]
    return shift("".join(rebuilt), indent)


def plain(value: Any, timestamps: Callable[[datetime], str] | None = None) -> Any:
    """Plain dicts, lists and scalars from a round-trip document (for comparisons, JSON):
    ruamel's scalar types become int, float and str; timestamps become `timestamps(value)` when
    given, else their text."""
    if isinstance(value, dict):
        return {str(k): plain(v, timestamps) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, timestamps) for v in value]
    if timestamps is not None and isinstance(value, datetime):
        return timestamps(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def round_trip_load(text: str, path: str) -> Any:
    """Load a whole small document (a manifest, a sidecar) keeping its comments, key order and
    quoting, to be changed in place and written back with `round_trip_dump`."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    load(text, path)  # the same syntax errors, and aliases bounded, before ruamel builds it
    try:
        return _keep_plain(_round_trip().load(text))
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise InvalidFile(path, line, column,
                          f"YAML does not parse: {error.problem or error}") from None
    except YAMLError as error:
        raise InvalidFile(path, 1, 1, f"YAML does not parse: {error}") from None


def round_trip_dump(data: Any) -> str:
    """Render a document loaded by `round_trip_load` (comments and quoting as they were)."""
    import io

    out = io.StringIO()
    _round_trip().dump(data, out)
    return out.getvalue()
