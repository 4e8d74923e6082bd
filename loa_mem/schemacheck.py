"""Schema validation, behind one module, imported only by commands that validate something.

Two libraries, one per job: fastjsonschema compiles a schema into Python code and accepts a
valid entry in microseconds (jsonschema takes ~0.5 ms here, 5 s for 10,000 entries, more than the
whole `validate` budget); jsonschema then explains, with every error and its path, the few
instances the compiled check rejects.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from loa_mem import schemas


@dataclass(frozen=True)
class SchemaProblem:
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


def _describe(error: Any) -> tuple[tuple[str | int, ...], str]:
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        if extra:
            return (*path, extra[0]), f"unknown key {extra[0]!r}"
    if error.validator == "oneOf" and error.context:
        best = min(error.context, key=lambda e: len(e.message))
        return path, best.message
    if error.validator == "pattern":
        return path, f"{error.instance!r} does not have the expected form"
    return path, error.message


@cache
def _fast(name: str) -> Any:
    import fastjsonschema

    schema = dict(_python_anchors(schemas.load(name)))
    # Same keywords in draft 7, which is the newest draft fastjsonschema implements.
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    return fastjsonschema.compile(schema)


def problems(schema_name: str, instance: Any) -> list[SchemaProblem]:
    import fastjsonschema

    try:
        _fast(schema_name)(instance)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    found = []
    for error in _validator(schema_name).iter_errors(instance):
        path, message = _describe(error)
        found.append(SchemaProblem(path, message))
    return sorted(found, key=lambda p: [str(x) for x in p.path])
