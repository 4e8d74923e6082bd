"""The trust document's rules that were missing or partial, one test per rule, at the fixed
clock (2026-02-01T10:30:00Z) against real repositories. Numbers are worked out beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loa_mem.core import yamlio
from tests.conftest import Cli

SIDECARS = "grimoires/loa/agents"
AGENT = "Use REST for the public API and keep the existing tooling and clients.\n"
HUMAN = "Use GraphQL for the public API and generate typed clients from the schema.\n"
THIRD = "Use gRPC for the public API and publish the proto files.\n"


def trust(root: Path, agent: str) -> dict[str, Any]:
    path = root / SIDECARS / f"{agent}.yaml"
    data: dict[str, Any] = yamlio.load(path.read_text(encoding="utf-8"), str(path))
    return dict(data["trust"])


def write(root: Path, rel: str, text: str) -> str:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
    return str(root / rel)


def configure(root: Path, text: str) -> None:
    config = root / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + text, encoding="utf-8")


def override(cli: Cli, store: Path, round_id: str = "r1", **more: str) -> Any:
    extra = [a for key, value in more.items() for a in (f"--{key.replace('_', '-')}", value)]
    return cli.ok("trust", "override", "critic", "--round", round_id, "--agent-output",
                  write(store, "out/agent.md", AGENT), "--human-decision",
                  write(store, "out/human.md", HUMAN), *extra, "--json").json()


def check(cli: Cli, store: Path, final: str, now: str) -> dict[str, Any]:
    data: dict[str, Any] = cli.ok(
        "trust", "check-reverts", "--round", "r1", "--final", write(store, "out/final.md", final),
        "--json", now=now).json()
    check: dict[str, Any] = data["checks"][0]
    return check


def test_a_dissent_without_content_words_gets_no_novelty(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "The cache hides stale prices")
    first = cli.ok("trust", "dissent", "critic", "--text", "no no no", "--json").json()
    again = cli.ok("trust", "dissent", "critic", "--text", "No, no, NO!", "--json").json()
    # stop words only: nothing to compare, nothing new; length 3/50 = .06 each time
    assert [d["depth"]["novelty"] for d in (first, again)] == [0.0, 0.0]
    assert [d["depth"]["score"] for d in (first, again)] == [0.06, 0.06]


def test_sessions_count_as_rounds_and_end_probation(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "The cache hides stale prices", "--round", "r1",
           "--impact")
    for n in range(4):
        cli.ok("session", "start", "--agent", "critic", "--session", f"S{n}")
        cli.ok("session", "end", "--session", f"S{n}")
    # one trust round + four sessions = 5 rounds: probation is over
    data = cli.ok("trust", "score", "critic", "--json").json()
    assert (data["rounds_participated"], data["probation"]) == (5, False)
    picked = cli.ok("trust", "pick-advocate", "critic", "--seed", "1", "--json").json()
    assert (picked["chosen"], picked["fallback"]) == ("critic", False)


def test_dissents_without_a_round_do_not_end_probation(cli: Cli) -> None:
    for n in range(5):
        cli.ok("trust", "dissent", "critic", "--text", f"point{n} about the cache")
    data = cli.ok("trust", "score", "critic", "--json").json()
    assert (data["rounds_participated"], data["probation"]) == (0, True)


def test_probation_until_is_when_probation_ended(cli: Cli, store: Path) -> None:
    configure(store, "trust:\n  probation_rounds: 2\n")
    cli.ok("trust", "dissent", "critic", "--text", "first point", "--round", "r1")
    assert trust(store, "critic")["probation_until"] is None
    cli.ok("trust", "dissent", "critic", "--text", "second point", "--round", "r2",
           now="2026-02-03T08:00:00Z")
    block = trust(store, "critic")
    assert (block["probation"], block["probation_until"]) == (False, "2026-02-03T08:00:00Z")
    cli.ok("trust", "dissent", "critic", "--text", "third point", "--round", "r3",
           now="2026-02-05T08:00:00Z")
    assert trust(store, "critic")["probation_until"] == "2026-02-03T08:00:00Z"
    assert cli("validate").code == 0


def test_regret_is_marked_at_once_when_the_final_goes_back_to_the_agent(cli: Cli,
                                                                         store: Path) -> None:
    override(cli, store)
    # an hour later, long before the 24-hour deadline
    found = check(cli, store, AGENT, now="2026-02-01T11:30:00Z")
    # no dissents (prior .6): .24 + .18 + .3 * (1 - 1) = .42
    assert (found["status"], found["how"], found["score"]) == (
        "reverted", "same as the agent output", 0.42)
    assert trust(store, "critic")["override_history"][0]["regret"] is True


def test_before_the_deadline_the_human_decision_or_a_third_version_is_pending(
        cli: Cli, store: Path) -> None:
    override(cli, store)
    for final in (HUMAN, THIRD):
        assert check(cli, store, final, now="2026-02-01T11:30:00Z")["status"] == "pending"
    assert trust(store, "critic")["override_history"][0]["regret"] is False


def test_after_the_deadline_a_third_version_is_a_regret(cli: Cli, store: Path) -> None:
    override(cli, store)
    found = check(cli, store, THIRD, now="2026-02-02T10:30:01Z")
    assert (found["status"], found["how"], found["score"]) == (
        "replaced", "a third version, not the human decision", 0.42)
    kept = check(cli, store, HUMAN, now="2026-02-02T12:00:00Z")
    # the human decision after all: kept, .24 + .18 + .3 = .72
    assert (kept["status"], kept["score"]) == ("kept", 0.72)


def test_a_dissent_records_its_context_model_role_and_feedback(cli: Cli, store: Path) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "GraphQL ignores the REST tooling",
           "--round", "r1", "--task", "Write ADR for GraphQL migration", "--artifact-type", "adr",
           "--feedback-incorporated", "--model", "claude-sonnet-4", "--role", "reviewer")
    block = trust(store, "critic")
    dissent = block["dissent_history"][0]
    assert dissent["context"] == {"task": "Write ADR for GraphQL migration",
                                  "artifact_type": "adr"}
    assert dissent["feedback_incorporated"] is True
    assert (block["model"], block["primary_role"]) == ("claude-sonnet-4", "reviewer")
    cli.ok("trust", "dissent", "critic", "--text", "Too slow", "--feedback-ignored",
           "--model", "claude-opus-4")
    block = trust(store, "critic")
    assert block["dissent_history"][1]["feedback_incorporated"] is False
    assert "context" not in block["dissent_history"][1]
    # the latest model given wins; the role stays as given before
    assert (block["model"], block["primary_role"]) == ("claude-opus-4", "reviewer")
    assert cli("validate").code == 0


def test_an_override_records_its_task_but_never_the_texts(cli: Cli, store: Path) -> None:
    override(cli, store, task="Pick the API style", model="m-1", role="creator")
    text = (store / SIDECARS / "critic.yaml").read_text(encoding="utf-8")
    block = trust(store, "critic")
    assert block["override_history"][0]["context"] == {"task": "Pick the API style"}
    assert (block["model"], block["primary_role"]) == ("m-1", "creator")
    assert "GraphQL" not in text and "REST" not in text
    assert cli("validate").code == 0


def test_citations_count_by_distinct_source_keeping_case(cli: Cli, store: Path) -> None:
    data = cli.ok("trust", "dissent", "critic", "--text", "a b", "--cite", "API", "--cite", "api",
                  "--cite", "API ", "--json").json()
    # "API" twice is one source; "api" is another: 2 citations, .4
    assert (data["depth"]["citations"], data["depth"]["citation_bonus"]) == (2, 0.4)
    assert trust(store, "critic")["dissent_history"][0]["rubric_citations"] == ["API", "api"]


def test_trust_report_shows_escalation_usefulness(cli: Cli, store: Path) -> None:
    override(cli, store, round_id="r1")
    override(cli, store, round_id="r2")
    override(cli, store, round_id="r3")
    final = write(store, "out/final.md", HUMAN)
    later = "2026-02-03T10:30:00Z"
    cli.ok("trust", "check-reverts", "--round", "r1", "--final", final, now=later)
    cli.ok("trust", "check-reverts", "--round", "r2", "--final", final, now=later)
    cli.ok("trust", "check-reverts", "--round", "r3", "--final",
           write(store, "out/back.md", AGENT), now=later)
    data = cli.ok("trust", "report", "--json", now=later).json()
    # 2 held, 1 regretted: 2 / (2 + 1) = .6667
    assert data["escalation_usefulness"] == {"held": 2, "regretted": 1, "ratio": 0.6667}
    assert data["agents"][0]["escalation_usefulness"]["ratio"] == 0.6667
    out = cli.ok("trust", "report", now=later).stdout.splitlines()
    assert out[-1] == ("escalation usefulness: 0.67 of the checked overrides held "
                       "(2 held, 1 regretted)")
