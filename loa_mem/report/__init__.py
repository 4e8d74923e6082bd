"""The memory report: one self-contained HTML page (and its data as JSON) built from a store and
its git history.

`data.gather(store)` reads the store (index, working-set manifests, agent sidecars, events log)
and one pass of `git log`, and returns a plain data model; `html.render(report)` turns it into a
page whose charts are inline SVG (`svg.py`), whose table is sortable and searchable by a few
lines of inline script, and which loads nothing from anywhere: a Content-Security-Policy of
`default-src 'none'` makes the browser refuse any request the page might try.

What must always hold: the report reads only the project store. A person's own store (`loa-mem
pref`, outside the repository) is never opened, so personal preferences never reach a page that
may be uploaded as a CI artifact.
"""

from __future__ import annotations

__all__: list[str] = []
