"""summarize: a summary file with frontmatter and backlinks, and the sources' sidecars pointing
back at it (spec section 7).

The text comes from one of three places, in this order: what the caller passes (the model wrote
it), the command configured as `working_set.summarizer.command` (run with the files' paths as
arguments from the store root, it prints the summary), or the built-in extractive summarizer
(`extractive.py`). The frontmatter's `method` says which, so a reader knows what they are reading.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loa_mem.core import clock, git, githistory, sensitive, tokens
from loa_mem.core.errors import Refused
from loa_mem.workingset import extractive, meta
from loa_mem.workingset import manifests as ws

STYLES = ("bullet", "narrative", "schema", "diff", "decision")


@dataclass(frozen=True)
class Summarized:
    path: str
    sources: list[str]
    style: str
    method: str
    tokens: int
    sidecars: list[str]
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "summary_of": self.sources, "style": self.style,
                "method": self.method, "tokens": self.tokens, "sidecars": self.sidecars,
                "commit": self.commit}


def check_style(style: str) -> str:
    if style not in STYLES:
        raise Refused("unknown summary style (--style)", f"use one of: {', '.join(STYLES)}")
    return style


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-") or "summary"


def default_name(sources: list[str]) -> str:
    """One file: its path without the extension; several: their common folder and a count."""
    if len(sources) == 1:
        path = sources[0]
        stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
        return slug(stem)
    common = os.path.commonpath(sources) if len(set(sources)) == len(sources) else ""
    base = slug(common) if common and common not in sources else "summary-of"
    return f"{base}-{len(sources)}-files"


def summary_rel(s: ws.Settings, name: str) -> str:
    sensitive.refuse_sensitive(name, "the summary name (--name)")
    name = name[:-3] if name.endswith(".md") else name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise Refused("the summary name (--name) is not a plain file name",
                      "use letters, digits, '.', '_' and '-'")
    return f"{s.summaries_dir}/{name}.md"


def read_text(top: Path, rel: str) -> str | None:
    try:
        return (top / rel).read_bytes().decode("utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def previous_text(top: Path, rel: str) -> str | None:
    """The committed version before the current one: HEAD's when the file changed since, else
    the version before the last commit that touched it."""
    current = (top / rel).read_bytes() if (top / rel).is_file() else None
    last = git.run(top, "log", "-1", "--format=%H", "--", rel, check=False).strip()
    if not last:
        return None
    committed = githistory.file_bytes_at(top, last, rel)
    if committed is not None and committed != current:
        return committed.decode("utf-8", "replace")
    parent = git.run(top, "rev-parse", "-q", "--verify", f"{last}^", check=False).strip()
    before = githistory.file_bytes_at(top, parent, rel) if parent else None
    return before.decode("utf-8", "replace") if before is not None else None


def run_command(top: Path, s: ws.Settings, sources: list[str], style: str) -> str:
    assert s.summarizer_command
    argv = [*shlex.split(s.summarizer_command), *sources]
    env = {**git.clean_env(), "LOA_MEM_SUMMARY_STYLE": style}
    where = f"summarizer command {argv[0]!r} (working_set.summarizer.command)"
    try:
        done = subprocess.run(argv, cwd=top, env=env, capture_output=True, text=True,
                              timeout=s.summarizer_timeout, check=False)
    except FileNotFoundError:
        raise Refused(f"{where} was not found",
                      "fix the command or remove it from the config") from None
    except subprocess.TimeoutExpired:
        raise Refused(f"{where} took longer than {s.summarizer_timeout:g} s",
                      "raise working_set.summarizer.timeout_seconds") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise Refused(f"{where} failed: {detail}", "nothing was written")
    if not done.stdout.strip():
        raise Refused(f"{where} printed nothing", "it must print the summary on stdout")
    return done.stdout


def redact(body: str) -> str:
    """Leave out quoted lines that look like secrets or personal data (extractive text only)."""
    out = []
    for line in body.splitlines():
        found = sensitive.scan(line)
        if found:
            kinds = ", ".join(dict.fromkeys(f.kind for f in found))
            out.append(f"- [a line was left out: it looks like {kinds}]")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def produce(top: Path, s: ws.Settings, sources: list[str], style: str, text: str | None,
            builtin: bool = False) -> tuple[str, str]:
    """(body, method) for a summary of `sources`."""
    if text is not None:
        if not text.strip():
            raise Refused("the summary text is empty", "pass the text the model wrote")
        sensitive.refuse_sensitive(text, "the summary text")
        return text, "model"
    if s.summarizer_command and not builtin:
        body = run_command(top, s, sources, style)
        sensitive.refuse_sensitive(body, "the summarizer's output")
        return body, "command"
    found = [extractive.Source(p, read_text(top, p),
                               previous_text(top, p) if style == "diff" else None)
             for p in sources]
    return redact(extractive.summarize(found, style)), "extractive"


def document(s: ws.Settings, rel: str, sources: list[str], style: str, method: str, now: str,
             body: str) -> str:
    """The summary file: frontmatter, a title, the text, then References back to each source."""
    # Written by hand for the block list and quoted time of the MOOLLM example; JSON strings
    # are valid YAML double-quoted scalars.
    front = ("summary_of:\n" + "".join(f"  - {json.dumps(p)}\n" for p in sources)
             + f"created: {json.dumps(now)}\nstyle: {style}\nmethod: {method}\n")
    title = (f"Summary of {sources[0]}" if len(sources) == 1
             else f"Summary of {len(sources)} files")
    folder = os.path.dirname(rel) or "."
    links = [f"- [{p.rsplit('/', 1)[-1]}]({Path(os.path.relpath(p, folder)).as_posix()})"
             for p in sources]
    return (f"---\n{front}---\n\n## {title}\n\n{body.strip()}\n\n---\nReferences:\n"
            + "\n".join(links) + "\n")


def point_sidecars(top: Path, sources: list[str], rel: str, now: str, actor: str,
                   txn: Any) -> list[str]:
    """Set summarized_in and summary_date in each source's sidecar (created when missing)."""
    written = []
    for source in sources:
        sidecar = meta.ensure(top, source, actor)
        sidecar.set("summarized_in", rel)
        sidecar.set("summary_date", now)
        sidecar.stamp(now)
        txn.put(sidecar.path, sidecar.text())
        written.append(sidecar.path)
    return written


