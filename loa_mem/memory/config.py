"""`.loa.config.yaml`: defaults, validation against `config.schema.json`, and a cache.

Precedence: the file overrides the defaults key by key. A validated copy is cached beside the
index (outside git) keyed by the file's size and mtime, so that commands whose cache is fresh
import neither YAML nor jsonschema.
"""

from __future__ import annotations

import contextlib
import copy
import os
from pathlib import Path
from typing import Any, NamedTuple

from loa_mem.core import cachefile
from loa_mem.core.errors import ConfigError, SwitchedOff
from loa_mem.memory.rules import CATEGORIES, DEFAULT_RULES, CategoryRule

CONFIG_FILE = ".loa.config.yaml"
MAX_LOCK_TIMEOUT = 600  # as git.lock_timeout_seconds in config.schema.json

DEFAULTS: dict[str, Any] = {
    "memory_schema": {
        "enabled": True,
        "storage_dir": "grimoires/loa/memory",
        "categories": {r.name: {"ttl": r.ttl, "confidence_required": r.floor,
                                "storage_file": r.storage_file} for r in DEFAULT_RULES},
        "auto_capture": {"decisions": True, "errors": True, "learnings": True},
        "retrieval": {"max_per_query": 10, "min_confidence": 0.6, "recency_weight": 0.2,
                      "integrate_with_oracle": True},
        "lifecycle": {"auto_archive": True, "archive_dir": "grimoires/loa/memory/archive",
                      "check_on_session_start": True, "warn_before_archive_days": 7,
                      "archive_retention_days": None},
    },
}
CAPTURE_SOURCES = ("decisions", "errors", "learnings")

BUILTIN: dict[str, Any] = {"git": {"auto_commit": True, "lock_timeout_seconds": 10}}
# The session-start block (read by loa_mem.context.block.settings).
BUILTIN["context"] = {"budget_tokens": 2000, "per_category": 5}
# The working set of spec section 7 (read by loa_mem.workingset.manifests.Settings).
BUILTIN["working_set"] = {
    "dir": "grimoires/loa/working-set", "summaries_dir": "grimoires/loa/summaries",
    "archive_dir": "grimoires/loa/working-set/archive", "untouched_turns": 10,
    "untouched_minutes": 120, "defer_turns": 1, "summarize_over_lines": 500,
    "context_budget": None, "keep": [
        # what the user ships, never evicted: the constitution, a deliverables folder, the
        # project's README, changelog and licence (a `keep` in the config replaces this list)
        "**/constitution.md", "**/CONSTITUTION.md", "**/deliverables/**", "README.md",
        "CHANGELOG.md", "LICENSE*"],
    "summarizer": {"command": None, "timeout_seconds": 120},
}
# Agent sidecars and sessions: where they live. The MDAN rules' numbers (caps, decay,
# thresholds) default in loa_mem.agents.rules.Settings, and only there.
BUILTIN["agents"] = {"dir": "grimoires/loa/agents",
                     "state_index": "grimoires/loa/MDAN-STATE.json"}
# The trust memory: its numbers default in loa_mem.trust.rules.Settings, and only there.
BUILTIN["trust"] = {}
# Auto-capture (`loa-mem capture`): where the Decision Protocol file is, how much of a failed
# command's stderr an error memory keeps.
BUILTIN["capture"] = {"decisions_file": "grimoires/loa/decisions.yaml", "stderr_lines": 5}


