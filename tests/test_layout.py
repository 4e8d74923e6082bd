"""The code map holds: layers and cycles (import-linter), library use without the CLI, and each
rule defined in one place, its domain's rules module."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "loa_mem"
ENTRY_POINTS = {"__init__.py", "__main__.py", "entry.py"}


def test_the_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--config", str(PACKAGE.parent / "pyproject.toml")],
                          cwd=PACKAGE.parent, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout


def test_only_the_entry_points_sit_directly_in_the_package() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == ENTRY_POINTS


PROBE = """
import sys
from loa_mem.memory.store import Store
from loa_mem.memory.validate import validate

store = Store.open(sys.argv[1])
report = validate(store)
store.close()
loaded = [m for m in sys.modules
          if m.split(".")[0] in ("typer", "rich", "click") or m.startswith("loa_mem.cli")]
print(report.ok, loaded)
"""


def test_validate_as_a_library_loads_no_cli_module(store: Path) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, str(store)], capture_output=True,
                          text=True, check=False, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[]"]


def _definitions(path: Path) -> set[str]:
    """Names assigned at module or class level, and functions defined anywhere."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Module, ast.ClassDef)):
            for item in node.body:
                targets = (item.targets if isinstance(item, ast.Assign) else
                           [item.target] if isinstance(item, ast.AnnAssign) else [])
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


# rule: (its module, the names that define it there, its numbers as written: in no other module)
RULES = {
    "category floor": ("memory/rules.py", {"DEFAULT_RULES", "check_confidence"},
                       r"\b0\.9\b[^\n]*\bdecisions?\b|\bdecisions?\b[^\n]*\b0\.9\b"),
    "MDAN decay": ("agents/rules.py", {"decay_step", "decay_after_sessions"},
                   r"\bdecay_step\b\s*[:=][^\n]*0\.1\b"),
    "trust weights": ("trust/rules.py", {"WEIGHTS"},
                      r"[\"']impact[\"']\s*:\s*0\.4"),
    "recall score": ("memory/scoring.py", {"HALF_LIFE_DAYS", "TIER_SQL", "RECENCY_SQL", "ranked"},
                     r"WHEN 'high' THEN 0\.1"),
    "preference bands": ("people/rules.py", {"APPLY_AT", "SUGGEST_AT", "band"},
                         r"\b(APPLY_AT|SUGGEST_AT)\s*=\s*\d+"),
    "hotness": ("workingset/rules.py", {"WEIGHTS", "hotness", "ACTIONS"},
                r"[\"']recent_touches[\"']\s*:\s*0\.3"),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_is_defined_once_in_its_rules_module(rule: str) -> None:
    home, names, literal = RULES[rule]
    # the checks generated from the schemas repeat the schemas' defaults: not rules written
    modules = sorted(p for p in PACKAGE.rglob("*.py") if "compiled" not in p.parts)
    assert names <= _definitions(PACKAGE / home)
    written = [str(p.relative_to(PACKAGE)) for p in modules
               if re.search(literal, p.read_text(encoding="utf-8"))]
    assert written == [home]


def test_git_runs_only_from_core() -> None:
    """Every git process is started by `core` (git, githistory, gitstate, gitwrite, clonesetup,
    gitfast): a list literal or tuple that starts with "git" anywhere else is a git call that
    escaped."""
    escaped = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.List, ast.Tuple)) and node.elts and isinstance(
                    node.elts[0], ast.Constant) and node.elts[0].value == "git":
                escaped.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert escaped == []


def test_index_sql_lives_in_the_index_scoring_and_the_hook() -> None:
    """SQL over the derived index is written in `memory/index.py`, a whole new index in
    `memory/coldbuild.py` (its own connection to a temp file), the ranking in
    `memory/scoring.py` (shared with the hook) and `memory/neighbours.py` (lexical recall's
    session neighbours), the vectors in `memory/semantic/`, and the hook's own reads in
    `context/` (standard library only, so it cannot use the Index class)."""
    allowed = ("memory/index.py", "memory/coldbuild.py", "memory/scoring.py",
               "memory/neighbours.py", "memory/settler.py", "memory/semantic/",
               "context/")
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(allowed):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr in ("execute", "executemany", "executescript")):
                found.append(f"{rel}:{node.lineno}")
    assert found == []
