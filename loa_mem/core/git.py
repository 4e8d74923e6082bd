"""Git, behind one module.

What it knows: how to run git (`run`, `run_bytes`), the facts of the repository as it is now
(its top, git directory, shallow or signed settings, what is tracked, pending or uncommitted)
and making a commit of some paths. Reading past commits (`history`, `restore`, blobs by name)
is `core.githistory`'s; committing one command's change through git's plumbing is
`core.gitwrite`'s.

Mutations run `git` directly in a subprocess: a commit is on the hot path of `remember`, and
importing GitPython costs more (~110 ms) than the commit itself.

Every call runs with the `GIT_*` variables of an enclosing hook removed (as pre-commit's
`no_git_env` does), so a loa-mem run inside a git hook never writes to the hook's index.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from loa_mem.core.errors import GitFailed

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess

_KEEP = {
    "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY",
    "GIT_CONFIG_COUNT", "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_ALLOW_PROTOCOL", "GIT_ASKPASS",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT",
}


def _process(command: list[str], check: bool = False, **options: Any
             ) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run`, imported on first use: a command that starts no git process (a
    recall, a first recall in a fresh clone) does not pay for the module (~10 ms)."""
    import subprocess

    return subprocess.run(command, check=check, **options)


def clean_env(env: dict[str, str] | None = None) -> dict[str, str]:
    source = os.environ if env is None else env
    return {
        k: v for k, v in source.items()
        if not k.startswith("GIT_") or k in _KEEP
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }


_HOOK_INDEX: dict[str, str] = {}


def scrub_process_env() -> None:
    """Drop hook variables from this process, so libraries that read os.environ obey too. The
    index a hook is committing (`GIT_INDEX_FILE`, relative to the top, where hooks run) is
    kept aside for `hook_index`."""
    if os.environ.get("GIT_INDEX_FILE"):
        _HOOK_INDEX["path"] = os.path.abspath(os.environ["GIT_INDEX_FILE"])
    ignored = [k for k in ("GIT_DIR", "GIT_WORK_TREE") if os.environ.get(k)]
    if ignored:
        _HOOK_INDEX["ignored"] = " and ".join(ignored)
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        if key not in clean_env({key: ""}):
            del os.environ[key]


def ignored_variables() -> str | None:
    """GIT_DIR / GIT_WORK_TREE, when they were set and loa-mem set them aside."""
    return _HOOK_INDEX.get("ignored")


def hook_index() -> str | None:
    """The index the enclosing git hook commits, if loa-mem runs inside one."""
    return _HOOK_INDEX.get("path")


def find_top(start: Path) -> Path | None:
    """The working-tree top level containing `start`, found without running git."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def bare_repository(start: Path) -> Path | None:
    """The bare repository `start` is in (a folder with HEAD, objects and refs, no work tree)."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir() and (
                candidate / "refs").is_dir():
            return candidate
    return None


def git_dir(top: Path) -> Path:
    dot_git = top / ".git"
    if dot_git.is_file():
        pointer = dot_git.read_text(encoding="utf-8").strip()
        if pointer.startswith("gitdir:"):
            target = Path(pointer.split(":", 1)[1].strip())
            return target if target.is_absolute() else (top / target).resolve()
    return dot_git


def common_dir(top: Path) -> Path:
    """The folder holding what all worktrees of this repository share (its config, hooks)."""
    gdir = git_dir(top)
    pointer = gdir / "commondir"
    if pointer.is_file():
        target = Path(pointer.read_text(encoding="utf-8").strip())
        return target if target.is_absolute() else (gdir / target).resolve()
    return gdir


def signs_commits(top: Path) -> bool:
    """The user's git config asks for every commit to be signed (`commit.gpgSign`)."""
    return run(top, "config", "--type=bool", "--get", "commit.gpgSign",
               check=False).strip() == "true"


# What loa-mem reads from git must be what it asked for, whatever the user's settings: no
# signature check lines (log.showSignature), UTF-8 text, no colour codes (color.*=always).
_AS_ASKED = ("-c", "log.showSignature=false", "-c", "i18n.logOutputEncoding=UTF-8",
             "-c", "color.ui=never", "-c", "color.grep=never", "-c", "color.diff=never")


def run(top: Path, *args: str, stdin: str | None = None, check: bool = True) -> str:
    result = _process(
        ["git", *_AS_ASKED, *args], cwd=top, env=clean_env(), input=stdin, capture_output=True,
        text=True, errors="replace", check=False,  # a hand-committed binary must not crash us
    )
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: {detail[-1] if detail else result.returncode}",
                        _hint(result.stderr))
    output: str = result.stdout
    return output


def run_bytes(top: Path, *args: str, stdin: bytes | None = None, check: bool = False
              ) -> tuple[int, bytes]:
    """`git args` with bytes in and out (blobs exactly as committed): its exit status and
    output. With `check`, a failure raises (`subprocess.CalledProcessError`)."""
    result = _process(["git", *args], cwd=top, env=clean_env(), input=stdin, capture_output=True,
                      check=check)
    output: bytes = result.stdout
    return result.returncode, output


def _hint(stderr: str) -> str:
    if "tell me who you are" in stderr or "user.email" in stderr:
        return "set an identity: git config user.name NAME; git config user.email ADDRESS"
    if "index.lock" in stderr:
        return "another git command is running here; retry when it ends"
    return "the files are written; run `loa-mem commit` once git works again"


