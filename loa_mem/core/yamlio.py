"""Everything YAML, behind one module.

Reading uses PyYAML's libyaml loader (about 5x faster than a ruamel round-trip load) and records
where each top-level entry sits in the file, so that a write can replace the lines of only the
entries it changes. Editing an entry is `yamledit`'s: a ruamel.yaml round-trip of that entry's
lines alone, so comments, key order and quoting survive everywhere, including inside the edited
entry.

Timestamps are read as plain strings (the ISO text people wrote), never as datetime objects.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from loa_mem.core import spanhash, textfile
from loa_mem.core.errors import InvalidFile, invalid_from, invalid_values
from loa_mem.core.located import ListFile, Located

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


class _Resolver(yaml.resolver.Resolver):
    yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


_RESOLVER = _Resolver()


def plain_tag(text: str) -> str:
    """The type a plain scalar `text` reads as here (a YAML tag; timestamps read as str)."""
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


_CONFLICT_MARKER = re.compile(r"^(?:<{7}|\|{7}|={7}|>{7})(?: |$)", re.MULTILINE)


def conflict_line(text: str) -> int | None:
    """The line of the first git conflict marker in `text`, if any."""
    found = _CONFLICT_MARKER.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _problem(path: str, error: yaml.YAMLError, text: str = "") -> InvalidFile:
    marker = conflict_line(text)
    if marker is not None:
        return InvalidFile(path, marker, 1, "git conflict markers (a merge, rebase or pull "
                           "stopped on this file)", "run `loa-mem repair` to merge both sides "
                           "by entry id, or resolve the markers by hand")
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    reason = getattr(error, "problem", None) or str(error).splitlines()[0]
    refused = getattr(error, "character", None)  # the reader's error gives no mark
    at = text.find(chr(refused)) if isinstance(refused, int) else -1
    if at >= 0:
        line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        reason = f"character U+{refused:04X}, which YAML does not allow in a file"
    return InvalidFile(path, line, column, f"YAML does not parse: {reason}")


def load(text: str, path: str) -> Any:
    """Load any YAML document safely; a syntax error names file, line and column, and aliases
    may not expand into more than `MAX_EXPANSION` values (a "billion laughs" file)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return _build(node, loader, seen=set())
        except (_Unusual, _Alias):
            _bound_expansion(node, path, text)
            return loader.construct_document(node)
    except yaml.YAMLError as error:
        raise _problem(path, error) from None
    except RecursionError:
        raise _too_deep(path) from None
    finally:
        loader.dispose()


# Values a document may expand to through aliases beyond the values it writes out.
MAX_EXPANSION = 100_000


def _too_deep(path: str) -> InvalidFile:
    return InvalidFile(path, 1, 1, "YAML nested too deeply to read",
                       "flatten it; grimoire entries are a few levels deep")


_HUGE = 10**15


def _expansion(root: Any) -> tuple[int, int]:
    """(values the node expands to, distinct nodes); iterative and memoised, so neither deep
    nesting nor aliases make it slow or recursive."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack = [root]
    while stack:
        node = stack[-1]
        key = id(node)
        if key in sizes:
            stack.pop()
            continue
        children = _children(node)
        waiting = [c for c in children if id(c) not in sizes]
        if waiting and key not in active:
            active.add(key)
            stack.extend(waiting)
            continue
        if any(id(c) in active and id(c) not in sizes for c in waiting):
            return _HUGE, len(sizes)  # an alias inside its own anchor: endless
        active.discard(key)
        sizes[key] = min(1 + sum(sizes[id(c)] for c in children), _HUGE)
        stack.pop()
    return sizes[id(root)], len(sizes)


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _alias_mark(text: str) -> tuple[int, int, str]:
    """Line, column and name of the first alias in `text`."""
    try:
        for event in yaml.parse(text, Loader=_Loader):
            mark: Any = event.start_mark
            if isinstance(event, yaml.AliasEvent) and mark is not None:
                return mark.line + 1, mark.column + 1, str(event.anchor)
    except yaml.YAMLError:
        pass
    return 1, 1, "?"


def _bound_expansion(node: Any, path: str, text: str) -> None:
    expanded, distinct = _expansion(node)
    if expanded > distinct + MAX_EXPANSION:
        line, column, name = _alias_mark(text)
        raise InvalidFile(path, line, column,
                          f"YAML aliases (*{name}) expand to more than {MAX_EXPANSION:,} values",
                          "write the values out instead of nesting aliases; nothing was read")


def _last_line(node: Any) -> int:
    """Last 0-based line holding content of `node` (end marks point one past the content)."""
    if isinstance(node, yaml.MappingNode):
        return max((_last_line(v) for _, v in node.value), default=node.start_mark.line)
    if isinstance(node, yaml.SequenceNode) and node.value and node.flow_style is not True:
        return max(_last_line(v) for v in node.value)
    end = node.end_mark
    line: int = end.line if end.column > 0 else max(end.line - 1, node.start_mark.line)
    return line


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_SCALARS = {"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
            "tag:yaml.org,2002:float"}


class _Unusual(Exception):
    """A node the direct builder leaves to PyYAML's constructor (merge keys, custom tags)."""


