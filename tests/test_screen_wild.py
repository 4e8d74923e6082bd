"""The screen on secrets as they turn up in configs, command lines and prose, and on the harmless
texts that only look like them (tests/secret_corpus_wild.py, tests/secret_corpus_harmless.py):
every secret refused without being repeated, every look-alike kept, through the screen itself
and through `remember` and the MCP server as a user meets them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loa_mem.core.errors import Refused
from loa_mem.core.sensitive import refuse_sensitive, scan
from tests import secret_corpus, secret_corpus_harmless, secret_corpus_wild, support
from tests.conftest import Cli

SECRETS = secret_corpus_wild.secrets()
HARMLESS = secret_corpus_harmless.look_alikes()


def test_the_corpora_are_big_and_drawn_at_test_time() -> None:
    assert len({name for name, _, _ in SECRETS}) == len(SECRETS) >= 150
    assert len(HARMLESS) >= 120
    drawn = {s for _, _, s in secret_corpus_wild.secrets(1)}
    assert drawn.isdisjoint({s for _, _, s in secret_corpus_wild.secrets(2)})
    known = {name for name, _, _ in secret_corpus.secrets()}
    assert known.isdisjoint(name for name, _, _ in SECRETS)


def test_every_secret_is_found_and_no_refusal_repeats_it() -> None:
    through = []
    for name, text, secret in SECRETS:
        try:
            refuse_sensitive(text, "content")
        except Refused as refused:
            assert secret not in refused.one_line(), name
            assert all(part not in refused.one_line() for part in secret.split() if len(part) > 5)
        else:
            through.append(name)
    assert through == []


def test_every_look_alike_is_kept() -> None:
    refused = [(text, [f.kind for f in scan(text)]) for text in HARMLESS if scan(text)]
    assert refused == []


@pytest.mark.parametrize("text", [
    "AKIAIOSFODNN7EXAMPLE is the access key id of the AWS documentation.",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "OPENAI_API_KEY=sk-...your-key-here",
])
def test_documented_examples_and_templates_are_kept(text: str) -> None:
    assert scan(text) == []


def test_a_key_of_the_documented_shape_without_the_example_marker_is_refused() -> None:
    assert [f.kind for f in scan("aws_access_key_id = AKIAIOSFODNN7EXAMPLF")] == [
        "an AWS access key"]


@pytest.mark.parametrize(("text", "kind"), [
    ("config: {}", "base64 of an AWS access key"),
    ('"auth": "{}"', "base64 of a user and password"),
])
def test_base64_of_a_secret_is_named_as_such(text: str, kind: str) -> None:
    import base64

    plain = ("AKIA" + "Q7ZK2M4N6P8R3T5V") if "AWS" in kind else "deploy:Zq8#kd01Lm"
    encoded = base64.b64encode(plain.encode()).decode()
    assert kind in {f.kind for f in scan(text.format(encoded))}


@pytest.mark.parametrize(("text", "refused"), [
    ("on_call_phone: 4155550132", True),
    ('{"phone": "4155550132"}', True),
    ("tel=4155550132", True),
    ("size_on_disk=4155550132", False),
    ('{"order_id": 4155550132}', False),
    ("the run id 4155550132 took 41 s", False),
])
def test_bare_digits_are_a_phone_number_unless_a_key_names_them_otherwise(text: str,
                                                                           refused: bool) -> None:
    assert ("a phone number" in {f.kind for f in scan(text)}) is refused


def _cases(step: int) -> list[secret_corpus_wild.Case]:
    return SECRETS[::step]


def test_remember_refuses_them_and_its_json_error_never_holds_the_secret(
        cli: Cli, store: Path) -> None:
    commits = support.commit_count(store)
    for name, text, secret in _cases(8):
        outcome = cli("remember", "-c", "fact", "--json", "--", text)
        assert outcome.code == 1, name
        assert secret not in outcome.stdout + outcome.stderr, name
        assert "Traceback" not in outcome.stderr
    for text in HARMLESS[::10]:
        outcome = cli("remember", "-c", "fact", "--json", "--", text)
        assert outcome.code == 0, (text, outcome.stderr)
        assert support.entry(store, outcome.json()["id"])["content"] == text
    assert support.commit_count(store) == commits + len(HARMLESS[::10])


def test_the_mcp_server_refuses_them_without_repeating_them(store: Path) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp import _error, _text, run_session

    cases = _cases(25)

    async def script(session: object, call: object) -> object:
        return [await call("remember", content=text, category="fact")  # type: ignore[operator]
                for _, text, _ in cases]

    answers = run_session(store, script)

    for (name, _, secret), answer in zip(cases, answers, strict=True):  # type: ignore[call-overload]
        assert _error(answer), name
        assert secret not in _text(answer), name
    assert not any(secret in support.porcelain(store) for _, _, secret in cases)


def test_a_text_of_plain_words_imports_no_detector_library() -> None:
    probe = ("import sys; from loa_mem.core.sensitive import scan; "
             "assert scan('Use ruff for linting and mypy in strict mode before every release.')"
             " == []; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('detect_secrets', 'phonenumbers', 'stdnum'))))")
    done = subprocess.run([sys.executable, "-c", "import json; " + probe], capture_output=True,
                          text=True, check=True)
    assert json.loads(done.stdout) == []
