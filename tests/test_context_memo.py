"""The memo: what the session-start block reads from the index, made ahead with the span over
which it holds. A warm `loa-mem context` prints from it without opening the index, and never
prints a block that a start from scratch would not print: after a write, an outside edit, a
change of settings, or as days pass (expiries, warnings, and rankings that cross over)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loa_mem.context import memo
from loa_mem.core import cachefile
from tests import support
from tests.conftest import FIXED_NOW, Cli, run_loa_mem

CACHE = ".git/loa-mem"


def context(store: Path, *args: str, now: str = FIXED_NOW) -> str:
    done = run_loa_mem(store, "context", *args, env={**os.environ, "LOA_MEM_NOW": now})
    assert done.returncode == 0, done.stderr
    return done.stdout


def from_scratch(store: Path, *args: str, now: str = FIXED_NOW) -> str:
    """The block with no side cache (hence no memo and no shortlist): every entry ranked."""
    (store / CACHE / cachefile.SIDE).unlink(missing_ok=True)
    return context(store, *args, now=now)


@pytest.fixture
def entries(cli: Cli) -> dict[str, str]:
    """Two decisions that swap places as they age: the newer one (0.9) is first until about
    75 days on, when the older one's higher confidence (0.95) outweighs recency. Beside them,
    an error expiring on 2026-02-06 (inside the 7-day warning) and a fact."""
    return {
        "older": support.remember(cli, "Use PostgreSQL for the main store.", "decision",
                                  "--confidence", "0.95", now="2025-10-24T10:30:00Z"),
        "newer": support.remember(cli, "Keep the API versioned under /v1.", "decision",
                                  "--confidence", "0.9"),
        "expiring": support.remember(cli, "Flaky parser test when run in parallel.", "error",
                                     "--confidence", "0.7", now="2026-01-07T10:30:00Z"),
        "fact": support.remember(cli, "The CI runs on two cores.", "fact"),
    }


def test_a_warm_block_is_printed_without_opening_the_index(store: Path,
                                                           entries: dict[str, str]) -> None:
    first = context(store)
    index = store / CACHE / "index.sqlite3"
    index.unlink()
    assert context(store) == first
    assert not index.exists()  # no SQLite opened, nothing rebuilt
    assert context(store, "--budget", "150") == from_scratch(store, "--budget", "150")
    # the JSON block (it shows scores, which move with time) and --query read the index
    assert '"sections"' in context(store, "--json") and index.exists()


def test_a_write_or_an_outside_edit_is_seen_at_the_next_start(cli: Cli, store: Path,
                                                              entries: dict[str, str]) -> None:
    context(store)
    added = support.remember(cli, "Releases are cut on Tuesdays.", "fact", "--confidence",
                             "0.99")
    assert f"- {added}: Releases are cut on Tuesdays. (0.99)" in context(store)
    cli.ok("forget", entries["fact"], "--reason", "wrong")
    assert entries["fact"] not in context(store)
    with open(support.grimoire(store, "learning"), "a", encoding="utf-8") as handle:
        handle.write("- id: MEM-20260201-901\n  category: learning\n  content: By hand.\n"
                     "  summary: By hand.\n  confidence: 0.9\n  source:\n"
                     "    session_id: s\n    timestamp: 2026-02-01T10:30:00Z\n"
                     "  ttl: permanent\n  expires_at: null\n  tags: []\n")
    warm = context(store)
    assert "- MEM-20260201-901: By hand. (0.9)" in warm
    assert warm == from_scratch(store)


def test_side_files_read_before_a_write_are_used_again_as_they_were(
        cli: Cli, store: Path, entries: dict[str, str]) -> None:
    (store / "docs").mkdir()
    for name, pin in (("design", "true"), ("old", "false")):
        (store / f"docs/{name}.md.meta.yml").write_text(
            f"title: {name.title()}\nsummary: About {name}.\npin: {pin}\n", encoding="utf-8")
    hot = store / "grimoires/loa/working-set/hot.yml"
    hot.parent.mkdir(parents=True)
    hot.write_text("keep:\n  - {path: src/a.py, why: Parser, since: x, touches: 3}\n",
                   encoding="utf-8")
    sidecar = store / "grimoires/loa/agents/architect.yaml"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("agent: architect\nmemories:\n  - {type: observation, content: Note, "
                       "confidence: 0.8}\n", encoding="utf-8")
    before = context(store, "--agent", "architect")
    assert "Design — About design." in before and "src/a.py" in before and "Note" in before
    support.remember(cli, "Releases are cut on Tuesdays.", "fact")
    after = context(store, "--agent", "architect")  # the side cache is rebuilt after a write
    assert after == from_scratch(store, "--agent", "architect")
    assert after.count("\n") == before.count("\n") + 1  # the new fact, all else as before
    (store / "docs/old.md.meta.yml").write_text("title: Old\npin: true\n", encoding="utf-8")
    support.remember(cli, "Deploys need two approvals.", "fact")
    assert "- `docs/old.md`: Old\n" in context(store)


def _shortlist(store: Path) -> dict[str, object]:
    side = cachefile.read(str(store / CACHE / cachefile.SIDE))["side"]
    return dict(side["shortlist"])


def test_entries_remembered_join_the_shortlist_without_ranking_every_entry_again(
        cli: Cli, store: Path, entries: dict[str, str]) -> None:
    context(store)
    made = _shortlist(store)
    added = [support.remember(cli, f"Note {n} on releases.", "learning",
                              now="2026-02-01T11:00:00Z") for n in range(2)]
    later = "2026-02-01T12:00:00Z"
    warm = context(store, now=later)
    kept = _shortlist(store)
    assert kept["from"] == made["from"]  # taken over, not ranked anew
    assert kept["ids"] == [*made["ids"], *added]  # type: ignore[misc]
    assert warm == from_scratch(store, now=later)
    cli.ok("forget", added[0], "--reason", "wrong")  # not an addition: ranked anew
    context(store, now=later)
    assert _shortlist(store)["from"] != made["from"]


def test_entries_appended_outside_loa_mem_join_the_shortlist_too(
        store: Path, entries: dict[str, str]) -> None:
    context(store)
    made = _shortlist(store)
    with open(support.grimoire(store, "learning"), "a", encoding="utf-8") as handle:
        for n in (1, 2):  # as a pull brings them
            handle.write(f"- id: MEM-20260201-90{n}\n  category: learning\n  content: Pulled "
                         f"{n}.\n  summary: Pulled {n}.\n  confidence: 0.9\n  source:\n"
                         "    session_id: s\n    timestamp: 2026-02-01T10:00:00Z\n"
                         "  ttl: permanent\n  expires_at: null\n  tags: []\n")
    later = "2026-02-01T12:00:00Z"
    warm = context(store, now=later)
    kept = _shortlist(store)
    assert kept["from"] == made["from"]  # taken over, not ranked anew
    assert kept["ids"] == [*made["ids"], "MEM-20260201-901", "MEM-20260201-902"]  # type: ignore
    assert "- MEM-20260201-902: Pulled 2. (0.9)" in warm
    assert warm == from_scratch(store, now=later)


def test_an_outside_edit_after_a_write_makes_the_shortlist_ranked_anew(
        cli: Cli, store: Path, entries: dict[str, str]) -> None:
    context(store)
    made = _shortlist(store)
    support.remember(cli, "Releases are cut on Tuesdays.", "fact", now="2026-02-01T11:00:00Z")
    path = support.grimoire(store, "decision")
    path.write_text(path.read_text(encoding="utf-8").replace("confidence: 0.95",
                                                             "confidence: 0.61"),
                    encoding="utf-8")
    later = "2026-02-01T12:00:00Z"
    warm = context(store, now=later)
    assert _shortlist(store)["from"] != made["from"]
    assert warm == from_scratch(store, now=later)


def test_many_entries_made_at_once_do_not_keep_the_shortlist_from_holding(
        store: Path, entries: dict[str, str]) -> None:
    """80 facts equal in all that ranks them (a pull of one import, say): more than the
    shortlist keeps, all tied with the last one kept, none ever overtaking it."""
    items = "".join(f"- id: MEM-20260130-{n:03d}\n  category: fact\n  content: Imported {n}.\n"
                    f"  summary: Imported {n}.\n  confidence: 0.8\n  source:\n"
                    f"    session_id: s\n    timestamp: 2026-01-30T10:00:00Z\n"
                    f"  ttl: permanent\n  expires_at: null\n  tags: []\n" for n in range(80))
    with open(support.grimoire(store, "fact"), "a", encoding="utf-8") as handle:
        handle.write(items)
    context(store)
    made = _shortlist(store)
    assert made["until"] is not None and made["until"] > made["from"] + 86400  # type: ignore
    for later in ("2026-02-01T10:30:01Z", "2026-02-03T00:00:00Z", "2026-03-01T00:00:00Z"):
        warm = context(store, now=later)
        assert warm == from_scratch(store, now=later)
        assert "- MEM-20260130-000: Imported 0. (0.8)" in warm


def test_a_change_of_settings_is_seen_at_the_next_start(store: Path,
                                                        entries: dict[str, str]) -> None:
    assert entries["older"] in context(store)
    config = store / ".loa.config.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\ncontext:" not in text
    config.write_text(text + "context:\n  per_category: 1\n", encoding="utf-8")
    warm = context(store)
    assert entries["newer"] in warm and entries["older"] not in warm
    assert warm == from_scratch(store)


@pytest.mark.parametrize("later", [
    "2026-02-01T10:30:01Z", "2026-02-05T10:30:00Z",  # the memo holds
    "2026-02-06T10:30:00Z",  # the error expires: one memory fewer, one expired line
    "2026-03-01T00:00:00Z", "2026-04-10T10:30:00Z",  # before and after the decisions swap
    "2026-05-01T10:30:00Z"])
def test_as_days_pass_the_block_is_what_a_start_from_scratch_prints(
        store: Path, entries: dict[str, str], later: str) -> None:
    context(store)
    warm = context(store, now=later)
    assert warm == from_scratch(store, now=later)
    decisions = [line for line in warm.splitlines() if "PostgreSQL" in line or "/v1" in line]
    first = "older" if later >= "2026-04-10" else "newer"
    assert entries[first] in decisions[0]


def test_the_memo_holds_while_it_says_it_does(store: Path, entries: dict[str, str]) -> None:
    context(store)
    made = cachefile.read(str(store / CACHE / cachefile.SIDE))["side"]
    config = cachefile.read(str(store / CACHE / cachefile.CONFIG))["config"]
    assert made["memo"]["bounds"][0] == "2026-02-06T10:30:00Z"  # the error's expiry
    assert memo.holds(made["memo"], config, "2026-02-06T10:29:59Z")
    assert not memo.holds(made["memo"], config, "2026-02-06T10:30:00Z")
    assert not memo.holds(made["memo"], config, "2026-02-01T10:29:59Z")  # before it was made


HALF_LIFE_DAYS = 30.0
START = 1_800_000_000.0


def _row(name: str, confidence: float, age_days: float, weight: float) -> tuple[object, ...]:
    recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
    return (name, confidence, None, recency, 0.0, (1 - weight) * confidence + weight * recency)


def _gap(above: tuple[object, ...], below: tuple[object, ...], weight: float,
         days: float) -> float:
    def score(row: tuple[object, ...]) -> float:
        confidence, recency = float(row[1]), float(row[3])  # type: ignore[arg-type]
        return (1 - weight) * confidence + weight * recency * 0.5 ** (days / HALF_LIFE_DAYS)
    return score(above) - score(below)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.floats(0.6, 1.0), st.floats(0.6, 1.0), st.floats(0, 400), st.floats(0, 400),
       st.floats(0.05, 0.5))
def test_two_entries_keep_their_order_until_the_time_solved_for_them(
        conf_a: float, conf_b: float, age_a: float, age_b: float, weight: float) -> None:
    rows = sorted([_row("a", conf_a, age_a, weight), _row("b", conf_b, age_b, weight)],
                  key=lambda r: -float(r[5]))  # type: ignore[arg-type]
    above, below = rows
    until = memo.pair_until(above, below, weight, START)
    if above[1:] == below[1:]:  # equal at every moment: ordered by id, for ever
        assert until == math.inf
        return
    assert until >= START
    horizon = min(until, START + 2000 * 86400)
    for step in range(21):  # the gap stays above the margin over the whole span
        days = (horizon - START) / 86400 * step / 20
        if START + days * 86400 < until:
            assert _gap(above, below, weight, days) >= memo.MARGIN * 0.999
    if START < until < START + 2000 * 86400:  # and the span ends where it reaches the margin
        assert abs(_gap(above, below, weight, (until - START) / 86400) - memo.MARGIN) < 1e-9
