"""jsonschema, behind one module, imported only by commands that validate something new."""

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


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = schemas.load(name)
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


def problems(schema_name: str, instance: Any) -> list[SchemaProblem]:
    found = []
    for error in _validator(schema_name).iter_errors(instance):
        path, message = _describe(error)
        found.append(SchemaProblem(path, message))
    return sorted(found, key=lambda p: [str(x) for x in p.path])
