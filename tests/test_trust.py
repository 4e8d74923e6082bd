"""`loa-mem trust ...` against real repositories at a fixed time: what a user sees and what is
committed. Expected numbers are worked out beside each assertion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loa_mem.core import yamlio
from tests import support
from tests.conftest import Cli, git

SIDECARS = "grimoires/loa/agents"
TEN_WORDS = "The plan ignores the existing REST tooling and its users"  # 10 words


def sidecar(root: Path, agent: str) -> dict[str, Any]:
    path = root / SIDECARS / f"{agent}.yaml"
    loaded: dict[str, Any] = yamlio.load(path.read_text(encoding="utf-8"), str(path))
    return loaded


def write(root: Path, rel: str, text: str) -> str:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
    return str(root / rel)


# -- dissent ------------------------------------------------------------------------------
def test_a_first_dissent_creates_the_sidecar_on_probation(cli: Cli, store: Path) -> None:
    commits = support.commit_count(store)
    data = cli.ok("trust", "dissent", "critic", "--text", TEN_WORDS, "--cite", "Accuracy",
                  "--impact", "--round", "r1", "--json").json()

    # depth: 10/50 = .2 + one citation .2 + novelty 0 (first dissent) = .4
    assert data["depth"] == {"score": 0.4, "words": 10, "length": 0.2, "citations": 1,
                             "citation_bonus": 0.2, "novelty": 0.0}
    # impact 1, depth .4/2 = .2, no overrides (regret part at the prior .6):
    # .4 * 1 + .3 * .2 + .3 * .6 = .4 + .06 + .18 = .64
    assert (data["score_before"], data["score"]) == (0.6, 0.64)
    assert (data["probation"], data["rounds_participated"], data["created_sidecar"]) == (
        True, 1, True)
    assert support.commit_count(store) == commits + 1
    assert sorted(support.changed_files(store)) == [f"{SIDECARS}/critic.yaml",
                                                    "grimoires/loa/memory/events.jsonl"]
    event = support.events(store)[-1]
    assert (event["op"], event["agent"], event["round_id"], event["score"]) == (
        "trust-dissent", "critic", "r1", 0.64)
    block = sidecar(store, "critic")["trust"]
    assert block["dissent_history"][0]["rubric_citations"] == ["Accuracy"]
    assert [h["reason"] for h in block["trust_score_history"]] == ["initial",
                                                                    "dissent_impact_true"]
    assert cli("validate").code == 0


def test_novelty_compares_with_the_agents_past_dissents(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "alpha beta gamma delta", "--round", "r1")
    data = cli.ok("trust", "dissent", "critic", "--text", "alpha beta epsilon zeta", "--round",
                  "r2", "--json").json()
    # cosine {alpha, beta, gamma, delta} . {alpha, beta, epsilon, zeta} = 2/4: novelty .5;
    # length 4/50 = .08 -> depth .58
    assert (data["depth"]["novelty"], data["depth"]["score"]) == (0.5, 0.58)
    # no impact either time: impact 0, mean depth (.08 + .58) / 2 = .33; no overrides ->
    # .4 * 0 + .3 * .33/2 + .3 * .6 = .0495 + .18 = .2295
    assert data["score"] == 0.2295


def test_a_dissent_keeps_the_rest_of_the_sidecar(cli: Cli, store: Path) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "first point")
    path = store / SIDECARS / "critic.yaml"
    data = sidecar(store, "critic")
    data["memories"] = [{"type": "observation", "content": "prefers REST", "confidence": 0.8,
                         "source_session": "2026-01-30"}]
    path.write_text(yamlio.dump(data), encoding="utf-8")
    git(store, "commit", "-qam", "hand edit")
    cli.ok("trust", "dissent", "critic", "--text", "second point")

    after = sidecar(store, "critic")
    assert after["memories"] == data["memories"]
    assert {k: v for k, v in after.items() if k != "trust"} == {
        k: v for k, v in data.items() if k != "trust"}
    assert len(after["trust"]["dissent_history"]) == 2


def test_text_from_stdin_and_json_output(cli: Cli) -> None:
    data = cli.ok("trust", "dissent", "critic", "--text", "-", "--json",
                  stdin="one two three\n").json()
    assert data["depth"]["words"] == 3


@pytest.mark.parametrize(("args", "said"), [
    (["critic", "--text", "  "], "the dissent text is empty"),
    (["critic", "--text", "password=hunter2hunter2"], "looks like it contains"),
    (["../etc", "--text", "x"], "agent name"),
    (["critic", "--text", "x", "--round", " "], "not a usable round id"),
    (["critic", "--text", "x", "--cite", ""], "rubric citation"),
])
def test_bad_dissents_are_refused_and_nothing_is_written(cli: Cli, store: Path,
                                                         args: list[str], said: str) -> None:
    before = support.snapshot(store)
    outcome = cli("trust", "dissent", *args)
    assert outcome.code == 1
    assert said in outcome.stderr
    assert support.snapshot(store) == before


# -- override and regret ------------------------------------------------------------------
AGENT = "Use REST for the public API and keep the existing tooling and clients.\n"
HUMAN = "Use GraphQL for the public API and generate typed clients from the schema.\n"


def _override(cli: Cli, store: Path, agent: str = "critic", round_id: str = "r4") -> Any:
    mine, theirs = write(store, "out/agent.md", AGENT), write(store, "out/human.md", HUMAN)
    return cli.ok("trust", "override", agent, "--round", round_id, "--agent-output", mine,
                  "--human-decision", theirs, "--json").json()


def test_an_override_records_hashes_and_a_deadline_not_the_texts(cli: Cli, store: Path) -> None:
    data = _override(cli, store)
    # fixed clock 2026-02-01T10:30:00Z + 24 hours
    assert data["auto_check_deadline"] == "2026-02-02T10:30:00Z"
    assert data["agent_output"]["path"] == "out/agent.md"
    assert data["agent_output"]["sha256"].startswith("sha256:")
    # {use, rest, public, api, keep, existing, tooling, clients} vs {use, graphql, public, api,
    # generate, typed, clients, schema}: 4 shared of 8 and 8 -> 4/8 = .5
    assert data["similarity"] == 0.5
    # no dissents (prior .6), none regretted: .4 * .6 + .3 * .6 + .3 * (1 - 0) = .72
    assert data["score"] == 0.72
    text = (store / SIDECARS / "critic.yaml").read_text(encoding="utf-8")
    assert "GraphQL" not in text
    assert cli("validate").code == 0


def test_an_override_that_changes_nothing_is_refused(cli: Cli, store: Path) -> None:
    same = write(store, "a.md", AGENT)
    outcome = cli("trust", "override", "critic", "--round", "r1", "--agent-output", same,
                  "--human-decision", write(store, "b.md", AGENT + "\n\n"))
    assert (outcome.code, "nothing was overridden" in outcome.stderr) == (1, True)
    missing = cli("trust", "override", "critic", "--round", "r1", "--agent-output", same,
                  "--human-decision", "ghost.md")
    assert (missing.code, "no file ghost.md" in missing.stderr) == (1, True)


def test_check_reverts_waits_for_the_deadline(cli: Cli, store: Path) -> None:
    _override(cli, store)
    commits = support.commit_count(store)
    final = write(store, "out/final.md", HUMAN + "Also document the migration.\n")
    data = cli.ok("trust", "check-reverts", "--round", "r4", "--final", final, "--json",
                  now="2026-02-02T10:30:00Z").json()
    assert [c["status"] for c in data["checks"]] == ["pending"]
    assert data["commit"] is None
    assert support.commit_count(store) == commits


# no dissents: .4 * .6 + .3 * .6 = .42 from the prior, plus .3 * (1 - regret ratio)
@pytest.mark.parametrize(("final", "status", "score"), [
    (AGENT, "reverted", 0.42),  # regret 1/1: .42 + .3 * 0
    (HUMAN, "kept", 0.72),      # regret 0/1: .42 + .3 * 1
    (HUMAN + "Also document the migration.\n", "replaced", 0.42),  # a third version
    (AGENT + "Also document the tooling.\n", "reverted", 0.42),
])
def test_check_reverts_after_the_deadline(cli: Cli, store: Path, final: str, status: str,
                                          score: float) -> None:
    _override(cli, store)
    path = write(store, "out/final.md", final)
    data = cli.ok("trust", "check-reverts", "--round", "r4", "--final", path, "--json",
                  now="2026-02-03T10:30:00Z").json()
    check = data["checks"][0]
    assert (check["agent"], check["status"], check["score"]) == ("critic", status, score)
    block = sidecar(store, "critic")["trust"]
    assert block["override_history"][0]["regret"] is (status != "kept")
    expected = "regret_inferred" if status != "kept" else "override_kept"
    if status != "kept":
        assert block["trust_score_history"][-1]["reason"] == expected
        assert support.events(store)[-1]["results"] == {"critic": status}
    assert cli("validate").code == 0


def test_check_reverts_of_an_unknown_round_is_an_error(cli: Cli, store: Path) -> None:
    outcome = cli("trust", "check-reverts", "--round", "nope", "--final",
                  write(store, "f.md", "x"))
    assert outcome.code == 1
    assert "no override was recorded in round nope" in outcome.stderr


# -- score, report, advocate --------------------------------------------------------------
def test_score_of_an_unknown_agent_is_a_new_agent_and_writes_nothing(cli: Cli,
                                                                     store: Path) -> None:
    before = support.snapshot(store)
    data = cli.ok("trust", "score", "newcomer", "--json").json()
    assert (data["exists"], data["score"], data["probation"], data["rounds_participated"]) == (
        False, 0.6, True, 0)
    assert support.snapshot(store) == before


def test_the_score_moves_with_the_window(cli: Cli) -> None:
    for n in range(5):
        cli.ok("trust", "dissent", "critic", "--text", f"topic{n} " * 50, "--impact",
               "--round", f"r{n}", now="2026-01-01T00:00:00Z")
    cli.ok("trust", "dissent", "critic", "--text", "late", "--round", "r9",
           now="2026-05-01T00:00:00Z")
    # on 2026-05-01 the window holds 1 dissent (< 5): all 6 count -> impact 5/6
    early = cli.ok("trust", "score", "critic", "--json", now="2026-05-01T00:00:00Z").json()
    assert (early["breakdown"]["dissent_scope"], early["breakdown"]["impact_ratio"]) == (
        "all", 0.8333)
    assert early["probation"] is False


def test_report_lists_every_agent(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", TEN_WORDS, "--impact")
    cli.ok("trust", "dissent", "builder", "--text", "too slow", "--round", "r5")
    out = cli.ok("trust", "report").stdout
    lines = out.splitlines()
    assert lines[1].split() == ["AGENT", "SCORE", "PROBATION", "ROUNDS", "DISSENTS", "OVERRIDES",
                                "IMPACT", "DEPTH", "REGRET", "HELD"]
    # no overrides: regret part at the prior, .3 * .6 = .18
    # builder: 2 words: depth .04, impact 0 -> .4 * 0 + .3 * .02 + .18 = .006 + .18 = .186;
    # critic: 10 words: depth .2, impact 1 -> .4 * 1 + .3 * .1 + .18 = .4 + .03 + .18 = .61;
    # its dissent has no round: 0 rounds
    assert lines[2].split() == ["builder", "0.1860", "yes", "1", "1", "0", "0.00", "0.04", "-",
                                "-"]
    assert lines[3].split() == ["critic", "0.6100", "yes", "0", "1", "0", "1.00", "0.20", "-",
                                "-"]


def _graduate(cli: Cli, agent: str, impact: bool) -> None:
    flag = "--impact" if impact else "--no-impact"
    for n in range(5):
        cli.ok("trust", "dissent", agent, "--text", f"{agent} point{n} " + "word " * 48, flag,
               "--round", f"r{n}")


def test_pick_advocate_is_reproducible_and_leaves_out_probation(cli: Cli) -> None:
    _graduate(cli, "alice", True)
    _graduate(cli, "bob", True)
    cli.ok("trust", "dissent", "carol", "--text", "new here", "--round", "r0")
    first = cli.ok("trust", "pick-advocate", "alice", "bob", "carol", "--seed", "7",
                   "--json").json()
    again = cli.ok("trust", "pick-advocate", "alice", "bob", "carol", "--seed", "7",
                   "--json").json()
    assert first == again
    assert first["chosen"] in ("alice", "bob")
    carol = first["candidates"][2]
    assert (carol["eligible"], carol["probability"]) == (False, 0.0)
    assert carol["excluded_because"] == "on probation (1 of 5 rounds)"
    assert sum(c["probability"] for c in first["candidates"]) == pytest.approx(1.0)


def test_pick_advocate_falls_back_to_every_candidate(cli: Cli) -> None:
    data = cli.ok("trust", "pick-advocate", "x", "y", "--seed", "1", "--json").json()
    assert data["fallback"] is True
    assert [c["probability"] for c in data["candidates"]] == [0.5, 0.5]


def test_settings_come_from_the_config(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8")
                      + "trust:\n  probation_rounds: 1\n  start_score: 0.5\n", encoding="utf-8")
    assert cli.ok("trust", "score", "x", "--json").json()["score"] == 0.5
    data = cli.ok("trust", "dissent", "x", "--text", "a point", "--round", "r1", "--json").json()
    assert data["probation"] is False
    config.write_text(config.read_text(encoding="utf-8").replace("start_score: 0.5",
                                                                "start_score: 2"), encoding="utf-8")
    outcome = cli("trust", "score", "x")
    assert (outcome.code, "trust.start_score" in outcome.stderr) == (1, True), outcome.stderr


def test_validate_reports_a_broken_trust_block_with_its_line(cli: Cli, store: Path) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "a point")
    path = store / SIDECARS / "critic.yaml"
    text = path.read_text(encoding="utf-8").replace("trust_score: ", "trust_score: 7 #", 1)
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("trust:") + 1
    data = cli("validate", "--json").json()
    found = [p for p in data["problems"] if p["rule"] == "trust-schema"]
    assert [(p["path"], p["line"]) for p in found] == [(f"{SIDECARS}/critic.yaml", line)]
    assert "trust.trust_score" in found[0]["message"]
    outcome = cli("trust", "dissent", "critic", "--text", "another")
    assert (outcome.code, "trust.trust_score" in outcome.stderr) == (1, True)


def test_old_events_fold_into_long_term_stats(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "trust:\n  raw_event_limit: 2\n",
                      encoding="utf-8")
    for n, flag in enumerate(["--impact", "--no-impact", "--impact"]):
        cli.ok("trust", "dissent", "critic", "--text", f"point{n} " * 25, flag,
               "--round", f"r{n}")
    block = sidecar(store, "critic")["trust"]
    stats = block["long_term_stats"]
    assert [d["round_id"] for d in block["dissent_history"]] == ["r1", "r2"]
    assert (stats["folded_dissents"], stats["folded_impactful"], stats["folded_depth_sum"],
            stats["total_dissents"]) == (1, 1, 0.5, 3)
    assert len(block["trust_score_history"]) == 2
    # all history (2 raw in the window < 5): impact 2/3; depth .5, .5 + 1, .5 + 1 (novelty 1
    # each time: no shared terms) -> 3.5 / 3; no overrides (prior .6):
    # .4 * 2/3 + .3 * (3.5/3)/2 + .3 * .6 = .26667 + .175 + .18 = .62167 -> .6217
    assert cli.ok("trust", "score", "critic", "--json").json()["score"] == 0.6217
    assert cli("validate").code == 0


def test_score_shows_the_parts_and_the_history_with_reasons(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", TEN_WORDS, "--impact", "--round", "r1")
    out = cli.ok("trust", "score", "critic").stdout
    # impact 1, depth .2/2 = .1, no overrides (prior .6): .4 + .03 + .18 = .61
    assert out.splitlines()[:3] == [
        "critic: trust 0.6100; on probation (1 round)",
        "impact ratio 1.00, mean depth 0.20 of 2 (1 dissent, all history); regret ratio - "
        "(0 overrides, all history)",
        "score = .4 impact + .3 depth/2 + .3 (1 - regret); a part without data counts at the "
        "prior 0.6000 (the start score)"]
    assert "2026-02-01T10:30:00Z  0.6000  initial" in out
    assert "2026-02-01T10:30:00Z  0.6100  dissent_impact_true  r1" in out


def test_no_commit_writes_the_sidecar_only(cli: Cli, store: Path) -> None:
    commits = support.commit_count(store)
    data = cli.ok("trust", "dissent", "critic", "--text", "a point", "--no-commit",
                  "--json").json()
    assert data["commit"] is None
    assert support.commit_count(store) == commits
    assert (store / SIDECARS / "critic.yaml").exists()


def test_check_reverts_covers_every_agent_of_the_round_and_can_change_its_mind(
        cli: Cli, store: Path) -> None:
    _override(cli, store, "critic")
    _override(cli, store, "builder")
    later = "2026-02-03T10:30:00Z"
    data = cli.ok("trust", "check-reverts", "--round", "r4", "--final",
                  write(store, "out/final.md", HUMAN), "--json", now=later).json()
    assert [(c["agent"], c["status"]) for c in data["checks"]] == [("builder", "kept"),
                                                                   ("critic", "kept")]
    commits = support.commit_count(store)
    again = cli.ok("trust", "check-reverts", "--round", "r4", "--final",
                   write(store, "out/final.md", HUMAN), "--json", now=later).json()
    assert again["commit"] is None  # the same verdict on the same final: nothing written
    assert support.commit_count(store) == commits
    data = cli.ok("trust", "check-reverts", "--round", "r4", "--final",
                  write(store, "out/final.md", AGENT), "--json", now=later).json()
    assert [c["status"] for c in data["checks"]] == ["reverted", "reverted"]
    assert sorted(support.changed_files(store)) == [
        f"{SIDECARS}/builder.yaml", f"{SIDECARS}/critic.yaml",
        "grimoires/loa/memory/events.jsonl"]
    data = cli.ok("trust", "check-reverts", "--round", "r4", "--final",
                  write(store, "out/final.md", HUMAN), "--json", now=later).json()
    # back to kept: regret 0/1, no dissents: .24 + .18 + .3 = .72
    assert [(c["status"], c["score"]) for c in data["checks"]] == [("kept", 0.72), ("kept", 0.72)]


def test_pick_advocate_prints_the_odds(cli: Cli) -> None:
    out = cli.ok("trust", "pick-advocate", "x", "y", "--seed", "3").stdout.splitlines()
    assert out[0].startswith("devil's advocate: ")
    assert out[0].endswith(" (seed 3); nobody was eligible, so every candidate was")
    assert out[2].split() == ["x", "0.6000", "yes", "50.0%", "on", "probation", "(0", "of", "5",
                              "rounds)"]


def test_text_output_prints_every_trust_score_with_four_decimals(cli: Cli, store: Path) -> None:
    said = cli.ok("trust", "dissent", "critic", "--text", TEN_WORDS, "--cite", "Accuracy",
                  "--impact", "--round", "r1").stdout
    # .4 * 1 + .3 * .4/2 + .3 * .6 (no overrides: the prior) = .64
    assert "trust 0.6000 -> 0.6400; 1 round; on probation" in said.splitlines()
    mine, theirs = write(store, "out/agent.md", AGENT), write(store, "out/human.md", HUMAN)
    said = cli.ok("trust", "override", "critic", "--round", "r4", "--agent-output", mine,
                  "--human-decision", theirs).stdout
    # regret 0/1: .4 + .06 + .3 * 1 = .76
    assert said.splitlines()[-1] == "trust 0.6400 -> 0.7600"
    assert git(store, "log", "-1", "--format=%s").strip() == (
        "loa-mem trust: override of critic in r4 (trust 0.6400 -> 0.7600)")
    said = cli.ok("trust", "check-reverts", "--round", "r4", "--final",
                  write(store, "out/final.md", AGENT), now="2026-02-03T10:30:00Z").stdout
    # regret 1/1: .4 + .06 + .3 * 0 = .46
    assert said.splitlines()[-1].endswith("0.7600 -> 0.4600")
    # builder: depth 2/50 = .04, impact 0: .3 * .02 + .18 = .186
    cli.ok("trust", "dissent", "builder", "--text", "too slow", "--round", "r5")
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "trust:\n  probation_rounds: 1\n",
                      encoding="utf-8")
    rows = [line.split() for line in
            cli.ok("trust", "pick-advocate", "critic", "builder", "--seed", "1").stdout
            .splitlines()[2:]]
    assert rows == [["critic", "0.4600", "no", "100.0%"],
                    ["builder", "0.1860", "no", "-", "trust", "0.1860", "is", "below", "0.2000"]]


def test_a_dissent_shows_its_depth_parts_as_stored_so_the_sum_checks(cli: Cli,
                                                                     store: Path) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "storage doubles", "--round", "r1")
    out = cli.ok("trust", "dissent", "critic", "--text", "storage doubles again and again today",
                 "--round", "r2", "--cite", "cost").stdout

    # 6 words: 6/50 = .12; one citation .2; novelty: without the stop word "and", terms
    # {storage, doubles, again x2, today} against {storage, doubles}: 1 - 2/sqrt(7 * 2) = .4655
    assert "depth 0.7855 = length 0.12 (6 words) + citations 0.2 (1) + novelty 0.4655" in out