def _sources(store: Any, s: ws.Settings, paths: list[str]) -> list[str]:
    if not paths:
        raise Refused("nothing to summarize", "name one or more files")
    sources = list(dict.fromkeys(ws.existing_file(store, p) for p in paths))
    for source in sources:
        reason = ws.own_file_reason(store, s, source)
        if reason and source not in {g.path for g in store.grimoire_files()}:
            raise Refused(f"{source} is not a file to summarize ({reason})",
                          "summarize the working-tree files themselves")
    return sources


def summarize(store: Any, paths: list[str], style: str, text: str | None, name: str | None,
              actor: str, commit: bool = True, builtin: bool = False) -> Summarized:
    s = ws.settings(store)
    check_style(style)
    sources = _sources(store, s, paths)
    rel = summary_rel(s, name or default_name(sources))
    if rel in sources:
        raise Refused(f"{rel} would overwrite one of its own sources", "pass another --name")
    top = Path(store.top)
    body, method = produce(top, s, sources, style, text, builtin)
    with store.write("summarize", actor, commit) as txn:
        now = clock.now_iso()
        content = document(s, rel, sources, style, method, now, body)
        txn.put(rel, content)
        sidecars = point_sidecars(top, sources, rel, now, actor, txn)
        txn.event("summarize", [], None, path=rel, summary_of=sources, style=style,
                  method=method)
        txn.what = f"{rel} ({style}, {method}) of {len(sources)} file(s)"
    return Summarized(rel, sources, style, method, tokens.estimate(content), sidecars,
                      txn.commit_sha)
