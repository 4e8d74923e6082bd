"""Git, behind one module.

Mutations run `git` directly in a subprocess: a commit is on the hot path of `remember`, and
importing GitPython costs more (~110 ms) than the commit itself. Reading history (`history`,
`restore`) goes through GitPython, imported only there.

Every call runs with the `GIT_*` variables of an enclosing hook removed (as pre-commit's
`no_git_env` does), so a loa-mem run inside a git hook never writes to the hook's index.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from loa_mem.core.errors import GitFailed, NotARepo

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


class CommitInfo(NamedTuple):
    sha: str
    date: str
    subject: str


def _repo(top: Path) -> Any:
    try:
        from git import Repo
    except ImportError as error:  # pragma: no cover - GitPython is a dependency
        raise NotARepo(f"GitPython is not importable: {error}", "reinstall loa-mem") from None
    return Repo(top)


def matches_head(top: Path, path: str) -> bool:
    return _git(top, ["diff", "--quiet", "HEAD", "--", path], None).returncode == 0


def history(top: Path, needle: str, paths: list[str],
            span: tuple[str, int, int] | None = None) -> list[CommitInfo]:
    """Commits that touched an entry: those that name it in a trailer, added or removed its
    id under `paths`, or (with `span`, where it is now: path, first and last line) changed any
    of its lines, which finds hand edits and merges that carry no trailer."""
    if not has_commits(top):
        return []
    fmt = "--format=%x1e%H%x1f%aI%x1f%s"
    seen: dict[str, CommitInfo] = {}
    named = run(top, "log", fmt, f"--grep=^Loa-Id: {needle}$")
    outputs = [run(top, "log", fmt, f"-S{needle}", "--", *paths)]
    outputs += _line_history(top, fmt, needle, paths, span)
    # where a shallow clone cuts history, a commit shows every line as added: only its
    # trailer can say it touched the entry
    cut = shallow_cuts(top)
    for number, output in enumerate([named, *outputs]):
        for line in output.split("\n"):  # not splitlines(): it splits on \x1e and \x1f too
            if line.startswith("\x1e"):
                sha, date, subject = line[1:].split("\x1f", 2)
                if number == 0 or sha not in cut:
                    seen[sha] = CommitInfo(sha, date, subject)
    order = run(top, "rev-list", "HEAD").split()
    rank = {sha: n for n, sha in enumerate(order)}
    return sorted(seen.values(), key=lambda c: rank.get(c.sha, len(rank)))


def shallow_cuts(top: Path) -> set[str]:
    """The commits where a shallow clone's history stops (none in a full clone)."""
    common = run(top, "rev-parse", "--git-common-dir", check=False).strip()
    try:
        return set((top / common / "shallow").read_text(encoding="utf-8").split()) if (
            common) else set()
    except OSError:
        return set()


SHALLOW_HINT = "this clone is shallow (cloned with --depth): fetch the rest (git fetch " \
    "--unshallow), then retry"


def _line_history(top: Path, fmt: str, needle: str, paths: list[str],
                  span: tuple[str, int, int] | None) -> list[str]:
    """`git log -L` over the entry's lines, hopping back to the file it was in before each
    move (archive, restore) found by the pickaxe, so edits made there are found too."""
    found: list[str] = []
    rev = "HEAD"
    for _ in range(8):  # an entry moves between files a handful of times at most
        if span is None:
            break
        path, first, last = span
        found.append(run(top, "log", fmt, f"-L{first},{last}:{path}", rev, check=False))
        arrival = run(top, "log", "-1", "--format=%H", f"-S{needle}", rev, "--", path,
                      check=False).strip()
        parent = run(top, "rev-parse", "-q", "--verify", f"{arrival}^", check=False).strip(
            ) if arrival else ""
        if not parent:
            break
        span = _span_at(top, parent, needle, [p for p in paths if p != path] + [path])
        rev = parent
    return found


