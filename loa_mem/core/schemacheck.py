"""Schema validation, behind one module, imported only by commands that validate something.

Two libraries, one per job: fastjsonschema compiles a schema into Python code and accepts a
valid entry in microseconds (jsonschema takes ~0.5 ms here, 5 s for 10,000 entries, more than the
whole `validate` budget); jsonschema then explains, with every error and its path, the few
instances the compiled check rejects.

Compiling a schema into code takes 50-130 ms (code generation, then Python's compiler), which
every command whose config cache is stale (a fresh clone) would pay first: the schemas in
`GENERATED` ship their compiled check as a module (`schemas/compiled/`, written by
`python -m loa_mem.core.schemacheck`; a test holds them to the schemas), used while it carries
the hash of the schema text it was made from; otherwise the check is compiled at run time, as
for the other schemas.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from loa_mem.core import schemas


class SchemaProblem(NamedTuple):
    path: tuple[str | int, ...]
    message: str

    @property
    def dotted(self) -> str:
        return ".".join(str(p) for p in self.path)


def _python_anchors(node: Any) -> Any:
    """The schema with each pattern's final `$` made `\\Z`. Both validators match patterns with
    Python's `re`, whose `$` also matches before a final newline, so `^[a-z]+$` would accept
    "ok\\n"; JSON Schema means the end of the string (ECMA-262), which is `\\Z` in Python."""
    if isinstance(node, dict):
        return {key: (value[:-1] + "\\Z" if key == "pattern" and isinstance(value, str)
                      and value.endswith("$") and not value.endswith("\\$")
                      else _python_anchors(value))
                for key, value in node.items()}
    if isinstance(node, list):
        return [_python_anchors(item) for item in node]
    return node


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = _python_anchors(schemas.load(name))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


_BOUNDS = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
           "exclusiveMaximum": "less than"}
_SIZES = {"minLength": ("at least", "characters"), "maxLength": ("at most", "characters"),
          "minItems": ("at least", "items"), "maxItems": ("at most", "items")}


_KEY_SHAPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,39}$")


def _safe_to_name(key: Any) -> bool:
    """A misspelt key is named ("unknown key 'colour'") when it is shaped like a key and the
    screen finds nothing in it; anything else is described, not shown."""
    from loa_mem.core.sensitive import scan

    return isinstance(key, str) and bool(_KEY_SHAPE.match(key)) and not scan(key)


def _describe(error: Any) -> tuple[tuple[str | int, ...], str]:
    """What is wrong and where, never the value itself: a value in the wrong place may be a
    secret, and these messages reach terminals, CI logs and MCP clients."""
    path = tuple(error.absolute_path)
    rule, expected = error.validator, error.validator_value
    if rule == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        if extra and _safe_to_name(extra[0]):
            return (*path, extra[0]), f"unknown key {extra[0]!r}"
        return path, "has a key the schema does not know (check its spelling)"
    if rule in ("oneOf", "anyOf") and error.context:
        return path, "does not match any of the allowed forms"
    if rule == "required":
        return path, str(error.message)  # names the schema's own key, never the input's
    if rule == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return path, f"must be of type {' or '.join(map(str, kinds))}"
    if rule == "enum":
        return path, f"must be one of: {', '.join(map(str, expected))}"
    if rule in _BOUNDS:
        return path, f"must be {_BOUNDS[rule]} {expected}"
    if rule in _SIZES:
        bound, unit = _SIZES[rule]
        return path, f"must have {bound} {expected} {unit}"
    if rule in ("pattern", "format"):
        return path, "does not have the expected form"
    return path, f"breaks the schema rule {rule!r}"


def _fast_schema(name: str) -> dict[str, Any]:
    schema = dict(_python_anchors(schemas.load(name)))
    # Same keywords in draft 7, which is the newest draft fastjsonschema implements.
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    return schema


@cache
def _fast(name: str) -> Any:
    shipped = _shipped(name)
    if shipped is not None:
        return shipped
    import fastjsonschema

    return fastjsonschema.compile(_fast_schema(name))


GENERATED = ("config.schema.json", "memory.schema.json")
_COMPILED = f"{schemas.__name__}.compiled"
_IMPORT = "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n"


def compiled_path(name: str) -> Path:
    """Where the shipped check of a schema of `GENERATED` is."""
    return Path(schemas.__file__).parent / "compiled" / f"{name.partition('.')[0]}.py"


def generated_text(name: str) -> str:
    """The source of a schema's shipped check: fastjsonschema's code for it, raising the
    exception of `schemas.compiled` (importing fastjsonschema would cost ~10 ms)."""
    import fastjsonschema

    code = fastjsonschema.compile_to_code(_fast_schema(name))
    if _IMPORT not in code:
        raise RuntimeError(f"fastjsonschema's code for {name} no longer imports its exceptions"
                           " as schemacheck.generated_text expects")
    own = _IMPORT.replace("fastjsonschema", _COMPILED)
    return (f'"""Generated by `python -m loa_mem.core.schemacheck` from {name}: do not edit."""\n'
            f"# ruff: noqa\n# mypy: ignore-errors\nSCHEMA_DIGEST = {_digest(schemas.text(name))}\n"
            + code.replace(_IMPORT, own))


def _digest(text: str) -> int:
    from loa_mem.core import spanhash

    return spanhash.digest(text)


def _shipped(name: str) -> Any:
    return shipped(name, schemas.text(name)) if name in GENERATED else None


def shipped(name: str, text: str) -> Any:
    """The shipped check of the schema `name` when it was made from the schema text `text`,
    else None."""
    import importlib

    try:
        module = importlib.import_module(f"{_COMPILED}.{name.partition('.')[0]}")
    except ImportError:
        return None
    if getattr(module, "SCHEMA_DIGEST", None) != _digest(text):
        return None
    # fastjsonschema names the function after the schema's $id
    function = re.sub(r"[^a-zA-Z0-9_]", "_", str(schemas.load(name).get("$id", "")))
    return getattr(module, f"validate_{function}", None)


def problems(schema_name: str, instance: Any) -> list[SchemaProblem]:
    try:
        _fast(schema_name)(instance)
        return []
    except ValueError:  # the check's exception: fastjsonschema's, or `schemas.compiled`'s
        pass
    found = []
    for error in _validator(schema_name).iter_errors(instance):
        path, message = _describe(error)
        found.append(SchemaProblem(path, message))
    return sorted(found, key=lambda p: [str(x) for x in p.path])


if __name__ == "__main__":
    for generated in GENERATED:
        compiled_path(generated).write_text(generated_text(generated), encoding="utf-8")
        print(f"wrote {compiled_path(generated)}")
