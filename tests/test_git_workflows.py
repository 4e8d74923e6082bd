"""Git workflows a team really uses, run with the real CLI on real repositories: nothing lost,
nothing corrupted, nothing committed that the user did not ask for.

Sparse checkouts, commit settings (signing, a commit encoding, no identity) and shallow clones;
each ends with recall and validate agreeing with an index rebuilt from scratch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"


def _remember(cli: Cli, text: str, category: str = "fact") -> str:
    return support.remember(cli, text, category)


def _refused_unchanged(cli: Cli, store: Path, *args: str) -> str:
    """A refusal: one line, exit 1, no file, no index entry and no commit changed."""
    before = (support.snapshot(store), support.head(store), git(store, "ls-files", "-s", "-t"))
    line = support.one_line_error(cli(*args))
    assert (support.snapshot(store), support.head(store),
            git(store, "ls-files", "-s", "-t")) == before
    return line


# -- sparse checkout -------------------------------------------------------------------------
def _sparse_without_facts(cli: Cli, store: Path) -> list[str]:
    ids = [_remember(cli, f"Sparse fact number {n} about the build.") for n in range(3)]
    git(store, "status")  # refreshes git's stat cache, as any look at the tree does
    git(store, "sparse-checkout", "set", "--no-cone", "/*", f"!/{FACTS}")
    assert not (store / FACTS).exists()
    return ids


def test_a_grimoire_left_out_of_a_sparse_checkout_is_never_replaced(cli: Cli,
                                                                      store: Path) -> None:
    ids = _sparse_without_facts(cli, store)
    for args in (("remember", "A fact while the file is left out.", "-c", "fact"),
                 ("remember", "Not even written.", "-c", "fact", "--no-commit")):
        line = _refused_unchanged(cli, store, *args)
        assert FACTS in line and "sparse" in line and "git sparse-checkout" in line
    assert all(i in git(store, "show", f"HEAD:{FACTS}") for i in ids)
    problems = cli.ok("validate", "--json").json()["problems"]
    assert [(p["path"], p["rule"], p["severity"]) for p in problems] == [
        (FACTS, "sparse", "warning")]

    git(store, "sparse-checkout", "disable")
    new = _remember(cli, "A fact once the file is back.")
    assert support.all_ids(store).count(new) == 1
    assert set(ids) <= set(support.all_ids(store))
    support.answers_as_rebuilt(cli, store, "fact")


def test_other_grimoires_of_a_sparse_checkout_still_take_writes(cli: Cli, store: Path) -> None:
    ids = _sparse_without_facts(cli, store)
    decision = _remember(cli, "Build with Bazel: hermetic and cached.", "decision")
    assert support.changed_files(store) == sorted([f"{support.MEMORY}/decisions.yaml",
                                                   f"{support.MEMORY}/events.jsonl"])
    assert all(i in git(store, "show", f"HEAD:{FACTS}") for i in ids)
    assert decision in git(store, "show", f"HEAD:{support.MEMORY}/decisions.yaml")


def test_init_never_writes_over_a_file_left_out_of_a_sparse_checkout(cli: Cli,
                                                                      store: Path) -> None:
    _sparse_without_facts(cli, store)
    line = _refused_unchanged(cli, store, "init")
    assert FACTS in line and "git sparse-checkout" in line


# -- commit settings -------------------------------------------------------------------------
def test_a_commit_encoding_setting_never_garbles_the_message(cli: Cli, store: Path) -> None:
    git(store, "config", "i18n.commitEncoding", "ISO-8859-1")
    memory_id = _remember(cli, "Le café est servi à 10h, près de la façade.")
    raw = git(store, "cat-file", "commit", "HEAD")
    assert "\nencoding " not in raw.split("\n\n", 1)[0]
    git(store, "config", "--unset", "i18n.commitEncoding")
    assert "café est servi" in support.message(store)
    history = cli.ok("history", memory_id).stdout
    assert "café est servi" in history and "Ã" not in history


def _ssh_signing(store: Path, tmp_path: Path, key: Path) -> None:
    git(store, "config", "gpg.format", "ssh")
    git(store, "config", "user.signingKey", str(key))
    git(store, "config", "commit.gpgSign", "true")


def _verifiable_signing(store: Path, tmp_path: Path) -> None:
    """Every commit in `store` signed with a new SSH key that `git verify-commit` trusts."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (OpenSSH) to make a signing key")
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test@example.invalid",
                    "-f", str(key)], check=True, capture_output=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"test@example.invalid {key.with_suffix('.pub').read_text()}")
    _ssh_signing(store, tmp_path, key)
    git(store, "config", "gpg.ssh.allowedSignersFile", str(allowed))


