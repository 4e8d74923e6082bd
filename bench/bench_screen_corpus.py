"""Detection and false-refusal rates of the secret screen on the labelled corpora.

Scans every case of tests/secret_corpus.py (one clean case per provider, personal data,
look-alikes), tests/secret_corpus_wild.py (secrets as they turn up in configs, command lines and
prose) and tests/secret_corpus_harmless.py (texts that only look like secrets), and prints, per
corpus, how many secrets were found and how many harmless texts were refused, with the names of
the cases that went wrong.

    .venv/bin/python bench/bench_screen_corpus.py
    .venv/bin/python bench/bench_screen_corpus.py --code /path/to/other/checkout   # compare

`--code` scans with the `loa_mem` package of another checkout (an older commit, say) against
this checkout's corpora, so a before/after comparison reads the same cases.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose loa_mem package scans (default: this one)")
    parser.add_argument("--quiet", action="store_true", help="the table only, no case names")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests import secret_corpus, secret_corpus_harmless, secret_corpus_wild

    sys.path.insert(0, str(args.code.resolve()))  # the corpora stay this checkout's
    from loa_mem.core.sensitive import scan

    secrets = {
        "secret_corpus: secrets": secret_corpus.secrets(),
        "secret_corpus: personal data": secret_corpus.personal_data(),
        "secret_corpus_wild: secrets": secret_corpus_wild.secrets(),
    }
    harmless = {
        "secret_corpus: look-alikes": secret_corpus.look_alikes(),
        "secret_corpus_harmless: look-alikes": secret_corpus_harmless.look_alikes(),
    }
    print(f"scanning with {Path(sys.modules['loa_mem'].__file__ or '').parent.parent}")
    print(f"{'corpus':40} {'cases':>6} {'found':>6} {'rate':>7}")
    missed: list[str] = []
    total = found_total = 0
    for name, cases in secrets.items():
        through = [case for case, text, _ in cases if not scan(text)]
        found = len(cases) - len(through)
        total, found_total = total + len(cases), found_total + found
        missed += through
        print(f"{name:40} {len(cases):>6} {found:>6} {found / len(cases):>7.1%}")
    print(f"{'all secrets and personal data':40} {total:>6} {found_total:>6} "
          f"{found_total / total:>7.1%}")
    print(f"\n{'corpus':40} {'texts':>6} {'refused':>7} {'rate':>6}")
    refused: list[str] = []
    total = refused_total = 0
    for name, texts in harmless.items():
        wrong = [text for text in texts if scan(text)]
        total, refused_total = total + len(texts), refused_total + len(wrong)
        refused += wrong
        print(f"{name:40} {len(texts):>6} {len(wrong):>7} {len(wrong) / len(texts):>6.1%}")
    print(f"{'all look-alikes':40} {total:>6} {refused_total:>7} "
          f"{refused_total / total:>6.1%}")
    if not args.quiet:
        for case in missed:
            print(f"missed: {case}")
        for text in refused:  # harmless by construction: safe to print
            print(f"refused: {text[:90]!r}")


if __name__ == "__main__":
    main()