def superproject(top: Path) -> Path | None:
    """The working tree of the repository `top` is a submodule of (None when it is not)."""
    found = run(top, "rev-parse", "--show-superproject-working-tree", check=False).strip()
    return Path(found) if found else None


def init(top: Path) -> None:
    top.mkdir(parents=True, exist_ok=True)
    run(top, "init", "-q")


def has_commits(top: Path) -> bool:
    return bool(run(top, "rev-parse", "-q", "--verify", "HEAD", check=False).strip())


def tracked(top: Path, paths: list[str]) -> set[str]:
    out = run(top, "ls-files", "-z", "--", *paths) if paths else ""
    return {p for p in out.split("\0") if p}


def commit(top: Path, paths: list[str], message: str) -> str | None:
    """Commit exactly `paths` as they are in the working tree; the user's other staged or
    unstaged work stays as it was. Returns the new commit, or None when nothing changed.

    `--only` commits the named paths from a temporary index and leaves the rest of the user's
    index alone. New files must be known to git first, so they are added on the first failure.
    """
    paths = sorted(set(paths))
    # the message is UTF-8: the commit must not claim another i18n.commitEncoding
    args = ["-c", "i18n.commitEncoding=UTF-8", "commit", "-q", "--no-verify", "--only", "-F",
            "-", "--", *paths]
    result = _git(top, args, message)
    if result.returncode != 0 and "did not match any file" in result.stderr:
        existing = [p for p in paths if (top / p).exists()]
        if existing:
            run(top, "add", "--", *existing)
        result = _git(top, args, message)
    if result.returncode != 0:
        if _nothing_to_commit(result.stdout + result.stderr):
            return None
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitFailed(f"git commit failed: {detail[-1] if detail else result.returncode}",
                        _commit_hint(top, result.stderr))
    return run(top, "rev-parse", "HEAD").strip()


def _commit_hint(top: Path, stderr: str) -> str:
    if "failed to write commit object" in stderr and signs_commits(top):
        return ("commits here are signed (commit.gpgSign) and signing failed: fix it (try `git "
                "commit --allow-empty -m test`) or turn it off here (git config commit.gpgSign "
                "false); the files are written: `loa-mem commit` commits them then")
    return _hint(stderr)


def _git(top: Path, args: list[str], stdin: str | None) -> subprocess.CompletedProcess[str]:
    return _process(["git", *_AS_ASKED, *args], cwd=top, env=clean_env(), input=stdin,
                     capture_output=True, text=True, check=False)


def _nothing_to_commit(output: str) -> bool:
    return any(marker in output for marker in (
        "nothing to commit", "no changes added to commit", "nothing added to commit"))


# what a killed writer can leave beside a file (filewrite's temporaries and kept old copies):
# never another command's work to commit
_LEFTOVER = re.compile(r"^\..+\.\d+\.(?:tmp|old)$")


def pending(top: Path, paths: list[str]) -> list[str]:
    """Paths under `paths` whose working-tree state differs from HEAD (new files included)."""
    out = run(top, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths)
    found = []
    records = iter(out.split("\0"))
    for record in records:
        if not record:
            continue
        if not _LEFTOVER.match(record[3:].rsplit("/", 1)[-1]):
            found.append(record[3:])
        if record[0] in "RC":
            next(records, None)
    return found


def message(op: str, what: str, ids: list[str], extra: dict[str, str] | None = None,
            body: str = "") -> str:
    trailers = [f"Loa-Op: {op}", *(f"Loa-Id: {i}" for i in dict.fromkeys(ids))]
    trailers += [f"{k}: {v}" for k, v in (extra or {}).items()]
    subject = f"loa-mem {op}: {what}"
    if len(subject) > 100:
        subject = subject[:99] + "…"
    middle = body.strip("\n") + "\n\n" if body.strip() else ""
    return subject + "\n\n" + middle + "\n".join(trailers) + "\n"


def matches_head(top: Path, path: str) -> bool:
    return _git(top, ["diff", "--quiet", "HEAD", "--", path], None).returncode == 0


def uncommitted(top: Path, paths: list[str]) -> set[str]:
    """Paths whose current bytes git could not give back: untracked, ignored or modified."""
    if not paths:
        return set()
    known = tracked(top, paths)
    changed = run(top, "status", "--porcelain", "-z", "--untracked-files=all", "--",
                      *paths, check=False)
    dirty = {record[3:] for record in changed.split("\0") if len(record) > 3}
    return {p for p in paths if p not in known or p in dirty}


# -- plumbing the merge driver and purge share ----------------------------------------------
def merge_file(ours: Path, base: Path, theirs: Path, label: str, marker: int) -> int:
    """git's own three-way line merge into `ours`; the number of conflicts."""
    result = _process(
        ["git", "merge-file", f"--marker-size={marker}", "-L", "ours", "-L", "base", "-L",
         label, str(ours), str(base), str(theirs)],
        env=clean_env(), capture_output=True, check=False)
    return max(result.returncode, 0) if result.returncode < 128 else 1


def commit_tree(top: Path, tree: str, parent: str | None, message: str,
                identity: dict[str, str]) -> str:
    """A commit object of `tree` (author and committer from `identity`), on no branch yet."""
    args = ["git", "-c", "i18n.commitEncoding=UTF-8", "commit-tree", tree,
            *(["-p", parent] if parent else [])]
    done = _process(args, cwd=top, input=message, capture_output=True, text=True,
                    env={**clean_env(), **identity}, check=True)
    made: str = done.stdout
    return made.strip()
