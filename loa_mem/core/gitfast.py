"""The one git question the session-start hook asks, without the subprocess module.

`core.git` imports subprocess and dataclasses (~25 ms together); the hook reads the user's
e-mail from git's config to find their personal store, and must not pay that.
"""

from __future__ import annotations

import os


def user_email() -> str:
    """`git config --get user.email`, spawned without the subprocess module (and GitPython):
    importing them would cost the session-start hook ~25 ms. An enclosing hook's GIT_* paths
    are dropped, as `git.clean_env` does; GIT_CONFIG* is kept."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") or k.startswith("GIT_CONFIG")}
    argv = ["git", "config", "--get", "user.email"]
    if not hasattr(os, "posix_spawnp"):  # pragma: no cover - Windows
        import subprocess

        found = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        return found.stdout.strip()
    read, write = os.pipe()
    try:
        pid = os.posix_spawnp("git", argv, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_CLOSE, read),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(read)
        return ""
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as handle:
        out = handle.read()
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace").strip()