class _Alias(Exception):
    """A collection reached a second time: an alias (`*name`) of an anchor (`&name`)."""


def _build(node: Any, loader: Any, depth: int = 0, seen: set[int] | None = None) -> Any:
    """Plain Python value of a composed node, for the tags grimoire files use.

    PyYAML's generic constructor spends most of a load on bookkeeping these files never need
    (state generators, merge keys, recursion checks); building directly halves a load.
    """
    tag = node.tag
    if tag == _STR:
        return node.value
    if depth > 50:
        raise _Unusual
    if tag in (_MAP, _SEQ) and seen is not None:
        if id(node) in seen:
            raise _Alias
        seen.add(id(node))
    if tag == _MAP:
        result = {}
        for key_node, value_node in node.value:
            key = _build(key_node, loader, depth + 1, seen)
            if not isinstance(key, (str, int, float, bool)) or key in result:
                raise _Unusual
            result[key] = _build(value_node, loader, depth + 1, seen)
        return result
    if tag == _SEQ:
        return [_build(item, loader, depth + 1, seen) for item in node.value]
    if tag in _SCALARS:
        return loader.construct_object(node)
    raise _Unusual


def _first_line(node: Any, lines: list[str], floor: int) -> int:
    line: int = node.start_mark.line
    while line > floor and not lines[line].lstrip().startswith("-"):
        line -= 1
    return line


def load_list(text: str, path: str) -> ListFile:
    """Load a file whose top level is a list (a grimoire file), locating every item."""
    loader = _Loader(text)
    collecting = gc.isenabled()
    gc.disable()  # the loader makes ~25 objects per entry and no cycles; gc passes cost ~30%
    try:
        root = loader.get_single_node()
        if root is None:
            return ListFile([], 0, False)
        if not isinstance(root, yaml.SequenceNode):
            mark = root.start_mark
            raise InvalidFile(path, mark.line + 1, mark.column + 1,
                              "expected a YAML list of entries")
        lines = text.splitlines()
        items: list[Located] = []
        floor = 0
        seen: set[int] = set()
        for node in root.value:
            try:
                data = _build(node, loader, seen=seen)
            except _Alias:
                line, column, name = _alias_mark(text)
                raise InvalidFile(path, line, column,
                                  f"a YAML alias (*{name}) in a grimoire file",
                                  "write the value out: each entry stands alone, so that it "
                                  "can be edited, moved and merged by itself") from None
            except _Unusual:
                expanded, distinct = _expansion(node)
                if expanded > distinct:
                    line, column, name = _alias_mark(text)
                    raise InvalidFile(path, line, column,
                                      f"a YAML alias (*{name}) in a grimoire file",
                                      "write the value out: each entry stands alone") from None
                data = loader.construct_document(node)
            first = _first_line(node, lines, floor)
            last = _last_line(node)
            keys = {}
            if isinstance(node, yaml.MappingNode):
                keys = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
            items.append(Located(data, first + 1, last + 1, keys,
                                 spanhash.of_lines(lines, first, last)))
            floor = last + 1
        return ListFile(items, root.start_mark.column, root.flow_style is True and bool(items))
    except yaml.YAMLError as error:
        raise _problem(path, error, text) from None
    except RecursionError:
        raise _too_deep(path) from None
    finally:
        loader.dispose()
        if collecting:
            gc.enable()


