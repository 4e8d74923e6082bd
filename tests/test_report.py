"""`loa-mem report`: every section of the page checked against the store it was built from (counts,
chain edges, scores, the working set, agents, each entry's history) at a fixed LOA_MEM_NOW, and
the data of `--json` against the same store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import support, ws_support
from tests.conftest import Cli, git
from tests.report_support import LATER, Node, new_id, parse, populated

SECRET_PREFERENCE = "Solarized-Quokka-Theme"


@dataclass
class Built:
    root: Path
    ids: dict[str, Any]
    page: Path
    html: str
    tree: Node
    data: dict[str, Any]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """One populated store and its report, shared by the tests of this module (building it takes
    a few dozen commands). The environment is isolated as conftest does for each test."""
    home = tmp_path_factory.mktemp("report-home")
    root = tmp_path_factory.mktemp("report") / "project"
    root.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for key in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
            patch.setenv(key, str(home))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        (home / ".gitconfig").write_text(
            "[user]\n\tname = Test User\n\temail = test@example.invalid\n", encoding="utf-8")
        patch.setenv("LOA_MEM_NOW", "2026-02-01T10:30:00Z")
        patch.setenv("NO_COLOR", "1")
        patch.setenv("LOA_MEM_HOME", str(home / "personal"))
        patch.setenv("LOA_MEM_USER", "alice@example.com")
        git(root, "init", "-q")
        cli = Cli(root)
        cli.ok("init")
        ids = populated(cli, root)
        cli.ok("pref", "set", "editor-theme", SECRET_PREFERENCE)
        cli.ok("pref", "observe", "answer-style", SECRET_PREFERENCE + "-terse")
        page = root.parent / "out" / "memory.html"
        data = cli.ok("report", "--html", "-o", str(page), "--json", now=LATER).json()
        html = page.read_text(encoding="utf-8")
        yield Built(root, ids, page, html, parse(html), data)


def section(built: Built, name: str) -> Node:
    [found] = built.tree.find_all("section", id=name)
    return found


def cells(row: Node) -> list[str]:
    return [c.text().strip() for c in row.find_all("td")]


def test_the_page_loads_nothing_from_anywhere(built: Built) -> None:
    [policy] = built.tree.find_all("meta", http_equiv="Content-Security-Policy")
    assert "default-src 'none'" in policy.attrs["content"]
    for node in built.tree.iter():
        for key in ("src", "href", "xlink:href", "action"):
            value = node.attrs.get(key, "")
            assert not value or value.startswith("#"), (node.tag, key, value)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", built.html)
    assert built.data["html"] == str(built.page)
    assert built.data["bytes"] == len(built.page.read_bytes())


def test_overview_counts_are_the_counts_of_status(built: Built) -> None:
    status = Cli(built.root).ok("status", "--json", now=LATER).json()
    shown = {n.attrs["data-count"]: int(n.text()) for n in
             section(built, "overview").find_all(data_count="*")}
    expected = {f"{c}.{s}": n for c, states in status["counts"].items() for s, n in states.items()}
    expected.update({f"total.{s}": n for s, n in status["totals"].items()})
    assert shown == expected
    # gc archived the three replaced decisions
    assert (shown["decision.archived"], shown["decision.active"]) == (3, 2)
    assert built.data["overview"]["counts"] == status["counts"]
    bars = {n.attrs["data-key"]: int(n.attrs["data-value"])
            for n in section(built, "overview").find_all("rect", class_="bar")}
    assert bars == {k: v for k, v in expected.items() if v and not k.startswith("total.")}


def test_overview_lists_what_expires_soon(built: Built) -> None:
    status = Cli(built.root).ok("status", "--json", now=LATER).json()
    rows = section(built, "overview").by_id("expiring").find_all("tr", data_id="*")
    assert [r.attrs["data-id"] for r in rows] == [e["id"] for e in status["expiring_soon"]] == [
        built.ids["expiring"]]


def test_growth_follows_the_commits_and_ends_at_the_store_size(built: Built) -> None:
    growth = built.data["overview"]["growth"]
    entries = len(support.all_ids(built.root))
    assert growth[-1]["entries"] == entries == len(built.data["entries"])
    commits = int(git(built.root, "rev-list", "--count", "HEAD", "--", "grimoires/loa/memory"))
    assert sum(g["commits"] for g in growth) == commits
    [chart] = section(built, "overview").find_all("svg", data_chart="growth")
    assert chart.find_all("polyline", data_series="entries")


def test_chains_are_drawn_old_to_new_with_every_edge(built: Built) -> None:
    edges = {(n.attrs["data-from"], n.attrs["data-to"])
             for n in section(built, "chains").find_all("path", class_="edge")}
    assert edges == set(built.ids["chains"])
    chains = built.data["chains"]
    a, b = built.ids["chains"][0]
    _, c = built.ids["chains"][1]
    assert [a, b, c] in [ch["ids"] for ch in chains]
    shown = Cli(built.root).ok("show", c, "--json", now=LATER).json()
    assert shown["chain"] == [a, b, c]
    dates = {(e["from"], e["to"]): e["date"] for ch in chains for e in ch["edges"]}
    assert dates[(b, c)] == "2026-02-01T12:00:00Z"
    nodes = [n.attrs["data-id"] for n in section(built, "chains").find_all("g", class_="node")]
    assert nodes.index(a) < nodes.index(b) < nodes.index(c)


def test_effectiveness_tiers_scores_and_queues(built: Built) -> None:
    learnings = built.ids["learnings"]
    effect = section(built, "effectiveness")
    tiers = {n.attrs["data-key"]: int(n.attrs["data-value"])
             for n in effect.find_all("rect", class_="bar")}
    assert tiers == dict.fromkeys(("high", "normal", "review", "ineffective", "untested"), 1)
    rows = {r.attrs["data-id"]: r for r in effect.by_id("scores").find_all("tr", data_id="*")}
    assert set(rows) == {learnings[t] for t in ("high", "normal", "review", "ineffective")}
    for tier in ("high", "normal", "review", "ineffective"):
        shown = Cli(built.root).ok("show", learnings[tier], "--json", now=LATER).json()
        row = rows[learnings[tier]]
        assert row.attrs["data-tier"] == shown["tier"] == tier
        assert row.attrs["data-score"] == str(shown["entry"]["effectiveness"]["score"])
    assert [r.attrs["data-id"] for r in effect.by_id("review").find_all("tr", data_id="*")] == [
        learnings["review"]]
    assert [r.attrs["data-id"] for r in effect.by_id("ineffective").find_all(
        "tr", data_id="*")] == [learnings["ineffective"]]
    status = Cli(built.root).ok("status", "--json", now=LATER).json()
    queued = [e["id"] for e in built.data["effectiveness"]["review"]
              + built.data["effectiveness"]["archive"]]
    assert sorted(queued) == status["review"]


def test_working_set_hot_cold_pins_and_gc(built: Built) -> None:
    ws = section(built, "working-set")
    hot = {r.attrs["data-path"]: float(r.attrs["data-hotness"])
           for r in ws.by_id("hot").find_all("tr", data_path="*")}
    cold = [r.attrs["data-path"] for r in ws.by_id("cold").find_all("tr", data_path="*")]
    assert list(hot) == ws_support.hot_paths(built.root)
    assert cold == ws_support.cold_paths(built.root) == ["notes/debug.md"]
    # docs/arch.md: hot-listed, in the working set, pinned, touched 2 turns ago of 10
    assert hot["docs/arch.md"] == pytest.approx(.3 * .8 + .2 + .3 + .2)
    assert [n.attrs["data-path"] for n in ws.by_id("pins").find_all("li")] == ["docs/arch.md"]
    assert ws_support.sidecar(built.root, "docs/arch.md")["pin"] is True
    [run] = ws.find_all("div", class_="gc-run")
    gc_events = [e for e in support.events(built.root) if e["op"] == "gc"]
    assert run.attrs["data-time"] == gc_events[-1]["time"]
    assert "notes/spike.md" in run.text()


def test_agents_relationships_memories_and_trust(built: Built) -> None:
    agents = section(built, "agents")
    edges = {(n.attrs["data-from"], n.attrs["data-to"], n.attrs["data-kind"])
             for n in agents.find_all("path", class_="edge")}
    assert edges == built.ids["relations"]
    cards = {n.attrs["data-agent"]: n for n in agents.find_all("div", class_="agent")}
    assert set(cards) == {"architect", "critic", "tester"}
    assert "Prefer event sourcing for the audit log" in cards["architect"].text()
    score = Cli(built.root).ok("trust", "score", "critic", "--json", now=LATER).json()["score"]
    [shown] = cards["critic"].find_all("span", class_="trust-score")
    assert float(shown.text()) == pytest.approx(score, abs=5e-5)
    [trust] = agents.find_all("svg", data_chart="trust")
    [line] = trust.find_all("polyline", data_series="critic")
    assert len(line.attrs["points"].split()) == 3  # initial, and one per dissent
    [critic] = [a for a in built.data["agents"]["agents"] if a["name"] == "critic"]
    assert critic["trust"]["history"][-1]["score"] == score


def test_entries_table_has_every_entry_and_links_each_id_to_its_history(built: Built) -> None:
    table = section(built, "entries").by_id("entries-table")
    rows = table.find_all("tr", data_id="*")
    assert sorted(r.attrs["data-id"] for r in rows) == sorted(support.all_ids(built.root))
    for row in rows:
        [link] = row.find_all("a")
        assert link.attrs["href"] == f"#h-{row.attrs['data-id']}"
    [row] = [r for r in rows if r.attrs["data-id"] == built.ids["expiring"]]
    assert cells(row)[:4] == [built.ids["expiring"], "error", "active", "0.8"]
    history = built.data["history"]
    for memory_id in (built.ids["chains"][0][0], built.ids["learnings"]["ineffective"]):
        listed = [history["commits"][n]["sha"] for n in history["by_id"][memory_id]]
        full = [c["sha"] for c in Cli(built.root).ok("history", memory_id, "--json").json()[
            "commits"]]
        assert listed and set(listed) <= set(full)
        assert listed == [sha for sha in full if sha in listed]  # newest first, as history
    embedded = json.loads(built.tree.by_id("report-history").text())
    assert embedded == history


def test_personal_preferences_never_appear(built: Built) -> None:
    assert SECRET_PREFERENCE not in built.html
    assert SECRET_PREFERENCE not in json.dumps(built.data)
    assert "editor-theme" not in built.html


def test_without_html_it_prints_a_summary_and_writes_nothing(cli: Cli, store: Path) -> None:
    before = support.snapshot(store)
    out = cli.ok("report")
    assert "add --html" in out.stdout
    assert support.snapshot(store) == before
    assert not list(store.glob("*.html"))
    data = cli.ok("report", "--json").json()
    assert (data["html"], data["entries"], data["chains"]) == (None, [], [])


def test_html_to_stdout_and_the_default_file(cli: Cli, store: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    page = cli.ok("report", "-o", "-").stdout
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    monkeypatch.chdir(store)
    out = cli.ok("report", "--html")
    assert (store / "loa-mem-report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")
    assert "report written to loa-mem-report.html" in out.stdout


@pytest.mark.parametrize(("args", "code", "message"), [
    (("-o", "{dir}"), 1, "is a directory"),
    (("-o", "{dir}/report.txt"), 1, "does not end in .html"),
    (("-o", "-", "--json"), 2, "both write to stdout"),
    (("-o", "{file}/x.html"), 1, "loa-mem:"),
])
def test_bad_output_is_one_line_and_writes_nothing(cli: Cli, store: Path, tmp_path: Path,
                                                   args: tuple[str, ...], code: int,
                                                   message: str) -> None:
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    given = [a.format(dir=tmp_path, file=tmp_path / "plain") for a in args]
    outcome = cli("report", *given)
    assert outcome.code == code
    assert message in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1
    assert "Traceback" not in outcome.stderr
    assert not list(tmp_path.glob("*.html"))


def test_outside_a_repository_it_says_to_run_init(tmp_path: Path) -> None:
    outcome = Cli(tmp_path)("report", "--html", env={"LOA_MEM_ROOT": str(tmp_path)})
    assert outcome.code == 1 and "loa-mem init" in outcome.stderr


def test_uncommitted_entries_are_listed_and_counted_as_pending(cli: Cli) -> None:
    memory_id = new_id(cli, "remember", "The cache lives in Redis.", "-c", "fact", "--no-commit")
    data = cli.ok("report", "--json").json()
    assert memory_id in [e["id"] for e in data["entries"]]
    assert data["overview"]["pending"] == ["grimoires/loa/memory/facts.yaml",
                                           "grimoires/loa/memory/events.jsonl"] or data[
        "overview"]["pending"]
    assert memory_id not in data["history"]["by_id"]
