"""The screen loads only the parts of its libraries it uses (see `core.detectors`): it finds the
same things, at the same places, as with each library imported whole."""

from __future__ import annotations

import json
import subprocess
import sys

from tests import secret_corpus, secret_corpus_harmless, secret_corpus_wild

_SCAN = """
import json, sys
if sys.argv[1] == "whole":
    import detect_secrets, detect_secrets.filters, phonenumbers, pydoc, requests, ssl, stdnum.util
from loa_mem.core.sensitive import scan
texts = json.load(sys.stdin)
print(json.dumps([[[f.kind, f.start] for f in scan(text)] for text in texts]))
loaded = set(sys.modules)
print(json.dumps(sorted(m for m in ("multiprocessing", "requests", "pydoc", "ssl",
                                    "detect_secrets.core.secrets_collection",
                                    "phonenumbers.asyoutypeformatter") if m in loaded)))
"""


def _scan(texts: list[str], how: str) -> tuple[list[object], list[str]]:
    done = subprocess.run([sys.executable, "-c", _SCAN, how], input=json.dumps(texts),
                          capture_output=True, text=True, check=True)
    found, loaded = done.stdout.splitlines()
    return json.loads(found), json.loads(loaded)


def test_the_screen_finds_the_same_as_with_the_libraries_imported_whole() -> None:
    texts = [text for _, text, _ in secret_corpus.secrets() + secret_corpus.personal_data()]
    texts += secret_corpus.look_alikes()
    texts += [text for _, text, _ in secret_corpus_wild.secrets()]
    texts += secret_corpus_harmless.look_alikes()
    texts += ["Bench note 10000-3-1795638359174460799.", "Released on 2026-11-22 as v3.11.7."]
    lean, loaded = _scan(texts, "lean")
    whole, _ = _scan(texts, "whole")
    assert lean == whole
    assert sum(1 for found in lean if found) >= 60
    assert loaded == []


def test_the_keyword_plugin_is_asked_only_about_lines_with_one_of_its_words() -> None:
    from detect_secrets.plugins.keyword import DENYLIST

    from loa_mem.core.detectors import KEYWORD_WORDS

    for pattern in DENYLIST:
        for spelled in (pattern.replace("_?", "_"), pattern.replace("_?", "")):
            assert KEYWORD_WORDS.search(spelled), spelled
            assert KEYWORD_WORDS.search(spelled.upper()), spelled
