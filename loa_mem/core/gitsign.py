"""Whether the user asks git to sign every commit (`commit.gpgSign`), which the plumbing
loa-mem commits with (`git commit-tree`) does not read by itself.

Asking git costs a process (~2 ms quiet, ~10 ms on a busy machine) on every write, so the
config files git would read are looked at first: only when one of them mentions gpgsign or
includes another file (or settings come from the environment) is git asked. The files are
those `git config` reads: the system file (where this git keeps it), the global ones, the
repository's and the worktree's.
"""

from __future__ import annotations

import os
from pathlib import Path

from loa_mem.core import git


def signing(top: Path) -> list[str]:
    """`-S` for `git commit-tree` when commits here are to be signed, else nothing."""
    return ["-S"] if _may_sign(top) and git.signs_commits(top) else []


def _may_sign(top: Path) -> bool:
    if os.environ.get("GIT_CONFIG_PARAMETERS") or os.environ.get("GIT_CONFIG_COUNT"):
        return True
    for path in _config_files(top):
        try:
            text = path.read_bytes().lower()
        except OSError:
            continue
        if b"gpgsign" in text or b"include" in text:
            return True
    return False


def _config_files(top: Path) -> list[Path]:
    env = os.environ
    home = Path(env.get("HOME") or "~").expanduser()
    files = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        if env.get("GIT_CONFIG_SYSTEM"):
            files.append(Path(env["GIT_CONFIG_SYSTEM"]))
        else:
            files += [Path("/etc/gitconfig"), *_prefix_system_files()]
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        files += [xdg / "git" / "config", home / ".gitconfig"]
    gdir = git.git_dir(top)
    # the common config is the repository's own, except in a linked worktree
    files += dict.fromkeys([git.common_dir(top) / "config", gdir / "config",
                            gdir / "config.worktree"])
    return files


def _prefix_system_files() -> list[Path]:
    """Where a git installed under another prefix (Homebrew, /usr/local, Git for Windows)
    keeps its system config: PREFIX/etc/gitconfig, PREFIX being the folder above its bin."""
    import shutil

    found = shutil.which("git")
    if found is None:
        return []
    prefix = Path(found).resolve().parent.parent
    return [prefix / "etc" / "gitconfig", prefix / "mingw64" / "etc" / "gitconfig"]
