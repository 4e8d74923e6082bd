"""What the integrations add to the store-wide commands (see `core.features`): the merge
driver's set-up at `loa-mem init`, and validate's word on memory files a sparse checkout
leaves out (they are not on disk, so nothing checked them)."""

from __future__ import annotations

from typing import Any


def on_init(store: Any) -> list[str]:
    from loa_mem.integrations.merge_driver import register_driver

    return register_driver(store)


def check(store: Any, paths: list[str] | None, counted: dict[str, int]) -> list[Any]:
    from loa_mem.core import git
    from loa_mem.memory.problems import Problem

    top = store.top
    if not any((place / "info" / "sparse-checkout").exists()
               for place in (git.git_dir(top), git.common_dir(top))):
        return []  # never a sparse checkout here: no git process
    folders = [store.config.storage_dir, store.config.archive_dir]
    listed = git.run(top, "ls-files", "-t", "-z", "--", *folders, check=False)
    return [Problem(path, 1, "sparse", "left out of this sparse checkout, so nothing checked it "
                    "(and recall does not see it); `git sparse-checkout add "
                    f"{path.rsplit('/', 1)[0]}` brings it back", severity="warning")
            for path in (r[2:] for r in listed.split("\0") if r.startswith("S "))
            if not (top / path).exists()]
