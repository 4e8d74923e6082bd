"""The compiled checks shipped for some schemas (see `core.schemacheck`), and the exception they
raise: what fastjsonschema's own exception of that name carries, without importing
fastjsonschema."""

from __future__ import annotations

from typing import Any


class JsonSchemaValueException(ValueError):
    def __init__(self, message: str, value: Any = None, name: str | None = None,
                 definition: Any = None, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.value = value
        self.name = name
        self.definition = definition
        self.rule = rule


JsonSchemaValuesException = JsonSchemaValueException