def _span_at(top: Path, rev: str, needle: str, paths: list[str]) -> tuple[str, int, int] | None:
    """Where the entry `needle` is in commit `rev`: (path, first line, last line)."""
    for folder in paths:
        listing = run(top, "grep", "-l", "-F", f"id: {needle}", rev, "--", folder, check=False)
        for hit in listing.split("\n"):
            path = hit.split(":", 1)[1] if ":" in hit else ""
            text = run(top, "show", f"{rev}:{path}", check=False) if path else ""
            lines = text.split("\n")
            start = next((n for n, line in enumerate(lines) if line.lstrip("- ").startswith(
                f"id: {needle}")), None)
            if start is None:
                continue
            indent = len(lines[start]) - len(lines[start].lstrip())
            end = start + 1
            while end < len(lines) and not (lines[end][:indent + 2].strip() == "-" or (
                    lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) < indent)):
                end += 1
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            return path, start + 1, end
    return None


def file_at(top: Path, sha: str, path: str) -> str | None:
    """The text of `path` in commit `sha`; None when it is not there or not UTF-8 text (a
    version committed broken by accident)."""
    with _repo(top) as repo:  # closed: its `git cat-file` processes end with this call
        try:
            blob = repo.commit(sha).tree / path
        except (KeyError, ValueError):
            return None
        data: bytes = blob.data_stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def parent_of(top: Path, sha: str) -> str | None:
    with _repo(top) as repo:
        parents = repo.commit(sha).parents
        return parents[0].hexsha if parents else None


def file_bytes_at(top: Path, sha: str, path: str) -> bytes | None:
    """The bytes of `path` in commit `sha` exactly as committed, or None when it is not there."""
    result = _process(["git", "cat-file", "blob", f"{sha}:{path}"], cwd=top,
                       env=clean_env(), capture_output=True, check=False)
    return result.stdout if result.returncode == 0 else None


def last_commit_with(top: Path, path: str) -> str | None:
    """The newest commit whose tree holds `path`: the last commit that touched it, or that
    commit's parent when the touch was its deletion."""
    if not has_commits(top):
        return None
    last = run(top, "log", "-1", "--format=%H", "--", path, check=False).strip()
    if not last:
        return None
    if _git(top, ["cat-file", "-e", f"{last}:{path}"], None).returncode == 0:
        return last
    parent = run(top, "rev-parse", "-q", "--verify", f"{last}^", check=False).strip()
    return parent or None


def uncommitted(top: Path, paths: list[str]) -> set[str]:
    """Paths whose current bytes git could not give back: untracked, ignored or modified."""
    if not paths:
        return set()
    known = tracked(top, paths)
    changed = run(top, "status", "--porcelain", "-z", "--untracked-files=all", "--",
                      *paths, check=False)
    dirty = {record[3:] for record in changed.split("\0") if len(record) > 3}
    return {p for p in paths if p not in known or p in dirty}


# -- plumbing the merge driver, repair and purge share ----------------------------------------
def read_blobs(top: Path, rev: str, paths: list[str]) -> dict[str, str | None]:
    """`rev:path` for every path in one `git cat-file --batch` call (None when absent)."""
    request = "".join(f"{rev}:{p}\n" for p in paths).encode()
    out = _process(["git", "cat-file", "--batch"], cwd=top, env=clean_env(),
                    input=request, capture_output=True, check=True).stdout
    texts: dict[str, str | None] = {}
    position = 0
    for path in paths:
        end = out.index(b"\n", position)
        header = out[position:end].decode().split()
        position = end + 1
        if len(header) < 3 or header[1] != "blob":
            texts[path] = None
            continue
        size = int(header[2])
        texts[path] = out[position:position + size].decode("utf-8", "replace")
        position += size + 1
    return texts


def blob_text(top: Path, sha: str) -> str:
    """The text of blob `sha` ('' when git cannot read it)."""
    found: bytes = _process(["git", "cat-file", "blob", sha], cwd=top, env=clean_env(),
                            capture_output=True, check=False).stdout
    return found.decode("utf-8", "replace")


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
