"""The screen for secrets and personal data, as a user meets it: a generated corpus of secrets,
personal data and look-alikes through `remember`; every written field screened, in every
command that writes it; and no message, crash log or MCP error repeating what was refused."""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import pytest

from tests import secret_corpus, support
from tests.conftest import Cli
from tests.people_support import PrefCli, make_pcli
from tests.test_refusals import nothing_written
from tests.ws_support import write


def _token() -> str:
    """A fresh GitHub-shaped token, drawn at test time."""
    rng = random.Random()
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def _refused(outcome: object, secret: str) -> str:
    line = support.one_line_error(outcome)
    assert secret not in line
    return line


# -- the corpus ---------------------------------------------------------------------------
def _run_corpus(cli: Cli, cases: list[secret_corpus.Case]) -> list[str]:
    """Names of the cases `remember` let through; asserts nothing ever echoes the secret."""
    through = []
    for name, text, secret in cases:
        outcome = cli("remember", "-c", "fact", "--json", "--", text)
        assert secret not in outcome.stdout + outcome.stderr or outcome.code == 0, name
        if outcome.code == 0:
            through.append(name)
        else:
            assert outcome.code == 1 and "Traceback" not in outcome.stderr, (name, outcome)
    return through


def test_the_corpus_is_big_enough_and_holds_no_committed_secret() -> None:
    secrets, personal = secret_corpus.secrets(), secret_corpus.personal_data()
    assert len({n for n, _, _ in secrets}) >= 60
    assert len({n for n, _, _ in personal}) >= 20
    assert len(secret_corpus.look_alikes()) >= 30
    # generated at test time: two seeds draw different secrets
    assert {s for _, _, s in secret_corpus.secrets(1)}.isdisjoint(
        {s for _, _, s in secret_corpus.secrets(2)} - {""})


def test_at_least_95_percent_of_secrets_are_refused_and_none_echoed(cli: Cli,
                                                                     store: Path) -> None:
    cases = secret_corpus.secrets()
    commits = support.commit_count(store)
    through = _run_corpus(cli, cases)

    assert len(through) <= len(cases) * 0.05, through
    assert support.commit_count(store) == commits + len(through)


def test_at_least_95_percent_of_personal_data_is_refused_and_none_echoed(cli: Cli) -> None:
    cases = secret_corpus.personal_data()
    through = _run_corpus(cli, cases)

    assert len(through) <= len(cases) * 0.05, through


def test_look_alikes_are_remembered_as_written(cli: Cli, store: Path) -> None:
    refused = []
    for text in secret_corpus.look_alikes():
        outcome = cli("remember", "-c", "fact", "--json", "--", text)
        if outcome.code != 0:
            refused.append((text, outcome.stderr))
            continue
        assert support.entry(store, outcome.json()["id"])["content"] == text
    assert len(refused) <= 2, refused


@pytest.mark.parametrize("memory_id", ["MEM-20261123-k7x2mq4a", "MEM-20261123-001"])
def test_memory_ids_old_and_new_are_not_secrets(cli: Cli, store: Path, memory_id: str) -> None:
    text = f"Follows {memory_id}, see {memory_id.lower()} too."
    created = support.remember(cli, text, "fact", "--summary", memory_id)

    assert support.entry(store, created)["summary"] == memory_id


# -- every field that is written ----------------------------------------------------------
def test_remember_refuses_a_secret_as_the_agent(cli: Cli, store: Path) -> None:
    secret = _token()
    with nothing_written(store):
        line = _refused(cli("remember", "A plain fact.", "-c", "fact", "--agent", secret), secret)
    assert "--agent" in line and "GitHub token" in line


def test_loa_mem_actor_is_screened_before_the_events_log(cli: Cli, store: Path) -> None:
    with nothing_written(store):
        line = _refused(cli("remember", "A plain fact.", "-c", "fact",
                            env={"LOA_MEM_ACTOR": "jane.roe@example.org"}), "jane.roe")
    assert "LOA_MEM_ACTOR" in line and "e-mail address" in line


def test_advise_refuses_a_secret_in_why(cli: Cli, store: Path) -> None:
    write(store, "src/app.py", "print('hi')\n")
    secret = _token()
    with nothing_written(store):
        line = _refused(cli("advise", "--hot", "src/app.py", "--why", f"uses {secret}"), secret)
    assert "--why" in line