@pytest.mark.parametrize("where", ["repository", "included by the global config"])
def test_commits_are_signed_where_the_user_signs_every_commit(cli: Cli, store: Path,
                                                              tmp_path: Path, where: str) -> None:
    _verifiable_signing(store, tmp_path)
    if where != "repository":  # set where loa-mem only finds it by following an include
        git(store, "config", "--unset", "commit.gpgSign")
        included = tmp_path / "signing.inc"
        included.write_text("[commit]\n\tgpgSign = true\n", encoding="utf-8")
        with Path(os.environ["GIT_CONFIG_GLOBAL"]).open("a", encoding="utf-8") as config:
            config.write(f"[include]\n\tpath = {included}\n")
    first = _remember(cli, "Signed commits only on main.")
    git(store, "verify-commit", "HEAD")
    cli.ok("archive", first, "--reason", "stale")
    git(store, "verify-commit", "HEAD")


def test_signature_lines_git_log_shows_never_mix_with_what_loa_mem_reads(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    _verifiable_signing(store, tmp_path)
    git(store, "config", "log.showSignature", "true")
    (store / "notes.md").write_text("kept in git\n", encoding="utf-8")
    git(store, "add", "notes.md")
    git(store, "commit", "-qm", "notes")
    git(store, "rm", "-q", "notes.md")
    git(store, "commit", "-qm", "notes gone")
    cli.ok("restore", "notes.md")
    assert (store / "notes.md").read_text(encoding="utf-8") == "kept in git\n"
    memory_id = _remember(cli, "Signed, and shown with its signature.")
    cli.ok("forget", memory_id, "--reason", "a test")
    cli.ok("restore", memory_id)
    assert len(cli.ok("history", memory_id, "--json").json()["commits"]) == 3


def test_a_log_output_encoding_setting_never_garbles_history(cli: Cli, store: Path) -> None:
    memory_id = _remember(cli, "Le café est prêt à 10h.")
    git(store, "config", "i18n.logOutputEncoding", "ISO-8859-1")
    assert "Le café est prêt" in cli.ok("history", memory_id).stdout


def test_colour_forced_on_leaves_history_whole(cli: Cli, store: Path) -> None:
    memory_id = _remember(cli, "The colour of the build light is green.")
    facts = store / FACTS
    facts.write_text(facts.read_text().replace("light is green.", "light is amber."))
    git(store, "commit", "-qam", "a hand edit")
    cli.ok("archive", memory_id, "--reason", "stale")
    plain = cli.ok("history", memory_id, "--json").json()
    assert "a hand edit" in [c["subject"] for c in plain["commits"]]
    git(store, "config", "color.ui", "always")
    assert cli.ok("history", memory_id, "--json").json() == plain


def test_a_signing_failure_is_refused_and_nothing_is_written(cli: Cli, store: Path,
                                                             tmp_path: Path) -> None:
    _remember(cli, "Written before signing was required.")
    _ssh_signing(store, tmp_path, tmp_path / "no-such-key")
    line = _refused_unchanged(cli, store, "remember", "Needs a signature.", "-c", "fact")
    assert "commit.gpgSign" in line and "nothing was changed" in line
    cli.ok("remember", "Written, to commit later.", "-c", "fact", "--no-commit")
    assert "commit.gpgSign" in support.one_line_error(cli("commit"))
    support.answers_as_rebuilt(cli, store, "signature")


def _no_identity() -> None:
    home_config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    home_config.write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n",
                           encoding="utf-8")


def test_without_a_git_identity_nothing_is_written(cli: Cli, store: Path) -> None:
    _no_identity()
    line = _refused_unchanged(cli, store, "remember", "Who wrote this?", "-c", "fact")
    assert "git config user.email" in line and "nothing was changed" in line


def test_init_without_a_git_identity_writes_nothing_so_a_second_init_commits(
        repo: Path) -> None:
    _no_identity()
    cli = Cli(repo)
    line = support.one_line_error(cli("init"))
    assert "git config user.email" in line
    assert support.snapshot(repo) == {} and support.porcelain(repo) == ""
    git(repo, "config", "user.name", "Ana")
    git(repo, "config", "user.email", "ana@example.invalid")
    cli.ok("init")
    assert support.porcelain(repo) == ""
    assert f"{support.MEMORY}/facts.yaml" in support.changed_files(repo)


