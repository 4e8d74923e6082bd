"""The command catalog that lets loa-mem build only the command it runs must match the code."""

from __future__ import annotations

import json
from pathlib import Path

from loa_mem.cli import catalog
from tests.conftest import Cli


def test_catalog_json_matches_the_registered_commands() -> None:
    on_disk = json.loads(Path(catalog.__file__).with_name("catalog.json").read_text("utf-8"))
    assert on_disk == catalog.generate(), (
        "loa_mem/cli/catalog.json is stale: run `python -m loa_mem.cli.catalog`")


def test_help_lists_every_command_of_every_feature(cli: Cli) -> None:
    listed = cli.ok("--help").stdout
    for name in catalog.generate():
        assert f"  {name} " in listed or f"  {name}\n" in listed, name


def test_an_unknown_command_is_a_usage_error(cli: Cli) -> None:
    outcome = cli("no-such-command")
    assert outcome.code == 2
    assert outcome.stderr.startswith("loa-mem: usage: no such command 'no-such-command'")
