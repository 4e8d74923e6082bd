"""The config is read without PyYAML or a schema compiled at run time when it can be: the fast
reader gives exactly what the full YAML parser gives (or leaves the file to it), and the
compiled checks shipped for the schemas give the same verdicts as checks compiled from them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import schemacheck, schemas, yamlfast, yamlio
from loa_mem.core.errors import InvalidFile
from tests.support import typed

ODD_VALUES = ["yes", "No", "null", "~", "0.8", "1", "007", "-1", ".5", "1e3", "0x1F", "1:20",
              "90d", "facts.yaml", "a b", "x#y", "x #y", "'q'", "[a, b]", "[]", "{}", "a: b",
              "2026-01-01", "grimoires/loa/memory", "&a x", "*a", "!!str 5", "|", "-", "- x",
              "true", "FALSE", "on", "permanent", ""]
KEYS = st.sampled_from(["memory_schema", "enabled", "ttl", "storage_file", "retrieval",
                        "max_per_query", "mode", "keep", "a", "B_2", "x-y", "1", "on"])
SPACES = st.sampled_from([" ", "  ", "       "])


def same(text: str) -> None:
    found = yamlfast.load_mapping(text)
    if found is None:
        return  # left to the full parser
    try:
        expected: Any = yamlio.load(text, ".loa.config.yaml")
    except InvalidFile as error:
        raise AssertionError(f"the fast reader read a file the parser refuses: {error}") from None
    assert typed(found) == typed(expected)


@st.composite
def flow_mappings(draw: st.DrawFn) -> str:
    pairs = draw(st.lists(st.tuples(KEYS, st.sampled_from(ODD_VALUES)), max_size=4))
    pad = draw(st.sampled_from(["", " "]))
    return "{" + pad + ", ".join(f"{k}:{draw(SPACES)}{v}" for k, v in pairs) + pad + "}"


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from([[], ["# loa-mem project configuration"]]))
    for name in draw(st.lists(KEYS, min_size=1, max_size=4)):
        lines.append(f"{name}:")
        for inner in draw(st.lists(KEYS, max_size=4)):
            value = draw(st.one_of(st.sampled_from(ODD_VALUES), flow_mappings()))
            lines.append(f"  {inner}:{draw(SPACES)}{value}".rstrip())
            if draw(st.booleans()):
                lines.append(draw(st.sampled_from(["", "  # a note", "    - item", "  x"])))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


@settings(max_examples=400, deadline=None)
@given(text=documents())
def test_a_config_reads_as_the_yaml_parser_reads_it(text: str) -> None:
    same(text)


def test_the_config_init_writes_is_read_without_the_parser(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    loa_mem = str(Path(sys.executable).with_name("loa-mem"))
    subprocess.run([loa_mem, "init"], cwd=tmp_path, check=True, capture_output=True)
    text = (tmp_path / ".loa.config.yaml").read_text(encoding="utf-8")
    found = yamlfast.load_mapping(text)
    assert found is not None
    assert typed(found) == typed(yamlio.load(text, ".loa.config.yaml"))


@pytest.mark.parametrize("text", [
    "a: {b: 1, b: 2}\n", "a: {b: 1,}\n", "a: {b: [c]}\n", "a: {b: 'c'}\n", "a: {b: c:d}\n",
    "a: {b 1}\n", "a: {b: 1}}\n", "a: {b: 1\n", "---\na: 1\n", "a: 1\n---\nb: 2\n", "a: 1\na: 2\n",
    "- a\n", "", "# only a comment\n", "a:\tb\n", "\ufeffa: 1\n", "a: 1 # note\n", "a: &x 1\n",
])
def test_other_forms_are_left_to_the_parser_or_read_the_same(text: str) -> None:
    same(text)


@pytest.mark.parametrize("name", schemacheck.GENERATED)
def test_the_shipped_checks_are_those_the_schemas_compile_to(name: str) -> None:
    expected = schemacheck.generated_text(name)
    assert schemacheck.compiled_path(name).read_text(encoding="utf-8") == expected, (
        "regenerate them: python -m loa_mem.core.schemacheck")


@pytest.mark.parametrize("name", schemacheck.GENERATED)
def test_a_shipped_check_is_used_only_for_the_schema_text_it_was_made_from(name: str) -> None:
    text = schemas.text(name)
    assert schemacheck.shipped(name, text) is not None
    assert schemacheck.shipped(name, text.replace('"type"', '"type" ', 1)) is None


CONFIG_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 2000), st.floats(-1, 2),
              st.sampled_from(["permanent", "90d", "0d", "facts.yaml", "x.txt", "../up", "/abs",
                               "lexical", "semantic", "", "a\n"])),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(
        st.sampled_from(["ttl", "storage_file", "confidence_required", "enabled", "mode",
                         "keep", "colour"]), inner, max_size=3), max_leaves=6)
SECTIONS = st.fixed_dictionaries({}, optional={
    "memory_schema": st.fixed_dictionaries({}, optional={
        "enabled": CONFIG_VALUES, "storage_dir": CONFIG_VALUES,
        "categories": st.dictionaries(st.sampled_from(["fact", "error", "colour"]),
                                      CONFIG_VALUES, max_size=2),
        "retrieval": st.dictionaries(st.sampled_from(["max_per_query", "mode", "min_confidence",
                                                      "dimensions"]), CONFIG_VALUES,
                                     max_size=2)}),
    "git": CONFIG_VALUES, "context": CONFIG_VALUES, "colour": CONFIG_VALUES})


@settings(max_examples=300, deadline=None)
@given(config=SECTIONS)
def test_the_shipped_check_gives_the_verdict_of_the_compiled_schema(config: dict[str, Any]
                                                                    ) -> None:
    import copy

    import fastjsonschema

    compiled = fastjsonschema.compile(schemacheck._fast_schema("config.schema.json"))
    shipped = schemacheck.shipped("config.schema.json", schemas.text("config.schema.json"))
    mine, theirs = copy.deepcopy(config), copy.deepcopy(config)
    try:
        compiled(theirs)
        expected: Any = theirs  # with the defaults it fills in
    except fastjsonschema.JsonSchemaException as error:
        expected = str(error)
    try:
        shipped(mine)
        found: Any = mine
    except ValueError as error:
        found = str(error)
    assert typed(found) == typed(expected)


def test_a_fresh_clone_reads_its_config_without_yaml_or_a_schema_compiler(tmp_path: Path
                                                                          ) -> None:
    origin, clone = tmp_path / "origin", tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    loa_mem = str(Path(sys.executable).with_name("loa-mem"))
    env = {**os.environ, "LOA_MEM_NOW": "2026-11-22T12:00:00Z"}
    for command in (["init"], ["remember", "Staging runs on eu-west-1.", "-c", "fact"]):
        subprocess.run([loa_mem, *command], cwd=origin, check=True, capture_output=True, env=env)
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    code = ("import sys; from loa_mem.entry import main\n"
            "try:\n    main(['recall', 'staging'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('yaml', 'fastjsonschema', 'jsonschema') if m in "
            "sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], cwd=clone, capture_output=True,
                          text=True, env=env, check=True)
    assert "eu-west-1" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"
