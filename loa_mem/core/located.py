"""Where each top-level item of a grimoire file sits: what both YAML readers return (`yamlio`,
the full parser, and `yamlfast`, the fast one), kept apart so that the fast reader imports no
YAML library unless an item needs the full parser."""

from __future__ import annotations

from typing import Any, NamedTuple

# Named tuples, not dataclasses: importing `dataclasses` (inspect, ast, dis, tokenize...) costs
# every fast path about 20 ms; `typing` costs a fifth of that.


class Located(NamedTuple):
    """One top-level list item and the lines (1-based, inclusive) it occupies."""

    data: Any
    first_line: int
    last_line: int
    key_lines: dict[str, int]
    text_hash: int = 0  # `spanhash.of_lines` of its lines

    def span(self, shift: int = 0) -> tuple[Any, int, int, dict[str, int], int]:
        """(data, first, last, key offsets, text hash) with lines moved by `shift`, for the
        index."""
        offsets = {k: line - self.first_line for k, line in self.key_lines.items()}
        return (self.data, self.first_line + shift, self.last_line + shift, offsets,
                self.text_hash)

    def moved(self, shift: int) -> Located:
        """The same item `shift` lines further down."""
        return Located(self.data, self.first_line + shift, self.last_line + shift,
                       {k: line + shift for k, line in self.key_lines.items()}, self.text_hash)


class ListFile(NamedTuple):
    items: list[Located]
    indent: int
    flow: bool