def test_summarize_refuses_a_secret_as_the_summary_name(cli: Cli, store: Path) -> None:
    write(store, "notes/plan.md", "# Plan\n")
    secret = _token()
    with nothing_written(store):
        line = _refused(cli("summarize", "notes/plan.md", "--text", "The plan in short.",
                            "--name", secret), secret)
    assert "--name" in line and "GitHub token" in line


@pytest.mark.parametrize("args", [
    ("advise", "--referenced", "{}"),
    ("advise", "--hot", "{}", "--why", "needed"),
    ("pin", "{}"),
    ("advise", "--cold", "notes/plan.md", "--action", "{}"),
], ids=["referenced", "hot", "pin", "action"])
def test_a_secret_given_as_a_path_or_an_action_is_not_repeated(cli: Cli, store: Path,
                                                               args: tuple[str, ...]) -> None:
    write(store, "notes/plan.md", "# Plan\n")
    secret = _token()
    with nothing_written(store):
        _refused(cli(*(a.replace("{}", secret) for a in args)), secret)


@pytest.mark.parametrize("field", ["summary", "title", "custom.owner"])
def test_meta_set_refuses_a_secret_in_any_field(cli: Cli, store: Path, field: str) -> None:
    write(store, "notes/plan.md", "# Plan\n")
    secret = _token()
    with nothing_written(store):
        line = _refused(cli("meta", "notes/plan.md", "--set", f"{field}=key {secret}"), secret)
    assert f"--set {field}" in line


@pytest.mark.parametrize("option", ["--round", "--cite"])
def test_trust_dissent_refuses_a_secret_in_round_and_cite(cli: Cli, store: Path,
                                                          option: str) -> None:
    secret = _token()
    with nothing_written(store):
        line = _refused(cli("trust", "dissent", "critic", "--text", "The plan has no rollback",
                            option, secret), secret)
    assert option in line


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


@pytest.mark.parametrize("args", [
    ("pref", "set", "tone", "terse", "--context", "{}"),
    ("pref", "observe", "tone", "terse", "--context", "{}"),
    ("pref", "session", "record", "tone", "terse", "--session", "{}"),
    ("pref", "session", "record", "tone", "terse", "--session", "s1", "--context", "{}"),
], ids=["set-context", "observe-context", "session-id", "session-context"])
def test_pref_refuses_a_secret_in_context_and_session(pcli: PrefCli, args: tuple[str, ...]
                                                      ) -> None:
    secret = _token()
    outcome = pcli(*(a.replace("{}", secret) for a in args))

    line = _refused(outcome, secret)
    assert "--context" in line or "--session" in line or "session id" in line
    assert not pcli.folder().exists() or secret not in _all_text(pcli.folder())


def test_pref_refuses_a_secret_as_the_user_id_and_makes_no_folder(pcli: PrefCli) -> None:
    secret = _token()
    line = _refused(pcli("pref", "set", "tone", "terse", "--user", secret), secret)

    assert "user id" in line and "GitHub token" in line
    assert not any(p.name.startswith("ghp_") for p in pcli.home.glob("*"))
    assert pcli("pref", "set", "tone", "terse", "--user", "bob@example.org").code == 0


# -- nothing typed comes back in a message ---------------------------------------------------
@pytest.mark.parametrize("args", [
    ("remember", "A fact.", "-c", "{}"),
    ("remember", "A fact.", "-c", "learning", "--ttl", "{}"),
    ("remember", "A fact.", "-c", "fact", "--file", "a.py", "--lines", "{}"),
    ("remember", "A fact.", "-c", "fact", "--related", "{}"),
    ("remember", "A fact.", "-c", "fact", "--confidence", "{}"),
    ("remember", "A", "fact", "is", "{}", "-c", "fact"),
    ("recall", "--limit", "{}"),
    ("show", "{}"),
    ("history", "{}"),
    ("forget", "{}", "--reason", "wrong"),
    ("archive", "MEM-20260201-001", "--reason", "{}"),
    ("validate", "--format", "{}"),
    ("agent", "show", "{}"),
    ("gc", "--trigger", "{}"),
    ("trust", "dissent", "critic", "--text", "No rollback", "--cite", "x {} " * 5),
], ids=["category", "ttl", "lines", "related", "confidence", "words-outside-quotes", "limit",
        "show-id", "history-id", "forget-id", "archive-reason", "validate-format", "agent-name",
        "gc-trigger", "long-cite"])
