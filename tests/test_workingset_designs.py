"""The MOOLLM document's rules that were missing or partial: what the built-in summarizer says
about structured files and logs. At the fixed clock, against real repositories."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.workingset import repair, structured
from tests import ws_support as ws
from tests.conftest import Cli, git


def summary(cli: Cli, store: Path, path: str) -> str:
    data = cli.ok("summarize", path, "--style", "bullet", "--json").json()
    return (store / data["path"]).read_text(encoding="utf-8")


def bullets(text: str) -> list[str]:
    """The summary's own bullets (not the frontmatter's sources nor the References links)."""
    body = text.split("\n---\n", 1)[1]
    return [line for line in body.splitlines() if line.startswith(("- ", "  - "))
            and not line.startswith("- [")]


def test_a_json_summary_names_keys_counts_and_first_values(cli: Cli, store: Path) -> None:
    ws.write(store, "out/result.json", json.dumps(
        {"records": 10432, "columns": ["id", "email", "age"],
         "errors": [{"row": 7, "why": "email missing"}], "source": {"db": "crm", "day": 3}},
        indent=2) + "\n")
    said = bullets(summary(cli, store, "out/result.json"))
    assert said == [
        "- 4 top-level key(s): records, columns, errors, source",
        "- `records`: `10432`",
        '- `columns`: list of 3 item(s); first: `"id"`',
        '- `errors`: list of 1 item(s); first: `{"row": 7, "why": "email missing"}`',
        "- `source`: object, 2 key(s): db, day"]
    assert not any(line.strip("-` ") in ("{", "}", "[", "]") for line in said)


def test_yaml_and_toml_summaries_read_the_structure(cli: Cli, store: Path) -> None:
    ws.write(store, "conf/app.yaml", "name: shop\nreplicas: 3\nregions: [eu, us]\n")
    ws.write(store, "conf/app.toml", 'title = "shop"\n[db]\nhost = "x"\nport = 5432\n')
    assert bullets(summary(cli, store, "conf/app.yaml")) == [
        "- 3 top-level key(s): name, replicas, regions", '- `name`: `"shop"`',
        "- `replicas`: `3`", '- `regions`: list of 2 item(s); first: `"eu"`']
    assert bullets(summary(cli, store, "conf/app.toml")) == [
        "- 2 top-level key(s): title, db", '- `title`: `"shop"`',
        "- `db`: object, 2 key(s): host, port"]


def test_a_log_summary_gives_its_error_lines(cli: Cli, store: Path) -> None:
    ws.write(store, "logs/build.log", "start\ncompiling\nERROR: missing header foo.h\nok\n"
             "Traceback (most recent call last):\nValueError: bad\nERROR: missing header foo.h\n"
             "done\n")
    assert bullets(summary(cli, store, "logs/build.log")) == [
        "- first line: `start`",
        "- 3 error line(s), 2 distinct",
        "  - `ERROR: missing header foo.h`",
        "  - `Traceback (most recent call last):`",
        "- last line: `done`"]


def test_a_text_summary_never_quotes_a_line_of_punctuation(cli: Cli, store: Path) -> None:
    ws.write(store, "notes/raw.txt", "{\nfirst thing\n}\n")
    said = bullets(summary(cli, store, "notes/raw.txt"))
    assert said == ["- `first thing`"]


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=10), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=6), min_size=1, max_size=15))
def test_json_summaries_name_every_top_level_key_up_to_twelve(data: dict[str, object]) -> None:
    said = structured.summary_lines("x.json", json.dumps(data))
    assert said is not None
    assert said[0].startswith(f"- {len(data)} top-level key(s): ")
    assert len(said) == 1 + min(len(data), structured.MAX_KEYS)


def test_user_deliverables_are_kept_by_default(cli: Cli, store: Path) -> None:
    for path in ("deliverables/report.md", "README.md", "LICENSE", "notes/scratch.md"):
        ws.write(store, path, "text\n")
    args = [a for path in ("deliverables/report.md", "README.md", "LICENSE", "notes/scratch.md")
            for a in ("--cold", path, "--action", "archive", "--why", "done")]
    rows = cli.ok("advise", "--postmortem", "superseded", *args, "--json").json()["memory_actions"]
    assert [(r["path"], r["action_taken"]) for r in rows] == [
        ("deliverables/report.md", "overridden"), ("README.md", "overridden"),
        ("LICENSE", "overridden"), ("notes/scratch.md", "honored")]


def test_a_keep_list_in_the_config_replaces_the_default(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "working_set:\n  keep: [notes/**]\n",
                      encoding="utf-8")
    for path in ("README.md", "notes/scratch.md"):
        ws.write(store, path, "text\n")
    rows = cli.ok("advise", "--postmortem", "superseded",
                  "--cold", "README.md", "--action", "archive", "--why", "done",
                  "--cold", "notes/scratch.md", "--action", "archive", "--why", "done",
                  "--json").json()["memory_actions"]
    assert [(r["path"], r["action_taken"]) for r in rows] == [
        ("README.md", "honored"), ("notes/scratch.md", "overridden")]


def test_a_long_file_is_summarized_before_eviction_under_budget_pressure(cli: Cli,
                                                                        store: Path) -> None:
    ws.write(store, "logs/long.log", "".join(f"step {n}\n" for n in range(600)))  # 600 lines
    ws.write(store, "short.txt", "x" * 400)
    cli.ok("advise", "--hot", "logs/long.log", "--why", "w")
    cli.ok("advise", "--hot", "short.txt", "--why", "w")
    pressed = cli.ok("gc", "--budget", "100", "--json").json()
    actions = {a["path"]: a["action"] for a in pressed["gc_report"]["actions"]}
    # both go (the budget is small); the file over 500 lines is summarized first
    assert actions == {"logs/long.log": "summarized", "short.txt": "evicted"}
    summaries = list((store / ws.SUMMARIES).glob("*.md"))
    assert len(summaries) == 1 and "logs/long.log" in summaries[0].read_text(encoding="utf-8")


def _archive_hint(*extra: str) -> tuple[str, ...]:
    return ("advise", "--cold", "spike/cache.py", "--action", "archive", "--why", "abandoned",
            *extra)


def test_an_archived_attempt_records_its_postmortem(cli: Cli, store: Path) -> None:
    ws.write(store, "spike/cache.py", "CACHE = {}\n")
    advised = cli.ok(*_archive_hint("--postmortem", "the cache never hit", "--json")).json()
    assert advised["memory_actions"][0]["reason"] == (
        "on the cold list for gc (archive); postmortem: the cache never hit")
    assert ws.cold(store)["evict"][0]["postmortem"] == "the cache never hit"
    report = cli.ok("gc", "--json").json()["gc_report"]
    assert [(a["action"], a["postmortem"]) for a in report["actions"]] == [
        ("archived", "the cache never hit")]
    assert ws.sidecar(store, "spike/cache.py")["postmortem"] == "the cache never hit"
    shown = cli.ok("meta", "spike/cache.py").stdout
    assert "postmortem" in shown and "the cache never hit" in shown


def test_archiving_without_a_postmortem_off_a_terminal_is_refused(cli: Cli,
                                                                  store: Path) -> None:
    ws.write(store, "spike/cache.py", "CACHE = {}\n")
    head = git(store, "rev-parse", "HEAD")
    for extra in ((), ("--postmortem", "   ")):
        refused = cli(*_archive_hint(*extra))
        assert refused.code == 1
        assert refused.stderr.strip().splitlines() == [
            "loa-mem: refused: archiving spike/cache.py needs a postmortem: one line on why "
            'the attempt failed; pass --postmortem "..." after --action archive; nothing was '
            "written"]
    assert git(store, "rev-parse", "HEAD") == head
    assert ws.cold_paths(store) == []


def test_an_archive_hint_in_json_needs_its_postmortem_too(cli: Cli, store: Path) -> None:
    ws.write(store, "spike/cache.py", "CACHE = {}\n")
    hint = {"path": "spike/cache.py", "why": "abandoned", "suggested_action": "archive"}
    refused = cli("advise", "-", stdin=json.dumps({"why": "w", "cold": [hint]}))
    assert refused.code == 1 and "needs a postmortem" in refused.stderr
    assert ws.cold_paths(store) == []
    cli.ok("advise", "-", stdin=json.dumps(
        {"why": "w", "cold": [{**hint, "postmortem": "keys collided"}]}))
    assert ws.cold(store)["evict"][0]["postmortem"] == "keys collided"


def test_a_postmortem_is_only_for_archive(cli: Cli, store: Path) -> None:
    ws.write(store, "notes.md", "x\n")
    refused = cli("advise", "--cold", "notes.md", "--why", "done", "--postmortem", "meh")
    assert refused.code == 1 and "a postmortem is for --action archive" in refused.stderr


def _on_terminal(root: Path, answer: str, *args: str) -> tuple[int, str]:
    """Run loa-mem with stdin and stderr on a pseudo-terminal, typing `answer` and Enter."""
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "loa_mem", *args], cwd=root,
                          stdin=follower, stderr=follower, stdout=subprocess.PIPE,
                          env={**os.environ, "TERM": "dumb"}) as process:
        os.close(follower)
        seen = b""
        while b"Postmortem for" not in seen:
            seen += os.read(leader, 4096)
        os.write(leader, answer.encode() + b"\r")
        assert process.stdout is not None
        out = process.stdout.read().decode()
        code = process.wait()
    os.close(leader)
    return code, out


def test_on_a_terminal_archiving_asks_for_the_postmortem(store: Path) -> None:
    ws.write(store, "spike/cache.py", "CACHE = {}\n")
    code, _ = _on_terminal(store, "keys collided", *_archive_hint("--json"))
    assert code == 0
    assert ws.cold(store)["evict"][0]["postmortem"] == "keys collided"
    code, _ = _on_terminal(store, "", *_archive_hint())
    assert code == 1  # an empty answer is refused; the first postmortem stays
    assert ws.cold(store)["evict"][0]["postmortem"] == "keys collided"


def _summarized(cli: Cli, store: Path, *files: tuple[str, str]) -> str:
    for rel, text in files:
        ws.write(store, rel, text)
    data = cli.ok("summarize", *(rel for rel, _ in files), "--name", "notes", "--json").json()
    return str(data["path"])


def _dead_links(cli: Cli) -> list[str]:
    return [line for line in cli.ok("validate").stdout.splitlines() if "[link]" in line]


def test_repair_re_points_a_moved_source_found_by_its_content(cli: Cli, store: Path) -> None:
    summary = _summarized(cli, store, ("notes/a.md", "alpha\nbeta\n"))
    (store / "docs").mkdir()
    git(store, "mv", "notes/a.md", "docs/moved.md")
    git(store, "mv", "notes/a.md.meta.yml", "docs/moved.md.meta.yml")
    git(store, "commit", "-qm", "move")
    assert len(_dead_links(cli)) == 1
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [(r["link"], r["action"], r["to"], r["reason"]) for r in data["repairs"]] == [
        ("notes/a.md", "re-pointed", "docs/moved.md", "same content")]
    text = (store / summary).read_text(encoding="utf-8")
    assert '  - "docs/moved.md"\n' in text and "- [moved.md](../../../docs/moved.md)" in text
    assert _dead_links(cli) == []
    assert git(store, "log", "-1", "--format=%s").strip() == (
        "loa-mem summarize: repair: 1 re-pointed, 0 removed link(s)")


def test_repair_re_points_by_file_name_when_the_content_changed_too(cli: Cli,
                                                                   store: Path) -> None:
    summary = _summarized(cli, store, ("notes/a.md", "alpha\n"))
    (store / "docs").mkdir()
    git(store, "mv", "notes/a.md", "docs/a.md")
    git(store, "rm", "-q", "notes/a.md.meta.yml")
    (store / "docs/a.md").write_text("alpha, edited\n", encoding="utf-8")
    git(store, "commit", "-qam", "move and edit")
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [(r["to"], r["reason"]) for r in data["repairs"]] == [("docs/a.md", "same file name")]
    assert '  - "docs/a.md"\n' in (store / summary).read_text(encoding="utf-8")


def test_repair_removes_a_link_it_cannot_find_and_says_so(cli: Cli, store: Path) -> None:
    summary = _summarized(cli, store, ("notes/a.md", "alpha\n"), ("notes/b.md", "beta\n"))
    for name in ("a.md", "a.md.meta.yml", "b.md.meta.yml"):
        git(store, "rm", "-q", f"notes/{name}")
    ws.write(store, "one/a.md", "x\n")
    ws.write(store, "two/a.md", "y\n")  # two files of that name: ambiguous
    git(store, "commit", "-qm", "gone")
    shown = cli.ok("summarize", "--repair").stdout
    assert "notes/a.md" in shown and "removed" in shown and "2 files could be it" in shown
    text = (store / summary).read_text(encoding="utf-8")
    assert '"notes/a.md"' not in text and "](../../../notes/a.md)" not in text
    assert '  - "notes/b.md"\n' in text and _dead_links(cli) == []


def test_repair_re_points_or_drops_a_sidecar_whose_summary_is_gone(cli: Cli,
                                                                   store: Path) -> None:
    summary = _summarized(cli, store, ("notes/a.md", "alpha\n"))
    moved = summary.replace("notes.md", "renamed.md")
    git(store, "mv", summary, moved)
    git(store, "commit", "-qm", "rename the summary")
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [(r["file"], r["action"], r["to"]) for r in data["repairs"]] == [
        ("notes/a.md.meta.yml", "re-pointed", moved)]
    assert ws.sidecar(store, "notes/a.md")["summarized_in"] == moved
    git(store, "rm", "-q", moved)
    git(store, "commit", "-qm", "drop it")
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [r["action"] for r in data["repairs"]] == ["removed"]
    assert "summarized_in" not in ws.sidecar(store, "notes/a.md")


def test_repair_keeps_a_summary_none_of_whose_sources_is_left(cli: Cli, store: Path) -> None:
    summary = _summarized(cli, store, ("notes/a.md", "alpha\n"))
    git(store, "rm", "-q", "notes/a.md", "notes/a.md.meta.yml")
    git(store, "commit", "-qm", "gone")
    head = git(store, "rev-parse", "HEAD")
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [r["action"] for r in data["repairs"]] == ["kept"]
    assert data["commit"] is None and git(store, "rev-parse", "HEAD") == head
    assert '  - "notes/a.md"\n' in (store / summary).read_text(encoding="utf-8")


def test_repair_with_nothing_to_repair_says_so(cli: Cli, store: Path) -> None:
    _summarized(cli, store, ("notes/a.md", "alpha\n"))
    head = git(store, "rev-parse", "HEAD")
    outcome = cli.ok("summarize", "--repair")
    assert outcome.stdout == "nothing to repair: every summary link resolves\n"
    refused = cli("summarize", "--repair", "notes/a.md")
    assert refused.code == 1 and refused.stderr.count("\n") == 1
    assert git(store, "rev-parse", "HEAD") == head


_PATHS = st.lists(st.from_regex(r"[a-z][a-z0-9_-]{0,8}(/[a-z][a-z0-9_.-]{0,8}){0,2}\.md",
                                fullmatch=True), min_size=2, max_size=5, unique=True)


@settings(max_examples=60, deadline=None)
@given(_PATHS, st.data())
def test_repair_rewrites_exactly_the_dead_link_in_frontmatter_and_references(
        sources: list[str], data: st.DataObject) -> None:
    from loa_mem.core import yamlio
    from loa_mem.workingset import summarize as summ

    rel = "grimoires/loa/summaries/s.md"
    text = summ.document(None, rel, sources, "bullet", "model", "2026-02-01T10:30:00Z",
                         "- said")
    old = data.draw(st.sampled_from(sources))
    new = data.draw(st.one_of(st.none(), st.just("moved/" + old.rsplit("/", 1)[-1])))
    if new in sources:
        return
    fixed = repair._rewrite(text, rel, old, new)
    front = yamlio.load(fixed.split("---\n")[1], rel)
    expected = [new if s == old else s for s in sources if s != old or new is not None]
    assert front["summary_of"] == expected
    links = fixed.split("References:\n", 1)[1].splitlines()
    assert links == [repair._link_line(rel, s) for s in expected]


def test_repair_re_points_a_hand_written_unquoted_source(cli: Cli, store: Path) -> None:
    ws.write(store, "docs/a.md", "alpha\n")
    ws.write(store, f"{ws.SUMMARIES}/hand.md", "---\nsummary_of:\n- old/a.md\n"
             "created: 2026-02-01T10:00:00Z\nstyle: bullet\n---\n\nsaid\n\nReferences:\n"
             "- [a.md](../../../old/a.md)\n")
    data = cli.ok("summarize", "--repair", "--json").json()
    assert [(r["to"], r["reason"]) for r in data["repairs"]] == [("docs/a.md", "same file name")]
    text = (store / ws.SUMMARIES / "hand.md").read_text(encoding="utf-8")
    assert '- "docs/a.md"\n' in text and "- [a.md](../../../docs/a.md)\n" in text