class Config(NamedTuple):
    data: dict[str, Any]

    @property
    def memory(self) -> dict[str, Any]:
        section: dict[str, Any] = self.data["memory_schema"]
        return section

    @property
    def storage_dir(self) -> str:
        return str(self.memory["storage_dir"])

    @property
    def archive_dir(self) -> str:
        return str(self.memory["lifecycle"]["archive_dir"])

    @property
    def retrieval(self) -> dict[str, Any]:
        section: dict[str, Any] = self.memory["retrieval"]
        return section

    @property
    def lifecycle(self) -> dict[str, Any]:
        section: dict[str, Any] = self.memory["lifecycle"]
        return section

    @property
    def enabled(self) -> bool:
        return bool(self.memory.get("enabled", True))

    def require_memory(self, command: str) -> None:
        """Refuse a Loa memory command when `memory_schema.enabled` is false."""
        if not self.enabled:
            raise SwitchedOff(f"Loa memory is switched off ({CONFIG_FILE}: memory_schema."
                              f"enabled: false), so `loa-mem {command}` does nothing",
                              "set memory_schema.enabled: true to use it")

    @property
    def capture(self) -> dict[str, Any]:
        return {**BUILTIN["capture"], **self.section("capture")}

    def captures(self, source: str) -> bool:
        """Whether `memory_schema.auto_capture.<source>` is on (and memory itself is)."""
        return self.enabled and bool(self.memory["auto_capture"].get(source, True))

    def rule(self, category: str) -> CategoryRule:
        raw = self.memory["categories"][category]
        return CategoryRule(category, raw["ttl"], float(raw["confidence_required"]),
                            raw["storage_file"])

    def rules(self) -> list[CategoryRule]:
        return [self.rule(c) for c in CATEGORIES]

    def section(self, name: str) -> dict[str, Any]:
        value: dict[str, Any] = self.data.get(name) or {}
        return value

    @property
    def auto_commit(self) -> bool:
        return bool(self.data["git"]["auto_commit"])

    @property
    def lock_timeout(self) -> float:
        configured = self.data["git"]["lock_timeout_seconds"]
        given = os.environ.get("LOA_MEM_LOCK_TIMEOUT")
        if not given:
            return float(configured)
        try:
            seconds = float(given)
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds <= MAX_LOCK_TIMEOUT:  # also refuses nan and inf
            raise ConfigError(f"LOA_MEM_LOCK_TIMEOUT={given!r} is not a number of seconds",
                              f"use 0 to {MAX_LOCK_TIMEOUT}, for example 10, or unset it")
        return seconds


def merged(overrides: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merged(value, result[key])
        else:
            result[key] = value
    return result


def default_config() -> Config:
    return Config(merged(DEFAULTS, BUILTIN))


def _check(raw: Any) -> dict[str, Any]:
    from loa_mem.core import schemacheck

    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{CONFIG_FILE}: the top level must be a mapping",
                          "start from the file `loa-mem init` writes")
    found = schemacheck.problems("config.schema.json", raw)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ConfigError(f"{CONFIG_FILE}: {first.dotted or '(top level)'}: {first.message}{more}",
                          "fix the key or remove it to use the default")
    data = merged(raw, merged(DEFAULTS, BUILTIN))
    files = [c["storage_file"] for c in data["memory_schema"]["categories"].values()]
    if len(set(files)) != len(files):
        raise ConfigError(f"{CONFIG_FILE}: memory_schema.categories: two categories share a "
                          "storage_file", "give each category its own file")
    if data["memory_schema"]["storage_dir"] == data["memory_schema"]["lifecycle"]["archive_dir"]:
        raise ConfigError(f"{CONFIG_FILE}: memory_schema.lifecycle.archive_dir equals storage_dir",
                          "archive into a separate directory")
    return data


def load(root: Path, cache_dir: Path | None = None) -> Config:
    path = root / CONFIG_FILE
    try:
        stat = path.stat()
    except FileNotFoundError:
        return default_config()
    signature = [stat.st_mtime_ns, stat.st_size]
    cache_file = str(cache_dir / cachefile.CONFIG) if cache_dir else None
    if cache_file is not None:
        cached = cachefile.read(cache_file)
        if isinstance(cached, dict) and cached.get("signature") == signature:
            return Config(cached["config"])
    from loa_mem.core import textfile, yamlfast
    from loa_mem.core.errors import InvalidFile

    try:
        text = textfile.read_text(path, CONFIG_FILE)
        raw = yamlfast.load_mapping(text)
        if raw is None:  # another form of YAML, or not YAML: the full parser (and its errors)
            from loa_mem.core import yamlio

            raw = yamlio.load(text, CONFIG_FILE)
        data = _check(raw)
    except InvalidFile as error:  # not text, not YAML, a directory: the config's problem
        raise ConfigError(error.message, error.hint) from None
    if cache_file is not None:
        with contextlib.suppress(ValueError):  # a value marshal cannot keep: read it each time
            cachefile.write(cache_file, {"signature": signature, "config": data})
    return Config(data)
