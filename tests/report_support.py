"""Shared by the report tests: a store with something in every section, and a small HTML tree
(stdlib parser) to read the page the way a browser lays it out, element by element."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tests.conftest import Cli, git

T0 = "2026-02-01T10:30:00Z"  # the conftest clock
LATER = "2026-02-26T10:30:00Z"  # the report's clock: the error of T0 expires within 7 days
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.texts) + "".join(c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [n for n in self.iter() if (tag is None or n.tag == tag) and all(
            (n.attrs.get(k) == v if v != "*" else k in n.attrs) for k, v in wanted.items())]

    def by_id(self, element_id: str) -> Node:
        [found] = self.find_all(id=element_id)
        return found


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for n in range(len(self.stack) - 1, 0, -1):
            if self.stack[n].tag == tag:
                del self.stack[n:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].texts.append(data)


def parse(text: str) -> Node:
    builder = _Builder()
    builder.feed(text)
    builder.close()
    return builder.root


def new_id(cli: Cli, *args: str, now: str = T0) -> str:
    memory_id: str = cli.ok(*args, "--json", now=now).json()["id"]
    return memory_id


def write_file(root: Path, rel: str, lines: int = 50) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("".join(f"line {n}\n" for n in range(lines)), encoding="utf-8")
    git(root, "add", "--", rel)
    git(root, "commit", "-q", "-m", f"add {rel}", "--", rel)


def populated(cli: Cli, root: Path) -> dict[str, Any]:
    """A store with a chain of three decisions and one of two, an error that expires soon,
    learnings in every tier, a working set with a pin and a gc run, and three agents with
    relationships and trust records. Returns the ids and names it made."""
    ids: dict[str, Any] = {}
    a = new_id(cli, "remember", "Use PostgreSQL for the database layer.", "-c", "decision",
               "--confidence", "0.95", "-t", "database")
    b = new_id(cli, "supersede", a, "Use PostgreSQL 15 for the database layer.",
               "--confidence", "0.95", now="2026-02-01T11:00:00Z")
    c = new_id(cli, "supersede", b, "Use PostgreSQL 16 for the database layer.",
               "--confidence", "0.95", now="2026-02-01T12:00:00Z")
    d = new_id(cli, "remember", "Deploy on Fridays only with a rollback plan.", "-c", "decision",
               "--confidence", "0.95")
    e = new_id(cli, "supersede", d, "Never deploy on Fridays.", "--confidence", "0.95",
               now="2026-02-01T13:00:00Z")
    ids["chains"] = [(a, b), (b, c), (d, e)]
    ids["expiring"] = new_id(cli, "remember", "Flaky CI timeouts came from the HTTP client.",
                             "-c", "error", "-t", "ci")
    ids["fact"] = new_id(cli, "remember", "The service listens behind the gateway.", "-c",
                         "fact")
    write_file(root, "docs/arch.md")
    write_file(root, "notes/debug.md")
    write_file(root, "notes/spike.md")
    cli.ok("pin", "docs/arch.md")
    cli.ok("advise", "--hot", "docs/arch.md", "--why", "architecture", "--hot",
           "notes/debug.md", "--why", "debugging")
    cli.ok("advise", "--cold", "notes/spike.md", "--why", "spike abandoned")
    cli.ok("gc")
    cli.ok("advise", "--cold", "notes/debug.md", "--why", "parser fixed again")
    learnings = {}
    for name, outcomes in (("high", ["--success"]), ("normal", ["--success", "--failure"]),
                           ("review", ["--failure"]),
                           ("ineffective", ["--failure"] * 3), ("untested", [])):
        memory_id = new_id(cli, "remember", f"Learning that turned out {name} in practice.",
                           "-c", "learning")
        for outcome in outcomes:
            cli.ok("feedback", memory_id, outcome)
        learnings[name] = memory_id
    ids["learnings"] = learnings
    for session, now in (("review-1", "2026-02-02T09:00:00Z"), ("review-2",
                                                                "2026-02-03T09:00:00Z")):
        cli.ok("session", "start", "--session", session, "--agent", "architect", "--agent",
               "critic", "--agent", "tester", now=now)
        cli.ok("agent", "relate", "critic", "architect", "--disagree", "--session", session,
               now=now)
        cli.ok("agent", "relate", "tester", "critic", "--complement", "--session", session,
               now=now)
        if session == "review-1":
            cli.ok("agent", "remember", "architect", "Prefer event sourcing for the audit log",
                   "--type", "decision", "--session", session, now=now)
        cli.ok("session", "end", "--session", session, now=now)
    cli.ok("trust", "dissent", "critic", "--round", "r1", "--impact", "--cite", "cost",
           "--text", "Event sourcing doubles storage; a history table gives the same trail",
           now="2026-02-04T09:00:00Z")
    cli.ok("trust", "dissent", "critic", "--round", "r2", "--text",
           "The snapshot job still doubles storage", now="2026-02-05T09:00:00Z")
    ids["relations"] = {("critic", "architect", "disagrees_with"),
                        ("tester", "critic", "complements")}
    return ids
