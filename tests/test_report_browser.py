"""The report in a real browser: headless Chromium opens the file from disk with the network
off, and the page must render (no console error, no request, every chart laid out with a size),
its search box must filter the table, its headers sort it, and an id must show its history.

Skips, saying why, where no Chromium is installed (`.ci/run` installs Debian's `chromium`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser import Browser, find_chromium
from tests.conftest import Cli
from tests.report_support import LATER, parse, populated

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (apt-get install chromium, or set CHROMIUM="
    "/path/to/chrome): the real-browser check of the HTML report did not run")

VISIBLE_ROWS = ("Array.from(document.querySelectorAll('#entries-table tbody tr'))"
                ".filter(r => !r.hidden && r.offsetHeight > 0).map(r => r.dataset.id)")


def search(browser: Browser, text: str) -> list[str]:
    browser.evaluate(f"""(() => {{ const box = document.getElementById('search');
        box.value = {text!r}; box.dispatchEvent(new Event('input')); }})()""")
    rows: list[str] = browser.evaluate(VISIBLE_ROWS)
    assert browser.evaluate("document.getElementById('shown').textContent") == str(len(rows))
    return rows


def test_the_report_renders_offline_and_its_table_works(cli: Cli, store: Path,
                                                       tmp_path: Path) -> None:
    assert CHROMIUM is not None
    ids = populated(cli, store)
    page = tmp_path / "report.html"
    data = cli.ok("report", "-o", str(page), "--json", now=LATER).json()
    charts = [n.attrs["data-chart"] for n in parse(page.read_text(encoding="utf-8")).find_all(
        "svg", class_="chart")]
    assert len(charts) == 7
    with Browser(CHROMIUM) as browser:
        browser.open(page)
        assert browser.evaluate("navigator.onLine") is False
        assert browser.evaluate("document.title") == f"Memory report: {store.name}"
        sizes = browser.evaluate("""Array.from(document.querySelectorAll('svg.chart')).map(s => {
            const r = s.getBoundingClientRect(); return [s.dataset.chart, r.width, r.height]; })""")
        assert [name for name, _, _ in sizes] == charts
        assert all(w > 100 and h > 40 for _, w, h in sizes), sizes
        bars = browser.evaluate("Array.from(document.querySelectorAll('rect.bar'))"
                                ".map(r => r.getBoundingClientRect().width)")
        assert bars and all(w > 0 for w in bars)
        shot = browser.screenshot(tmp_path / "report.png")
        assert shot.startswith(b"\x89PNG") and len(shot) > 30_000
        if os.environ.get("REPORT_SCREENSHOT"):  # keep it to look at (a CI artifact)
            shutil.copy(tmp_path / "report.png", os.environ["REPORT_SCREENSHOT"])

        everyone = sorted(e["id"] for e in data["entries"])
        assert sorted(browser.evaluate(VISIBLE_ROWS)) == everyone
        postgres = sorted(e["id"] for e in data["entries"] if "PostgreSQL" in e["summary"])
        assert len(postgres) == 3
        assert sorted(search(browser, "postgresql")) == postgres
        assert sorted(search(browser, "postgresql 16")) == [ids["chains"][1][1]]
        assert search(browser, "no-such-word-anywhere") == []
        assert sorted(search(browser, "")) == everyone

        browser.evaluate("document.querySelectorAll('#entries-table th')[5].click()")  # score
        scores = browser.evaluate("Array.from(document.querySelectorAll('#entries-table tbody "
                                  "tr')).map(r => r.cells[5].textContent)")
        numbers = [float(s) for s in scores if s != "-"]
        assert numbers == sorted(numbers) and scores[0] == "-"

        memory_id = ids["chains"][0][0]
        browser.evaluate(f"document.querySelector('#entries-table a[href=\"#h-{memory_id}\"]')"
                         ".click()")
        listed = browser.evaluate("Array.from(document.querySelectorAll('#history-table "
                                  "tr[data-sha]')).map(r => r.dataset.sha)")
        history = data["history"]
        assert listed == [history["commits"][n]["sha"] for n in history["by_id"][memory_id]]
        browser.settle()
        assert browser.problems() == []
