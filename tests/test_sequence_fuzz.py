"""Any sequence of commands and git operations leaves a store that validates, whose derived index
answers exactly as one built from scratch, and in which no memory was lost: what `recall`,
`show`, `status` and `context` say after the sequence is what they say once the index is
deleted and rebuilt, and every entry ever remembered is still in the files or in git history.

Seeded random sequences of remember, supersede, forget, archive, restore, feedback, recall
--track, hand edits committed with git, `git revert` and `git reset --hard` of a loa-mem
commit, `--no-commit` writes and `commit`; `LOA_MEM_FUZZ_DRAWS` makes them longer.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, git

_DRAWS = int(os.environ.get("LOA_MEM_FUZZ_DRAWS", "3"))
_SEED = int(os.environ.get("LOA_MEM_FUZZ_SEED", "0"))
WORDS = ["cache", "queue", "deploy", "schema", "retry", "index", "backup", "token", "review",
         "budget", "latency", "shard", "replica", "alert", "webhook", "coupon", "refund",
         "cluster"]
CATEGORIES = ("fact", "decision", "learning", "error", "preference")
MEMORY = "grimoires/loa/memory"


class Run:
    """One sequence: the store, its CLI, and the ids remembered so far."""

    def __init__(self, store: Path, rng: random.Random, mate: Path) -> None:
        self.store, self.cli, self.rng = store, Cli(store), rng
        self.mate = mate  # a teammate's clone of the same remote
        self.ids: list[str] = []
        self.steps: list[str] = []

    def text(self) -> str:
        words = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(3, 8)))
        return f"The {words} note {self.rng.randrange(10**6)}."

    def some_id(self) -> str:
        return self.rng.choice(self.ids) if self.ids else "MEM-20260201-zzzzzzzz"

    def run(self, *args: str) -> Any:
        self.steps.append(" ".join(args))
        outcome = self.cli(*args)
        assert outcome.code in (0, 1, 2), (self.steps, outcome.stderr)
        assert "Traceback" not in outcome.stderr, (self.steps, outcome.stderr)
        return outcome

    def step(self) -> None:
        choice = self.rng.choice(["remember"] * 4 + ["supersede", "forget", "archive",
                                  "restore", "feedback", "track", "edit", "revert", "reset",
                                  "pending", "teammate", "teammate"])
        getattr(self, f"_{choice}")()

    def _remember(self, *extra: str) -> None:
        outcome = self.run("remember", self.text(), "-c", self.rng.choice(CATEGORIES),
                           "--confidence", "0.95", "-t", self.rng.choice(WORDS), "--json",
                           *extra)
        if outcome.code == 0:
            self.ids.append(outcome.json()["id"])

    def _supersede(self) -> None:
        outcome = self.run("supersede", self.some_id(), self.text(), "--json")
        if outcome.code == 0:
            self.ids.append(outcome.json()["id"])

    def _forget(self) -> None:
        self.run("forget", self.some_id(), "--reason", "fuzz")

    def _archive(self) -> None:
        self.run("archive", self.some_id(), "--reason", "fuzz")

    def _restore(self) -> None:
        self.run("restore", self.some_id())

    def _feedback(self) -> None:
        self.run("feedback", self.some_id(), self.rng.choice(["--success", "--failure"]))

    def _track(self) -> None:
        self.run("recall", self.rng.choice(WORDS), "--track")

    def _edit(self) -> None:
        """A person changes one entry's content line in an editor and commits it."""
        path = self.store / MEMORY / f"{self.rng.choice(['facts', 'decisions'])}.yaml"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        content = [i for i, line in enumerate(lines) if line.startswith("  content: ")]
        if not content:
            return
        i = self.rng.choice(content)
        lines[i] = f"  content: Edited by hand about {self.rng.choice(WORDS)}.\n"
        path.write_text("".join(lines), encoding="utf-8")
        self.steps.append(f"edit {path.name}:{i + 1}")
        git(self.store, "commit", "-qam", "edited by hand", "--allow-empty")

    def _clean(self) -> bool:
        return not git(self.store, "status", "--porcelain").strip()

    def _revert(self) -> None:
        """Undo the last commit; a revert git cannot do by itself is abandoned, as a user
        who sees the conflict may."""
        if not self._clean():
            return
        self.steps.append("git revert HEAD")
        done = subprocess.run(["git", "revert", "--no-edit", "HEAD"], cwd=self.store,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            self.steps.append(f"(revert stopped: {done.stdout.strip()[-200:]}; aborted)")
            git(self.store, "revert", "--abort")

    def _reset(self) -> None:
        if self._clean() and git(self.store, "rev-list", "--count", "HEAD").strip() != "1":
            self.steps.append("git reset --hard HEAD~1")
            git(self.store, "reset", "-q", "--hard", "HEAD~1")

    def _teammate(self) -> None:
        """A teammate remembers, supersedes or forgets in their clone and pushes; this clone
        pulls with --rebase (its own commits replayed on theirs) and pushes back."""
        mate = Cli(self.mate)
        git(self.mate, "pull", "-q", "--rebase")
        action = self.rng.choice(["remember", "supersede", "forget"])
        theirs = [line.split("id: ", 1)[1].strip() for path in (self.mate / MEMORY).glob(
            "*.yaml") for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("- id: ")]
        if action == "remember" or not theirs:
            done = mate("remember", self.text(), "-c", "fact", "--confidence", "0.95", "--json")
        elif action == "supersede":
            done = mate("supersede", self.rng.choice(theirs), self.text(), "--json")
        else:
            done = mate("forget", self.rng.choice(theirs), "--reason", "teammate")
        self.steps.append(f"teammate {action}: {done.code}")
        if done.code == 0 and action != "forget":
            self.ids.append(done.json()["id"])
        git(self.mate, "push", "-q")
        if self._clean():
            pulled = subprocess.run(["git", "pull", "-q", "--rebase"], cwd=self.store,
                                    capture_output=True, text=True, check=False)
            self.steps.append(f"git pull --rebase: {pulled.returncode}")
            assert pulled.returncode == 0, (self.steps, pulled.stdout, pulled.stderr)
            git(self.store, "push", "-q")

    def _pending(self) -> None:
        self._remember("--no-commit")
        if self.rng.random() < 0.5:
            self.run("commit")


def _answers(cli: Cli, ids: list[str]) -> dict[str, Any]:
    """What a user sees: recall for each word, each entry's show, status and the context."""
    def out(*args: str) -> Any:
        outcome = cli(*args)
        return (outcome.code, json.loads(outcome.stdout) if outcome.code == 0 else None)

    answers: dict[str, Any] = {f"recall {w}": out("recall", w, "--json", "--limit", "50")
                               for w in WORDS[:8]}
    answers.update({f"show {i}": out("show", i, "--json") for i in sorted(set(ids))})
    answers["status"] = out("status", "--json")
    answers["context"] = out("context", "--json")
    return answers


def _branch(store: Path) -> str:
    return git(store, "rev-parse", "--abbrev-ref", "HEAD").strip()


def _ever_kept(store: Path, memory_id: str) -> bool:
    """The entry is in a memory file now, or in a commit git still has."""
    files = (store / "grimoires").rglob("*.yaml")
    if any(memory_id in path.read_text(encoding="utf-8", errors="replace") for path in files):
        return True
    # --reflog: a commit a `git reset --hard` dropped is still there to restore from
    return bool(git(store, "log", "--all", "--reflog", "--format=%H", "-S", memory_id).strip())


def _settled(run: Run, validated: Any) -> Any:
    """`validate` after settling, as a user would, the two outcomes of a team's pulls that it
    reports by design: an entry archived here while the teammate superseded it, when only
    this side changed that archive file (git merges no file one side alone changed, so the
    archived copy lands without its superseded_by: repair sets it), and an entry both clones
    superseded (a fork: the command validate names keeps one replacement)."""
    errors = [line for line in validated.stdout.splitlines() if ": error: " in line]
    if validated.code == 0 or not errors:
        return validated
    if all("has no superseded_by; run `loa-mem repair`" in line for line in errors):
        run.run("repair")
        return run.cli("validate")
    forks = [line.split("keep one: loa-mem ", 1)[1].split(" (or ", 1)[0].split()
             for line in errors if "superseded twice" in line and "keep one: loa-mem " in line]
    if len(forks) == len(errors):
        for command in forks:
            run.run(*command)
        return run.cli("validate")
    return validated


@pytest.mark.parametrize("seed", range(_SEED, _SEED + 4))
def test_any_sequence_leaves_a_valid_store_whose_index_is_the_one_built_from_scratch(
        store: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store)
    remote = store.parent / "remote.git"
    git(store.parent, "clone", "-q", "--bare", str(store), str(remote))
    git(store, "remote", "add", "origin", str(remote))
    git(store, "fetch", "-q", "origin")
    git(store, "branch", "-q", "--set-upstream-to", f"origin/{_branch(store)}")
    git(store.parent, "clone", "-q", str(remote), "mate")
    run = Run(store, random.Random(seed), store.parent / "mate")
    for _ in range(3):
        run._remember()
    for _ in range(10 * _DRAWS):
        run.step()
        if os.environ.get("LOA_MEM_FUZZ_STRICT"):  # find the step that lost an entry
            lost = [i for i in run.ids if not _ever_kept(store, i) and not _ever_kept(
                run.mate, i)]
            assert lost == [], (lost, "\n".join(run.steps[-6:]))
            checked = _settled(run, run.cli("validate"))
            assert checked.code == 0, ("\n".join(run.steps[-8:]), checked.stdout[-1500:])
    if git(store, "status", "--porcelain").strip():
        run.run("commit")
    # what the teammate pushed while this clone was busy
    pulled = subprocess.run(["git", "pull", "-q", "--rebase"], cwd=store, capture_output=True,
                            text=True, check=False)
    assert pulled.returncode == 0, ("\n".join(run.steps), pulled.stdout, pulled.stderr)

    validated = _settled(run, run.cli("validate"))
    assert validated.code == 0, (run.steps, validated.stdout, validated.stderr)
    seen = _answers(run.cli, run.ids)
    shutil.rmtree(store / ".git" / "loa-mem")
    assert _answers(run.cli, run.ids) == seen, run.steps
    lost = [i for i in run.ids if not _ever_kept(store, i)]
    assert lost == [], "\n".join(run.steps)