# -- shallow clone ---------------------------------------------------------------------------
def test_a_shallow_clone_says_history_is_cut_and_unshallowing_brings_it_back(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    forgotten = _remember(cli, "The cache lives in Redis, ten minutes TTL.")
    cli.ok("forget", forgotten, "--reason", "moved to memcached")
    latest = _remember(cli, "The cache lives in memcached now.")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", store.resolve().as_uri(), str(clone))
    there = Cli(clone)

    for args in (("restore", forgotten), ("history", forgotten)):
        line = _refused_unchanged(there, clone, *args)
        assert "shallow" in line and "git fetch --unshallow" in line
    listed = there.ok("history", latest, "--json")
    assert [c["subject"] for c in listed.json()["commits"]] == [support.message(clone).split(
        "\n")[0]]
    assert "shallow" in listed.stderr

    git(clone, "fetch", "-q", "--unshallow")
    there.ok("restore", forgotten)
    assert forgotten in support.all_ids(clone)
    assert len(there.ok("history", forgotten, "--json").json()["commits"]) == 3
    support.answers_as_rebuilt(there, clone, "cache")


def test_init_whose_commit_cannot_be_signed_writes_nothing(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitattributes").write_text("*.png binary\n", encoding="utf-8")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    _ssh_signing(repo, tmp_path, tmp_path / "no-such-key")
    cli = Cli(repo)
    before = support.snapshot(repo)
    assert "commit.gpgSign" in support.one_line_error(cli("init"))
    assert support.snapshot(repo) == before and support.porcelain(repo) == ""
    git(repo, "config", "commit.gpgSign", "false")
    cli.ok("init")
    assert support.porcelain(repo) == "" and support.commit_count(repo) == 2


# -- a conflict that needs a person ----------------------------------------------------------
def _edited_two_ways(cli: Cli, store: Path) -> str:
    """One entry whose content main and `side` changed differently, merged with git's line
    merge (loa-mem not on PATH) and diff3 markers; returns the entry's id."""
    shared = _remember(cli, "The queue is RabbitMQ.")
    git(store, "config", "merge.conflictStyle", "diff3")
    git(store, "branch", "side")
    facts = store / FACTS
    for branch, words in (("main", "The queue is Kafka."), ("side", "The queue is NATS.")):
        git(store, "checkout", "-q", branch)
        facts.write_text(facts.read_text().replace("The queue is RabbitMQ.", words))
        git(store, "commit", "-qam", f"{branch}: the queue")
    git(store, "checkout", "-q", "main")
    bare = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not (Path(p) / "loa-mem").exists())
    merged = subprocess.run(["git", "merge", "--no-edit", "side"], cwd=store, capture_output=True,
                            env={**os.environ, "PATH": bare}, check=False)
    assert merged.returncode == 1 and "|||||||" in facts.read_text()
    return shared


def test_repair_names_an_entry_whose_other_version_it_set_aside(cli: Cli, store: Path) -> None:
    shared = _edited_two_ways(cli, store)
    report = cli.ok("repair", "--json").json()
    assert any(shared in fix["what"] and "kept ours" in fix["what"] for fix in report["fixes"])
    assert support.entry(store, shared)["content"] == "The queue is Kafka."


def test_repair_of_committed_diff3_markers_names_the_entry_too(cli: Cli, store: Path) -> None:
    shared = _edited_two_ways(cli, store)
    git(store, "commit", "-qam", "a merge committed with its markers")
    report = cli.ok("repair", "--json").json()
    assert any(shared in fix["what"] and "kept ours" in fix["what"] for fix in report["fixes"])
    assert report["commit"] == support.head(store)
    assert "The queue is NATS." not in (store / FACTS).read_text()
    support.answers_as_rebuilt(cli, store, "queue")


# -- GIT_DIR and GIT_WORK_TREE -----------------------------------------------------------------
def test_git_dir_and_work_tree_variables_are_named_when_they_are_not_followed(
        tmp_path: Path) -> None:
    project, gitdir = tmp_path / "project", tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", f"--separate-git-dir={gitdir}", str(project))
    Cli(project).ok("init")
    pointed = {"GIT_DIR": str(gitdir), "GIT_WORK_TREE": str(project)}
    outside = run_loa_mem(tmp_path, "remember", "Pointed at by variables.", "-c", "fact",
                          env=pointed)
    assert outside.returncode == 1 and outside.stdout == ""
    assert "GIT_DIR and GIT_WORK_TREE" in outside.stderr and "--root" in outside.stderr
    assert len(outside.stderr.strip().splitlines()) == 1
    assert not (tmp_path / ".git").exists() and support.porcelain(project) == ""
    inside = run_loa_mem(project, "remember", "Run inside the working tree.", "-c", "fact",
                         env=pointed)
    assert inside.returncode == 0, inside.stderr
    assert "Run inside the working tree." in git(project, "show", f"HEAD:{FACTS}")


def test_a_write_inside_a_submodule_points_to_the_superprojects_store(cli: Cli, store: Path,
                                                                       tmp_path: Path) -> None:
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q")
    (library / "lib.py").write_text("x = 1\n")
    git(library, "add", "lib.py")
    git(library, "commit", "-qm", "library")
    git(store, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(store, "commit", "-qm", "the library as a submodule")
    inside = Cli(store / "lib")
    before = (support.snapshot(store), support.head(store), support.head(store / "lib"))
    line = support.one_line_error(inside("remember", "Written from the submodule.", "-c",
                                         "fact"))
    assert f"submodule of {store}" in line and f"--root {store}" in line
    assert (support.snapshot(store), support.head(store), support.head(store / "lib")) == before
    support.remember(Cli(store), "Written from the superproject.")


def test_init_refused_by_core_safecrlf_says_so_and_writes_nothing(repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")
    git(repo, "config", "core.safecrlf", "true")
    cli = Cli(repo)
    line = support.one_line_error(cli("init"))
    assert "core.safecrlf" in line and "nothing was changed" in line
    assert support.snapshot(repo) == {} and support.porcelain(repo) == ""
    git(repo, "config", "core.safecrlf", "warn")
    cli.ok("init")
    assert support.porcelain(repo) == ""


# -- linked worktrees ------------------------------------------------------------------------
def test_a_linked_worktree_at_a_path_with_spaces_keeps_its_own_index_and_merges_back(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    shared = _remember(cli, "Shared before the worktree: builds run nightly.")
    other = tmp_path / "côté B worktree"
    git(store, "worktree", "add", "-q", "-b", "side", str(other))
    there = Cli(other)
    side = _remember(there, "Only on the side branch: builds run hourly.")
    here = _remember(cli, "Only on main: builds run on every push.")
    assert {r["id"] for r in there.ok("recall", "builds", "--json").json()["results"]} == {
        shared, side}
    assert {r["id"] for r in cli.ok("recall", "builds", "--json").json()["results"]} == {
        shared, here}
    assert support.porcelain(other) == "" and support.porcelain(store) == ""
    git(store, "merge", "-q", "--no-edit", "side")
    assert sorted(support.all_ids(store)) == sorted([shared, side, here])
    support.answers_as_rebuilt(cli, store, "builds")


def test_remember_during_a_squash_merge_keeps_the_squash_staged(cli: Cli, store: Path) -> None:
    base = _remember(cli, "The API speaks JSON.")
    git(store, "checkout", "-q", "-b", "feature")
    squashed = [_remember(cli, f"Feature fact {n}: the API paginates.") for n in (1, 2)]
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--squash", "feature")
    during = _remember(cli, "Remembered while the squash waits to be committed.")
    committed = git(store, "show", f"HEAD:{FACTS}")
    assert during in committed and not any(i in committed for i in squashed)
    assert all(i in git(store, "diff", "--cached", "--", FACTS) for i in squashed)
    git(store, "commit", "-q", "-m", "the feature, squashed")
    assert support.porcelain(store) == ""
    assert sorted(support.all_ids(store)) == sorted([base, *squashed, during])
    support.answers_as_rebuilt(cli, store, "API")


def test_the_pre_commit_hook_installed_from_a_linked_worktree_runs_there(
        store: Path, tmp_path: Path) -> None:
    other = tmp_path / "second worktree"
    git(store, "worktree", "add", "-q", "-b", "side", str(other))
    done = run_loa_mem(other, "hooks", "install", "--git")
    assert done.returncode == 0, done.stderr
    with open(support.grimoire(other, "fact"), "a", encoding="utf-8") as handle:
        handle.write("- id: not-an-id\n")
    git(other, "add", "-A")
    blocked = subprocess.run(["git", "commit", "-qm", "a broken memory file"], cwd=other,
                             capture_output=True, text=True, check=False)
    assert blocked.returncode != 0 and "not-an-id" in blocked.stdout + blocked.stderr
    assert run_loa_mem(other, "hooks", "uninstall", "--git").returncode == 0


def test_init_never_commits_lines_of_gitattributes_the_user_has_not_committed(
        repo: Path) -> None:
    attributes = repo / ".gitattributes"
    attributes.write_text("*.png binary\n", encoding="utf-8")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")
    attributes.write_text("*.png binary\n*.jpg binary\n", encoding="utf-8")
    cli = Cli(repo)
    before = support.snapshot(repo)
    line = support.one_line_error(cli("init"))
    assert ".gitattributes" in line and "commit or stash" in line
    assert support.snapshot(repo) == before and support.porcelain(repo) == " M .gitattributes\n"
    git(repo, "commit", "-qam", "jpg too")
    cli.ok("init")
    assert support.porcelain(repo) == ""
