"""Semantic and hybrid recall on recall's fast path (before typer is imported): the same output
as the Typer command for every mode, and no import a recall does not need.

Each check runs loa-mem as a real process: the fast path lives in the process entry point.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, run_loa_mem
from tests.semantic_support import build_model
from tests.test_recall_fast import through_typer
from tests.test_semantic import FLAKY, POSTGRES, configure


@pytest.fixture
def semantic_cli(cli: Cli, store: Path, tmp_path: Path) -> Cli:
    configure(store, model=str(build_model(tmp_path)))
    return cli


def imported(root: Path, *args: str) -> set[str]:
    done = run_loa_mem(root, "recall", *args, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0, done.stderr
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


@pytest.fixture
def two(semantic_cli: Cli) -> dict[str, str]:
    return {"pg": support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95"),
            "flaky": support.remember(semantic_cli, FLAKY, "learning")}


MODES = [
    ("relational store", "--mode", "semantic"), ("relational store", "--mode", "hybrid"),
    ("postgresql tests", "--mode", "hybrid", "--explain"), ("relational store", "--json"),
    ("postgresql", "--mode=semantic", "--explain", "--json"), ("database", "--mode", "lexical"),
    ("relational store", "--mode", "hybrid", "-c", "learning", "--limit", "1"),
    # the Typer command answers these, with its own messages
    ("relational store", "--mode", "fuzzy"), ("relational store", "--mode"),
]


@pytest.mark.parametrize("args", MODES, ids=" ".join)
def test_every_mode_prints_what_the_typer_command_prints(
        store: Path, two: dict[str, str], args: tuple[str, ...]) -> None:
    run_loa_mem(store, "recall", "relational store", "--mode", "hybrid")  # vectors written
    fast = run_loa_mem(store, "recall", *args)
    slow = through_typer(store, *args)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode, slow.stdout, slow.stderr)


def test_a_mode_by_name_is_answered_without_typer(store: Path, two: dict[str, str]) -> None:
    run_loa_mem(store, "recall", "relational store", "--mode", "hybrid")
    done = run_loa_mem(store, "recall", "relational store", "--mode", "hybrid", "--json")
    assert json.loads(done.stdout)["results"][0]["id"] == two["pg"]
    modules = imported(store, "relational store", "--mode", "hybrid")
    assert "loa_mem.memory.semantic.fusion" in modules
    assert not {m.split(".")[0] for m in modules} & {"typer", "click", "rich", "platformdirs",
                                                     "tokenizers", "model2vec"}


def test_a_configured_mode_takes_the_fast_path_too(store: Path, two: dict[str, str]) -> None:
    configure(store, mode="semantic")
    fast = run_loa_mem(store, "recall", "relational store", "--json")
    assert json.loads(fast.stdout)["results"][0]["id"] == two["pg"]
    assert fast.stdout == through_typer(store, "relational store", "--json").stdout
    assert "typer" not in {m.split(".")[0] for m in imported(store, "relational store")}


def test_with_no_model_cached_auto_recall_imports_nothing_semantic(cli: Cli,
                                                                   store: Path) -> None:
    postgres = support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")
    run_loa_mem(store, "recall", "database")
    modules = imported(store, "database")
    assert not modules & {"numpy", "platformdirs", "loa_mem.memory.semantic.model",
                          "loa_mem.memory.semantic.vectors"}
    done = run_loa_mem(store, "recall", "database", "--json")
    assert [r["id"] for r in json.loads(done.stdout)["results"]] == [postgres]


def test_a_named_mode_with_no_model_cached_says_what_the_typer_command_says(
        cli: Cli, store: Path) -> None:
    support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")
    run_loa_mem(store, "recall", "database")
    fast = run_loa_mem(store, "recall", "database", "--mode", "hybrid")
    slow = through_typer(store, "database", "--mode", "hybrid")
    assert fast.returncode == slow.returncode == 1
    assert fast.stderr == slow.stderr and "HF_HUB_OFFLINE" in fast.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the rule computed on Linux")
@pytest.mark.parametrize("xdg", ["", "/tmp/somewhere-else", "   "])
def test_the_model_cache_is_where_platformdirs_puts_it(xdg: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    from loa_mem.memory import semantic

    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert semantic.cache_root() == os.path.join(platformdirs.user_cache_dir("loa-mem"),
                                                 "models")
