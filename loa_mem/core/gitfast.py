"""The one git question the session-start hook asks, without the subprocess module.

`core.git` imports subprocess and dataclasses (~25 ms together); the hook reads the user's
e-mail from git's config to find their personal store, and must not pay that.
"""

from __future__ import annotations

import os

from loa_mem.core import cachefile


def user_email() -> str:
    """`git config --get user.email`, spawned without the subprocess module (and GitPython):
    importing them would cost the session-start hook ~25 ms."""
    return (output(["config", "--get", "user.email"]) or "").strip()


def output(args: list[str], top: str | None = None) -> str | None:
    """What `git ARGS` (run in `top`) prints on stdout, or None when it fails or cannot start;
    spawned without the subprocess module. An enclosing hook's GIT_* paths are dropped, as
    `git.clean_env` does; GIT_CONFIG* is kept."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") or k.startswith("GIT_CONFIG")}
    argv = ["git", *(["-C", top] if top else []), *args]
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        found = subprocess.run(argv, env=env, capture_output=True, check=False)
        return found.stdout.decode("utf-8", "replace") if found.returncode == 0 else None
    read, write = os.pipe()
    try:
        pid = os.posix_spawnp("git", argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_CLOSE, read),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(read)
        return None
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as handle:
        out = handle.read()
    _, status = os.waitpid(pid, 0)
    return out.decode("utf-8", "replace") if os.waitstatus_to_exitcode(status) == 0 else None


# -- the answer kept between session starts ------------------------------------------------------
def cached_user_email(cache: str) -> str:
    """`user_email()`, kept in the file `cache` with the signature of every config file git
    may have read it from (system, global, the repository's own), the environment that names
    them, and the working directory. While none of them changed, the answer is read back
    instead of spawning git (~10-20 ms of the session-start hook). Whenever the answer cannot
    be vouched for this way, git is asked every time: an include or includeIf in any of those
    files (an included file's change would go unseen), GIT_CONFIG naming another file, a
    repository git might not find or might not trust (another file system, another owner)."""
    key = _config_key()
    if key is None:
        return user_email()
    saved = cachefile.read(cache)
    if type(saved) is tuple and len(saved) == 2 and saved[0] == key:
        return str(saved[1])
    email = user_email()
    if _config_key() == key and not _includes(key):  # unchanged while git read it
        cachefile.write(cache, (key, email))
    return email


Signature = tuple[int, int, int, int]
Key = tuple[tuple[tuple[str, str], ...], str, tuple[tuple[str, "Signature | None"], ...]]


def _config_key() -> Key | None:
    """What `git config --get user.email` depends on here: the GIT_CONFIG* environment, HOME
    and XDG_CONFIG_HOME, the working directory, and the signature of each config file (None
    for an absent one, so that creating it counts as a change). None when unsure."""
    env = os.environ
    if "GIT_CONFIG" in env:
        return None
    named = tuple(sorted((k, v) for k, v in env.items()
                         if k.startswith("GIT_CONFIG") or k in ("HOME", "XDG_CONFIG_HOME")))
    cwd = os.getcwd()
    repo = _repository_configs(cwd)
    if repo is None:
        return None
    files = [*_system_configs(), *_global_configs(), *repo]
    return named, cwd, tuple((path, _signature(path)) for path in files)


def _system_configs() -> list[str]:
    env = os.environ
    if env.get("GIT_CONFIG_NOSYSTEM", "").lower() in ("1", "true", "yes", "on"):
        return []
    if env.get("GIT_CONFIG_SYSTEM"):
        return [env["GIT_CONFIG_SYSTEM"]]
    # /etc/gitconfig for a git installed under /usr, <prefix>/etc/gitconfig for another prefix
    found = ["/etc/gitconfig"]
    for folder in env.get("PATH", "").split(os.pathsep):
        if folder and os.access(os.path.join(folder, "git"), os.X_OK):
            real = os.path.realpath(os.path.join(folder, "git"))
            found.append(os.path.join(os.path.dirname(os.path.dirname(real)), "etc", "gitconfig"))
            break
    return found


def _global_configs() -> list[str]:
    env = os.environ
    if env.get("GIT_CONFIG_GLOBAL"):
        return [env["GIT_CONFIG_GLOBAL"]]
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]


def _repository_configs(cwd: str) -> list[str] | None:
    """The config files of the repository git finds from `cwd` ([] outside any), or None
    where git's discovery might differ from this walk (a bare repository, a file-system
    boundary, a repository owned by another account, which git refuses to read)."""
    current = os.path.realpath(cwd)
    device = os.stat(current).st_dev
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.lexists(dot_git):
            break
        if os.path.isfile(os.path.join(current, "HEAD")) and os.path.isdir(
                os.path.join(current, "objects")):
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return []
        if os.stat(parent).st_dev != device:
            return None
        current = parent
    if hasattr(os, "geteuid") and os.stat(current).st_uid != os.geteuid():
        return None
    git_dir = dot_git
    if os.path.isfile(dot_git):
        with open(dot_git, encoding="utf-8") as handle:
            pointer = handle.read().strip()
        if not pointer.startswith("gitdir:"):
            return None
        git_dir = os.path.normpath(os.path.join(current, pointer.split(":", 1)[1].strip()))
    common = git_dir
    if os.path.isfile(os.path.join(git_dir, "commondir")):
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    return [os.path.join(common, "config"), os.path.join(git_dir, "config.worktree")]


def _signature(path: str) -> Signature | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_ctime_ns, found.st_size, found.st_ino


def _includes(key: Key) -> bool:
    """Whether any of the config files has an include or includeIf section (or cannot be
    read to tell)."""
    for path, signature in key[2]:
        if signature is None:
            continue
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", "replace").lower()
        except OSError:
            return True
        if "[include" in "".join(text.split()):
            return True
    return False