def _load_path(job: tuple[str, str, Any, Any]) -> Any:
    """Worker: parse one file with the job's reader and hand it to the job's `prepare`; an
    error travels back as plain values (it pickles)."""
    rel_path, full_path, prepare, reader = job
    try:
        parsed = reader(textfile.read_text(Path(full_path), rel_path), rel_path)
    except InvalidFile as error:
        return rel_path, invalid_values(error)
    return rel_path, parsed if prepare is None else prepare(rel_path, parsed)


def load_lists(jobs: list[tuple[str, Any]], prepare: Callable[[str, ListFile], Any] | None = None,
               reader: Callable[[str, str], ListFile] | None = None) -> dict[str, Any]:
    """Parse several grimoire files; in parallel processes when there is enough to parse.

    Parsing is CPU-bound Python, so a cold index of 10,000 entries builds about twice as fast on
    two cores. Small jobs stay in this process, where a process pool would cost more than it saves.
    `prepare(path, parsed)` (a module-level function) runs where the file was parsed, so the
    caller's own per-entry work is parallel too and what travels back is what it needs; each
    value is its result, or an InvalidFile. `reader` (default `load_list`) reads one file's text
    with the same result as `load_list` (`yamlfast.load_list`, faster).
    """
    loaded = dict(iter_lists(jobs, prepare, reader))
    return {rel: loaded[rel] for rel, _ in jobs}


def iter_lists(jobs: list[tuple[str, Any]], prepare: Callable[[str, ListFile], Any] | None = None,
               reader: Callable[[str, str], ListFile] | None = None) -> Iterator[tuple[str, Any]]:
    """`load_lists` as (path, result) pairs in the order the files finish (the largest files
    start first), so the caller stores one while the others are still being parsed."""
    work = [(rel, str(full), prepare, reader or load_list) for rel, full in jobs]
    sizes = {full: os.path.getsize(full) for _, full, _, _ in work}
    work.sort(key=lambda job: -sizes[job[1]])
    workers = min(len(work), os.cpu_count() or 1)
    if workers > 1 and sum(sizes.values()) > _PARALLEL_BYTES and hasattr(os, "fork"):
        import multiprocessing as mp

        with mp.get_context("fork").Pool(workers) as pool:
            yield from (_loaded(result) for result in pool.imap_unordered(_load_path, work))
    else:
        yield from (_loaded(_load_path(job)) for job in work)


def _loaded(result: tuple[str, Any]) -> tuple[str, Any]:
    rel, value = result
    return rel, invalid_from(value) or value


_PARALLEL_BYTES = 1_000_000


def dump_item(data: dict[str, Any], indent: int = 0) -> str:
    """Render one mapping as a block list item, ready to append to a grimoire file."""
    text: str = yaml.dump(
        [data], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
        default_flow_style=False,
    )
    return shift(text, indent)


def dump(data: Any) -> str:
    """Render a whole document (for files loa-mem creates, such as manifests)."""
    text: str = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
        default_flow_style=False,
    )
    return text


def shift(text: str, indent: int) -> str:
    """`text` with every non-blank line indented by `indent` spaces."""
    if indent <= 0:
        return text
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def append_fields(item_text: str, data: dict[str, Any], fields: dict[str, Any]) -> str | None:
    """One block list item's lines with `fields` (new keys, scalar values) appended as lines,
    as the ruamel round trip writes them; None when that would not give exactly `data` plus the
    fields (the caller then takes `edit_item`)."""
    first = item_text.lstrip("\n").split("\n", 1)[0]
    pad = len(first) - len(first.lstrip())
    if not first.lstrip().startswith("- ") or first.lstrip()[2:3] in ("{", " ", ""):
        return None
    keys = " " * (pad + 2)
    out = item_text if item_text.endswith("\n") else item_text + "\n"
    out += "".join(f"{keys}{key}: {_scalar(value)}\n" for key, value in fields.items())
    try:
        [item] = load_list(out, "append").items
    except (ValueError, InvalidFile):
        return None
    return out if item.data == {**data, **fields} else None


def _scalar(value: Any) -> str:
    """A scalar as a plain YAML value, single-quoted when plain text would read as another type
    (a timestamp, a number)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if isinstance(value, str) and _reads_as(text) != value:
        return "'" + text.replace("'", "''") + "'"
    return text


def _reads_as(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_BaseLoader)
    except yaml.YAMLError:
        return None