def test_a_value_in_the_wrong_place_is_never_repeated(cli: Cli, args: tuple[str, ...]) -> None:
    support.remember(cli, "A first fact.", "fact")
    secret = _token()
    outcome = cli(*(a.replace("{}", secret) for a in args))

    assert outcome.code in (1, 2), outcome
    assert secret not in outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stderr


def test_pref_keys_are_never_repeated(pcli: PrefCli) -> None:
    for args in (("pref", "get", "no-such-key"), ("pref", "set", "Bad Key!", "x")):
        outcome = pcli(*args)
        assert outcome.code == 1
        assert args[2] not in outcome.stderr


def test_an_unknown_jsonl_key_is_not_repeated(cli: Cli, store: Path) -> None:
    secret = _token()
    source = store.parent / "in.jsonl"
    source.write_text(json.dumps({"content": "A fact.", "category": "fact", secret: 1}) + "\n",
                      encoding="utf-8")
    outcome = cli("import", str(source))

    assert outcome.code == 1
    assert secret not in outcome.stdout + outcome.stderr


def test_a_crash_log_holds_no_value_that_was_passed(cli: Cli, store: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from loa_mem.memory.commands import remember as remembering

    secret = _token()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"bug while writing {args[1]!r}")

    monkeypatch.setattr(remembering, "remember", broken)
    outcome = cli("remember", f"ok {secret[:8]} then", "-c", "fact", "--phase", secret)

    assert outcome.code == 3
    log = Path(re.search(r"details in (\S+);", outcome.stderr).group(1))  # type: ignore[union-attr]
    text = log.read_text(encoding="utf-8")
    assert "RuntimeError" in text and "--phase" in text
    assert secret not in text and secret[:8] not in text


# -- validate screens the same fields in files edited by hand -------------------------------
def test_validate_finds_secrets_in_every_field_without_printing_them(cli: Cli,
                                                                     store: Path) -> None:
    memory_id = support.remember(cli, "A plain fact.", "fact", "--agent", "qa")
    secret = _token()
    facts = support.grimoire(store, "fact")
    facts.write_text(facts.read_text(encoding="utf-8").replace("agent: qa", f"agent: {secret}"),
                     encoding="utf-8")
    write(store, "notes/plan.md", "# Plan\n")
    write(store, "notes/plan.md.meta.yml", "title: Plan\ncustom:\n  owner: ann@example.org\n")

    github = cli("validate", "--format", "github")
    data = cli("validate", "--json").json()

    assert github.code == 1
    assert secret not in github.stdout and "ann@example.org" not in github.stdout
    secrets = {(p["path"], p["message"]) for p in data["problems"] if p["rule"] == "secret"}
    assert (f"{support.MEMORY}/facts.yaml", "source.agent contains a GitHub token") in secrets
    assert ("notes/plan.md.meta.yml", "custom.owner contains an e-mail address") in secrets
    assert any(p["id"] == memory_id for p in data["problems"] if p["rule"] == "secret")


# -- helpers ----------------------------------------------------------------------------------
def _all_text(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace")
                   for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts)


def test_mcp_refuses_a_secret_agent_and_never_repeats_a_wrong_type_argument(
        store: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import _error, _text, run_session

    secret = _token()

    async def script(session: object, call: object) -> object:
        as_agent = await call("remember", content="A plain fact.", category="fact",  # type: ignore[operator]
                              agent=secret)
        wrong_type = await call("recall", query="fact", limit=secret)  # type: ignore[operator]
        return as_agent, wrong_type

    as_agent, wrong_type = run_session(store, script)

    assert _error(as_agent) and _error(wrong_type)
    assert "GitHub token" in _text(as_agent)
    assert "limit" in _text(wrong_type)
    assert secret not in _text(as_agent) + _text(wrong_type)
    assert secret not in support.porcelain(store) + "".join(map(str, support.events(store)))
