"""Human views of the memory commands' results (JSON shapes live on the results)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loa_mem.cli.render import Block, Table

if TYPE_CHECKING:
    from loa_mem.memory.commands.lifecycle import Changed
    from loa_mem.memory.commands.read import History, Shown, Status
    from loa_mem.memory.commands.remember import Remembered
    from loa_mem.memory.commands.setup import Committed, Initialized
    from loa_mem.memory.recall import Recalled
    from loa_mem.memory.validate import Report


def _commit_note(sha: str | None) -> str:
    return f" (commit {sha[:10]})" if sha else " (not committed)"


def initialized(result: Initialized) -> list[Block]:
    if not result.created:
        return [f"loa-mem store already set up in {result.root}; nothing changed"]
    return [f"created {len(result.created)} file(s) in {result.root}{_commit_note(result.commit)}",
            *(f"  {p}" for p in result.created)]


def remembered(result: Remembered) -> list[Block]:
    if not result.created:
        return [f"{result.id} already holds this {result.category}; nothing new was written"]
    line = f"{result.id} remembered in {result.path}{_commit_note(result.commit)}"
    if result.supersedes:
        line = f"{result.id} supersedes {result.supersedes}{_commit_note(result.commit)}"
    return [line]


def recalled(result: Recalled) -> list[Block]:
    if not result.hits:
        return ["no memories match" + (f" {result.query!r}" if result.query else "")]
    columns = ["id", "category", "score", "confidence", "summary"]
    # --include-superseded, --include-expired or --include-archived: say which is which
    with_state = any(hit.state != "active" for hit in result.hits)
    if with_state:
        columns.insert(2, "state")
    # semantic, hybrid and neighbour recall show what the text part was made of
    text_parts = [p for p in ("lexical", "semantic", "neighbour")
                  if any(p in h.parts for h in result.hits)]
    if result.explain:
        columns += ["text", *text_parts, "recency", "tier"]
    rows = []
    for hit in result.hits:
        row = [hit.id, hit.data.get("category"), hit.score, hit.data.get("confidence"),
               hit.data.get("summary") or str(hit.data.get("content", ""))[:80]]
        if with_state:
            row.insert(2, hit.state)
        if result.explain:
            row += [hit.parts.get("text"), *(hit.parts.get(p) for p in text_parts),
                    hit.parts["recency"], hit.parts["tier"]]
        rows.append(row)
    blocks: list[Block] = [Table(columns, rows)]
    if result.tracked:
        blocks.append(f"counted one application for each{_commit_note(result.commit)}")
    return blocks


def shown(result: Shown) -> list[Block]:
    entry = result.entry
    lines: list[Block] = [
        f"{entry.get('id')}  {entry.get('category')}  {result.state}  "
        f"({result.path}:{result.line})",
        f"summary:    {entry.get('summary')}",
        f"confidence: {entry.get('confidence')}   ttl: {entry.get('ttl')}   "
        f"expires: {entry.get('expires_at') or 'never'}",
        f"tags:       {', '.join(entry.get('tags') or []) or '-'}",
        f"source:     {_source(entry.get('source'))}",
        f"tier:       {result.tier}   "
        f"effectiveness: {_effectiveness(entry.get('effectiveness'))}",
    ]
    if entry.get("archived") or result.state == "archived":
        lines.append(f"archived:   {entry.get('archived_at') or '-'}   reason: "
                     f"{entry.get('archive_reason') or '-'}")
    if len(result.chain) > 1:
        lines.append("chain:      " + " -> ".join(result.chain))
    lines += ["", str(entry.get("content", "")).rstrip()]
    return lines


def _effectiveness(effect: object) -> str:
    """`score 67 after 3 application(s): 2 worked, 1 failed`, or `-` before any."""
    if not isinstance(effect, dict) or not effect.get("applications"):
        return "-"
    score = effect.get("score")
    return (f"score {score if score is not None else '-'} after {effect['applications']} "
            f"application(s): {effect.get('successes') or 0} worked, "
            f"{effect.get('failures') or 0} failed")


def _source(source: object) -> str:
    if not isinstance(source, dict):
        return str(source)
    text = f"session {source.get('session_id')} at {source.get('timestamp')}"
    for key in ("agent", "phase", "file_path", "line_range"):
        if source.get(key):
            text += f", {key.replace('_', ' ')} {source[key]}"
    return text


def changed(result: Changed) -> list[Block]:
    ids = ", ".join(result.ids) or "nothing"
    if result.dry_run:
        return [f"would {result.op} {len(result.ids)}: {ids}" + (
            f" (reason: {result.reason})" if result.reason else "")]
    if result.op == "archive" and not result.ids:
        return ["nothing to archive"]
    line = f"{result.op}: {ids}" + (f" (reason: {result.reason})" if result.reason else "")
    if "tier" in result.details:
        effect = result.details["effectiveness"]
        line += (f"; score {effect.get('score')} after {effect.get('applications')} "
                 f"application(s), tier {result.details['tier']}")
    if "from" in result.details:
        line += f" from {result.details['from']}"
    return [line + _commit_note(result.commit)]


def history(result: History) -> list[Block]:
    return [Table(["commit", "date", "subject"],
                  [[c.sha[:10], c.date, c.subject] for c in result.commits],
                  f"history of {result.id}")]


def status(result: Status) -> list[Block]:
    rows = [[c, n["active"], n["expired"], n["superseded"], n["archived"]]
            for c, n in result.counts.items()]
    blocks: list[Block] = [f"store: {result.root}"]
    if not result.enabled:
        blocks.append("Loa memory is switched off (memory_schema.enabled: false): remember, "
                      "recall and the other memory commands refuse; the counts are of the files")
    blocks.append(Table(["category", "active", "expired", "superseded", "archived"], rows))
    if result.expiring:
        blocks.append(f"expiring within {result.warn_days} days:")
        blocks += [f"  {e['id']}  {e['expires_at']}  {e['summary']}" for e in result.expiring]
    if result.review:
        blocks.append("flagged for review (low effectiveness): " + ", ".join(result.review))
    if result.pending:
        blocks.append("not committed yet: " + ", ".join(result.pending) + " (loa-mem commit)")
    if result.auto_capture:
        blocks.append("auto-capture: " + ", ".join(
            f"{source} {'on' if on else 'off'}" for source, on in result.auto_capture.items()))
    return blocks


def validated(report: Report) -> list[Block]:
    lines: list[Block] = [f"{p.path}:{p.line}: {p.severity}: [{p.rule}] "
                          + (f"{p.id}: " if p.id else "") + p.message for p in report.problems]
    errors = sum(p.severity == "error" for p in report.problems)
    warnings = len(report.problems) - errors
    lines.append(f"{'ok' if report.ok else 'FAILED'}: {_checked(report)}, {errors} error(s), "
                 f"{warnings} warning(s)")
    return lines


def _checked(report: Report) -> str:
    """`12 entries`, then each other kind of file validate read, when there were any."""
    others = [_files(n, kind.replace("_", " ")) for kind, n in report.others.items() if n]
    return ", ".join([f"{report.entries} entries", *others])


def _files(n: int, plural: str) -> str:
    if n != 1:
        return f"{n} {plural}"
    return f"1 {plural[:-3] + 'y' if plural.endswith('ies') else plural[:-1]}"


def github_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A workflow command's property value (file=, title=): `:` and `,` end one otherwise."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(report: Report) -> str:
    out = []
    for p in report.problems:
        level = "error" if p.severity == "error" else "warning"
        out.append(f"::{level} file={github_property(p.path)},line={p.line},"
                   f"title={github_property('loa-mem ' + p.rule)}::"
                   f"{github_data((p.id + ': ' if p.id else '') + p.message)}\n")
    out.append(f"loa-mem validate: {'ok' if report.ok else 'failed'}, "
               f"{len(report.problems)} problem(s) in {_checked(report)}\n")
    return "".join(out)


def committed(result: Committed) -> list[Block]:
    return [f"committed {len(result.paths)} file(s) ({', '.join(result.ops)}) as "
            f"{result.commit[:10]}"]
