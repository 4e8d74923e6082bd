"""One user's memory is never read or written by another's commands, whatever paths are passed.

Two meanings, both tested:
- two accounts on one machine sharing LOA_MEM_HOME: the folders are 0700 and owned by their
  account, and loa-mem refuses a folder owned by another account (root included), so neither
  the commands nor the files let one read the other;
- two user ids on one account: the id names exactly one folder; ids that look like paths are
  refused, and LOA_MEM_HOME inside a store, a linked folder or a folder holding another id's
  store are refused, so nothing reaches a folder the id does not name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from loa_mem.people import home as people
from tests.people_support import ALICE, BOB, T0, PrefCli, make_pcli

ALICE_UID, BOB_UID = 4201, 4202


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` (its .git and access log included) by content hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- two user ids, one account ----------------------------------------------------------------
@pytest.fixture
def bob_folder(pcli: PrefCli) -> Iterator[Path]:
    pcli.ok("pref", "set", "vertical", "Finance", "--user", BOB, now=T0)
    pcli.ok("pref", "session", "record", "--session", "b1", "budget", "9000", "--user", BOB,
            now=T0)
    folder = pcli.folder(BOB)
    before = snapshot(folder)
    yield folder
    assert snapshot(folder) == before, "bob's store changed"


@pytest.mark.parametrize("user", [f"../{BOB}", f"/tmp/{BOB}", "..", ".", "a\\b", ".hidden"])
def test_user_ids_that_look_like_paths_are_refused(pcli: PrefCli, bob_folder: Path,
                                                   user: str) -> None:
    for args in (("show",), ("set", "k", "v"), ("forget", "Finance", "--purge", "--yes")):
        refused = pcli("pref", *args, "--user", user, now=T0)
        assert refused.code == 1 and "user id cannot" in refused.stderr


def test_a_folder_name_as_user_id_is_just_another_user(pcli: PrefCli, bob_folder: Path) -> None:
    shown = pcli.pref("show", "--user", bob_folder.name)
    assert shown["preferences"] == [] and shown["store"] != str(bob_folder)
    assert pcli.pref("show")["preferences"] == []  # alice's own store is empty too


def test_forget_text_is_never_a_path(pcli: PrefCli, bob_folder: Path) -> None:
    pcli.pref("set", "vertical", "Retail")
    for text in (str(bob_folder), str(bob_folder / "preferences.json"), "Finance"):
        assert pcli("pref", "forget", text, "--purge", "--yes", now=T0).code in (0, 1)
    assert pcli.pref("get", "vertical")["value"] == "Retail"


@pytest.mark.parametrize("inside", ["", ".git", ".git/objects"])
def test_a_home_inside_another_store_is_refused(pcli: PrefCli, bob_folder: Path,
                                                inside: str) -> None:
    refused = pcli("pref", "set", "k", "v", now=T0,
                   env={"LOA_MEM_HOME": str(bob_folder / inside)})
    assert refused.code == 1 and "is inside a personal store" in refused.stderr


def test_a_linked_folder_is_refused(pcli: PrefCli, bob_folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    (other / people.slug(ALICE)).symlink_to(bob_folder)
    for args in (("show",), ("set", "k", "v")):
        refused = pcli("pref", *args, now=T0, env={"LOA_MEM_HOME": str(other)})
        assert refused.code == 1 and "is not a folder (a link or a file)" in refused.stderr
    assert pcli("pref", "context", now=T0, env={"LOA_MEM_HOME": str(other)}).stdout == ""


def test_a_folder_holding_another_ids_store_is_refused(pcli: PrefCli, bob_folder: Path,
                                                       tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copytree(bob_folder, moved / people.slug(ALICE))
    refused = pcli("pref", "show", now=T0, env={"LOA_MEM_HOME": str(moved)})
    assert refused.code == 1 and "holds the store of another user id" in refused.stderr


# -- two accounts, one LOA_MEM_HOME -------------------------------------------------------------
def _python_for_others() -> list[str] | None:
    """A command line that runs this loa-mem as another account, or None when there is none
    (the venv's interpreter may sit in root's private home)."""
    repo = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join([repo, sysconfig.get_paths()["purelib"]])
    name = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    dirs = [*os.environ.get("PATH", "").split(os.pathsep), "/usr/local/bin", "/usr/bin"]
    candidates = [sys.executable, *(os.path.join(d, name) for d in dirs if d)]
    for python in dict.fromkeys(c for c in candidates if os.path.exists(c)):
        try:
            probe = subprocess.run([python, "-c", "import loa_mem.cli.app"], env={
                "PYTHONPATH": path, "PATH": os.environ.get("PATH", ""), "HOME": "/"},
                user=ALICE_UID, group=ALICE_UID, extra_groups=[], capture_output=True,
                check=False, cwd="/")
        except OSError:
            continue
        if probe.returncode == 0:
            return [python, "-m", "loa_mem"]
    return None


@pytest.fixture
def accounts() -> Iterator[tuple[Path, list[str]]]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to run commands as two other accounts")
    command = _python_for_others()
    if command is None:
        pytest.skip("no Python interpreter with loa-mem is usable by another account here")
    base = Path(tempfile.mkdtemp(prefix="loa-mem-accounts-"))
    base.chmod(0o755)
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: anyone may make a folder, nobody may take another's
    for uid in (ALICE_UID, BOB_UID):
        own = base / str(uid)
        own.mkdir()
        os.chown(own, uid, uid)
    try:
        yield base, command
    finally:
        shutil.rmtree(base)


def _as(accounts: tuple[Path, list[str]], uid: int, user: str, *args: str
        ) -> subprocess.CompletedProcess[str]:
    base, command = accounts
    repo = str(Path(__file__).resolve().parents[1])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(base / str(uid)),
           "LOA_MEM_HOME": str(base / "shared"), "LOA_MEM_USER": user, "LOA_MEM_NOW": T0,
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([repo, sysconfig.get_paths()["purelib"]])}
    return subprocess.run([*command, *args], env=env, user=uid, group=uid, extra_groups=[],
                          cwd=base / str(uid), capture_output=True, text=True, check=False)


def test_two_accounts_sharing_a_home_cannot_read_each_other(
        accounts: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    base, _ = accounts
    assert _as(accounts, ALICE_UID, ALICE, "pref", "set", "vertical", "Retail").returncode == 0
    assert _as(accounts, BOB_UID, BOB, "pref", "set", "vertical", "Finance").returncode == 0
    alice = base / "shared" / people.slug(ALICE)
    before = snapshot(alice)
    for args in (("show",), ("get", "vertical"), ("context",), ("session", "load"),
                 ("forget", "Retail", "--purge", "--yes"), ("set", "vertical", "Evil")):
        done = _as(accounts, BOB_UID, ALICE, "pref", *args)
        assert "Retail" not in done.stdout
        assert done.returncode in ((0,) if args[0] in ("context", "session") else (1,))
    refused = _as(accounts, BOB_UID, ALICE, "pref", "show")
    assert "belongs to another account" in refused.stderr or "Permission denied" in \
        refused.stderr
    mine = _as(accounts, BOB_UID, BOB, "pref", "show", "--json")
    assert '"Finance"' in mine.stdout and "Retail" not in mine.stdout
    monkeypatch.setenv("LOA_MEM_HOME", str(base / "shared"))
    with pytest.raises(people.Refused, match="belongs to another account"):
        people.user_dir(ALICE)  # root, too, refuses a store another account owns
    assert snapshot(alice) == before


def test_files_of_one_account_are_unreadable_by_the_other(accounts: tuple[Path, list[str]]
                                                          ) -> None:
    base, command = accounts
    assert _as(accounts, ALICE_UID, ALICE, "pref", "set", "vertical", "Retail").returncode == 0
    alice = base / "shared" / people.slug(ALICE)
    reader = [command[0], "-c", "import sys; open(sys.argv[1]).read()",
              str(alice / "preferences.json")]
    done = subprocess.run(reader, user=BOB_UID, group=BOB_UID, extra_groups=[],
                          capture_output=True, text=True, check=False, cwd="/",
                          env={"PATH": os.environ.get("PATH", "")})
    assert done.returncode != 0 and "Permission denied" in done.stderr
