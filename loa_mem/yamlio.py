"""Everything YAML, behind one module.

Reading uses PyYAML's libyaml loader (about 5x faster than a ruamel round-trip load) and records
where each top-level entry sits in the file, so that a write can replace the lines of only the
entries it changes. Editing an entry uses a ruamel.yaml round-trip of that entry's lines alone, so
comments, key order and quoting survive everywhere, including inside the edited entry.

Timestamps are read as plain strings (the ISO text people wrote), never as datetime objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from loa_mem.errors import InvalidFile

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _without_timestamps(resolvers: dict[Any, Any]) -> dict[Any, Any]:
    return {
        first: [(tag, rx) for tag, rx in pairs if tag != "tag:yaml.org,2002:timestamp"]
        for first, pairs in resolvers.items()
    }


class _Loader(_BaseLoader):  # type: ignore[misc]
    yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


class _Dumper(_BaseDumper):  # type: ignore[misc]
    yaml_implicit_resolvers = _without_timestamps(yaml.SafeDumper.yaml_implicit_resolvers)


def _represent_str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: Any, value: list[Any]) -> Any:
    flat = all(isinstance(v, (str, int, float)) and "\n" not in str(v) for v in value)
    short = sum(len(str(v)) + 2 for v in value) < 80
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flat and short)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


@dataclass(frozen=True)
class Located:
    """One top-level list item and the lines (1-based, inclusive) it occupies."""

    data: Any
    first_line: int
    last_line: int
    key_lines: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ListFile:
    items: list[Located]
    indent: int
    flow: bool


def _problem(path: str, error: yaml.YAMLError) -> InvalidFile:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    reason = getattr(error, "problem", None) or str(error).splitlines()[0]
    return InvalidFile(path, line, column, f"YAML does not parse: {reason}")


def load(text: str, path: str) -> Any:
    """Load any YAML document safely; a syntax error names file, line and column."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except yaml.YAMLError as error:
        raise _problem(path, error) from None


def _last_line(node: Any) -> int:
    """Last 0-based line holding content of `node` (end marks point one past the content)."""
    if isinstance(node, yaml.MappingNode):
        return max((_last_line(v) for _, v in node.value), default=node.start_mark.line)
    if isinstance(node, yaml.SequenceNode) and node.value and node.flow_style is not True:
        return max(_last_line(v) for v in node.value)
    end = node.end_mark
    return end.line if end.column > 0 else max(end.line - 1, node.start_mark.line)


def _first_line(node: Any, lines: list[str], floor: int) -> int:
    line = node.start_mark.line
    while line > floor and not lines[line].lstrip().startswith("-"):
        line -= 1
    return line


def load_list(text: str, path: str) -> ListFile:
    """Load a file whose top level is a list (a grimoire file), locating every item."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return ListFile([], 0, False)
        if not isinstance(root, yaml.SequenceNode):
            mark = root.start_mark
            raise InvalidFile(path, mark.line + 1, mark.column + 1, "expected a YAML list of entries")
        lines = text.splitlines()
        items: list[Located] = []
        floor = 0
        for node in root.value:
            data = loader.construct_document(node)
            first = _first_line(node, lines, floor)
            last = _last_line(node)
            keys = {}
            if isinstance(node, yaml.MappingNode):
                keys = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
            items.append(Located(data, first + 1, last + 1, keys))
            floor = last + 1
        return ListFile(items, root.start_mark.column, root.flow_style is True and bool(items))
    except yaml.YAMLError as error:
        raise _problem(path, error) from None
    finally:
        loader.dispose()


def dump_item(data: dict[str, Any], indent: int = 0) -> str:
    """Render one mapping as a block list item, ready to append to a grimoire file."""
    text: str = yaml.dump(
        [data], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
        default_flow_style=False,
    )
    return _shift(text, indent)


def dump(data: Any) -> str:
    """Render a whole document (for files loa-mem creates, such as manifests)."""
    text: str = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
        default_flow_style=False,
    )
    return text


def _shift(text: str, indent: int) -> str:
    if indent <= 0:
        return text
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


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
    return rt


def _represent_null(representer: Any, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def edit_item(item_text: str, indent: int, change: Callable[[Any], None]) -> str:
    """Round-trip one list item's lines through ruamel, apply `change` to its mapping, and
    return the new lines. Comments and formatting inside the item survive."""
    import io

    rt = _round_trip()
    document = rt.load(_unshift(item_text, indent))
    change(document[0])
    out = io.StringIO()
    rt.dump(document, out)
    return _shift(out.getvalue(), indent)


def plain(value: Any) -> Any:
    """Turn ruamel round-trip containers into plain dicts and lists (for comparisons, JSON)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


def iter_mapping_lines(located: Located) -> Iterator[tuple[str, int]]:
    yield from located.key_lines.items()
