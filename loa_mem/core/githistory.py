"""Reading git history: the commits that touched an entry, files as they were in a past
commit, blobs by name, and where a shallow clone's history stops.

What it knows: how to find an entry in past commits (its `Loa-Id` trailer, the pickaxe on its
id, `git log -L` over its lines, following it back across the files it moved between) and how
to read a path at a commit. Running git and the facts of the repository as it is now are
`core.git`'s; this module only reads commits already made. GitPython is imported only by
`file_at` and `parent_of` (restore); everything else starts a `git` process through `core.git`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from loa_mem.core import git
from loa_mem.core.errors import NotARepo


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


def history(top: Path, needle: str, paths: list[str],
            span: tuple[str, int, int] | None = None) -> list[CommitInfo]:
    """Commits that touched an entry: those that name it in a trailer, added or removed its
    id under `paths`, or (with `span`, where it is now: path, first and last line) changed any
    of its lines, which finds hand edits and merges that carry no trailer."""
    if not git.has_commits(top):
        return []
    fmt = "--format=%x1e%H%x1f%aI%x1f%s"
    seen: dict[str, CommitInfo] = {}
    named = git.run(top, "log", fmt, f"--grep=^Loa-Id: {needle}$")
    outputs = [git.run(top, "log", fmt, f"-S{needle}", "--", *paths)]
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
    order = git.run(top, "rev-list", "HEAD").split()
    rank = {sha: n for n, sha in enumerate(order)}
    return sorted(seen.values(), key=lambda c: rank.get(c.sha, len(rank)))


def shallow_cuts(top: Path) -> set[str]:
    """The commits where a shallow clone's history stops (none in a full clone)."""
    common = git.run(top, "rev-parse", "--git-common-dir", check=False).strip()
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
        found.append(git.run(top, "log", fmt, f"-L{first},{last}:{path}", rev, check=False))
        arrival = git.run(top, "log", "-1", "--format=%H", f"-S{needle}", rev, "--", path,
                      check=False).strip()
        parent = git.run(top, "rev-parse", "-q", "--verify", f"{arrival}^", check=False).strip(
            ) if arrival else ""
        if not parent:
            break
        span = _span_at(top, parent, needle, [p for p in paths if p != path] + [path])
        rev = parent
    return found


def _span_at(top: Path, rev: str, needle: str, paths: list[str]) -> tuple[str, int, int] | None:
    """Where the entry `needle` is in commit `rev`: (path, first line, last line)."""
    for folder in paths:
        listing = git.run(top, "grep", "-l", "-F", f"id: {needle}", rev, "--", folder, check=False)
        for hit in listing.split("\n"):
            path = hit.split(":", 1)[1] if ":" in hit else ""
            text = git.run(top, "show", f"{rev}:{path}", check=False) if path else ""
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
    status, data = git.run_bytes(top, "cat-file", "blob", f"{sha}:{path}")
    return data if status == 0 else None


def last_commit_with(top: Path, path: str) -> str | None:
    """The newest commit whose tree holds `path`: the last commit that touched it, or that
    commit's parent when the touch was its deletion."""
    if not git.has_commits(top):
        return None
    last = git.run(top, "log", "-1", "--format=%H", "--", path, check=False).strip()
    if not last:
        return None
    if git.run_bytes(top, "cat-file", "-e", f"{last}:{path}")[0] == 0:
        return last
    parent = git.run(top, "rev-parse", "-q", "--verify", f"{last}^", check=False).strip()
    return parent or None


def commit_that_made(top: Path, path: str, before: Path, after: Path) -> str | None:
    """The commit whose change to `path` took it from the bytes of file `before` to those of
    file `after`: the commit a lone cherry-pick replays, which git names to no merge driver.
    Looked for among the latest `_PICKS` commits that changed `path` (on any branch, a stash
    or the reflog), by its blob and its parent's; None when none of them did that."""
    blobs = git.run(top, "hash-object", "--no-filters", str(before.absolute()),
                    str(after.absolute()), check=False).split()
    listed = git.run(top, "rev-list", "--all", "--reflog", "--parents",
                     f"--max-count={_PICKS}", "--", path, check=False).split("\n")
    pairs = [line.split()[:2] for line in listed if len(line.split()) > 1]
    if len(blobs) != 2 or not pairs:
        return None
    request = "".join(f"{sha}:{path}\n{parent}:{path}\n" for sha, parent in pairs)
    found = git.run(top, "cat-file", "--batch-check=%(objectname)", stdin=request,
                    check=False).split("\n")
    for number, (sha, _) in enumerate(pairs):
        if found[2 * number:2 * number + 2] == [blobs[1], blobs[0]]:
            return sha
    return None


# a cherry-pick replays a recent change: the search stops this far back in the file's history
_PICKS = 256


# -- blobs by name, for the merge driver and repair ---------------------------------------------
def read_blobs(top: Path, rev: str, paths: list[str]) -> dict[str, str | None]:
    """`rev:path` for every path in one `git cat-file --batch` call (None when absent)."""
    request = "".join(f"{rev}:{p}\n" for p in paths).encode()
    out = git.run_bytes(top, "cat-file", "--batch", stdin=request, check=True)[1]
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
    return git.run_bytes(top, "cat-file", "blob", sha)[1].decode("utf-8", "replace")


