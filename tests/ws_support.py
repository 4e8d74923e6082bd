"""Helpers for the working-set tests: files in the project, the manifests and sidecars as a user
reads them, and the events loa-mem logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loa_mem.core import yamlio
from tests.conftest import git

WS = "grimoires/loa/working-set"
SUMMARIES = "grimoires/loa/summaries"
ARCHIVE = "grimoires/loa/working-set/archive"


def write(root: Path, rel: str, data: str | bytes, commit: bool = True) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    if commit:
        git(root, "add", "--", rel)
        git(root, "commit", "-q", "-m", f"add {rel}", "--", rel)
    return path


def yaml_file(root: Path, rel: str) -> Any:
    return yamlio.load((root / rel).read_text(encoding="utf-8"), rel)


def hot(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml_file(root, f"{WS}/hot.yml")
    return data


def cold(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml_file(root, f"{WS}/cold.yml")
    return data


def hot_paths(root: Path) -> list[str]:
    path = root / WS / "hot.yml"
    return [i["path"] for i in hot(root)["keep"]] if path.exists() else []


def cold_paths(root: Path) -> list[str]:
    path = root / WS / "cold.yml"
    return [i["path"] for i in cold(root)["evict"]] if path.exists() else []


def sidecar(root: Path, rel: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml_file(root, rel + ".meta.yml")
    return data


def taken(outcome_json: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """path -> (action_taken, reason) from an advise --json answer."""
    return {a["path"]: (a["action_taken"], a["reason"]) for a in outcome_json["memory_actions"]}


def config(root: Path, working_set_yaml: str) -> None:
    """Append a working_set section to the store's config and commit it."""
    path = root / ".loa.config.yaml"
    text = path.read_text(encoding="utf-8") + "working_set:\n" + "".join(
        f"  {line}\n" for line in working_set_yaml.strip("\n").splitlines())
    write(root, ".loa.config.yaml", text)
