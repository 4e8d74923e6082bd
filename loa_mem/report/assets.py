"""The report page's inline style sheet and script, the only ones it has (its
Content-Security-Policy allows inline styles and scripts and nothing else).

What it knows: how the page looks, and what the script does in the reader's browser: filter the
entries table as the search box is typed into, sort it by a clicked column (numbers as numbers,
ties in page order), and show an entry's commits (from the page's `report-history` JSON) when
its id is clicked (`#h-ID`). The element ids it relies on (`entries-table`, `search`, `shown`,
`history-panel`, `history`) are written by `report.html`.
"""

STYLE = """
:root{color-scheme:light;--ink:#1d2733;--muted:#5b6673;--line:#dde2e8;--bg:#f7f9fb}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0;
background:var(--bg)}
header{background:#1f3b57;color:#fff;padding:16px 24px}header a{color:#cfe3ff}
header h1{margin:0 0 4px;font-size:22px}.meta{margin:0 0 6px;color:#dbe6f2}
section{background:#fff;margin:16px 24px;padding:12px 20px 20px;border:1px solid var(--line);
border-radius:8px}
h2{font-size:18px;margin:8px 0 12px}h3{font-size:15px;margin:18px 0 8px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f3f6;position:sticky;top:0}tr.total td{font-weight:600}
#entries-table th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
.scroll{overflow:auto;max-height:80vh}.row{display:flex;flex-wrap:wrap;gap:24px}
.empty,.note{color:var(--muted)}.error{color:#c0392b}
svg.chart{max-width:100%;height:auto;display:block}svg a:hover rect{fill:#eef3f9}
.agent{border-top:1px solid var(--line);margin-top:12px}
#search{font:inherit;padding:4px 8px;width:22em}
#history-panel table{margin-top:8px}code{font-size:12px}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var table = document.getElementById("entries-table");
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  function filter() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var n = 0;
    rows.forEach(function (row, i) {
      var keep = words.every(function (w) { return texts[i].indexOf(w) >= 0; });
      row.hidden = !keep;
      if (keep) { n += 1; }
    });
    shown.textContent = String(n);
  }
  search.addEventListener("input", filter);
  table.tHead.addEventListener("click", function (event) {
    var th = event.target.closest("th");
    if (!th) { return; }
    var column = th.cellIndex;
    var numeric = th.getAttribute("data-type") === "num";
    var direction = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    Array.prototype.forEach.call(th.parentNode.cells, function (c) {
      c.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
    function key(row) {
      var text = row.cells[column].textContent;
      if (!numeric) { return text; }
      var value = parseFloat(text);
      return isNaN(value) ? -Infinity : value;
    }
    var order = rows.map(function (row, i) { return [key(row), i, row]; });
    order.sort(function (a, b) {
      if (a[0] < b[0]) { return -direction; }
      if (a[0] > b[0]) { return direction; }
      return a[1] - b[1];
    });
    var fragment = document.createDocumentFragment();
    order.forEach(function (item) { fragment.appendChild(item[2]); });
    body.appendChild(fragment);
    rows = order.map(function (item) { return item[2]; });
    texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
  });
  var history = JSON.parse(document.getElementById("report-history").textContent);
  function cell(tr, text, tag) {
    var td = document.createElement(tag || "td");
    td.textContent = text;
    tr.appendChild(td);
  }
  function showHistory() {
    var match = /^#h-(MEM-[A-Za-z0-9-]+)$/.exec(window.location.hash);
    if (!match) { return; }
    var id = match[1];
    var panel = document.getElementById("history-panel");
    panel.textContent = "";
    var title = document.createElement("h3");
    title.textContent = "History of " + id;
    panel.appendChild(title);
    var found = history.by_id[id] || [];
    if (!found.length) {
      var none = document.createElement("p");
      none.textContent = "no commit names this entry (uncommitted, or only hand-edited)";
      panel.appendChild(none);
    } else {
      var t = document.createElement("table");
      t.id = "history-table";
      var head = document.createElement("tr");
      ["commit", "date", "subject"].forEach(function (h) { cell(head, h, "th"); });
      t.appendChild(head);
      found.forEach(function (n) {
        var c = history.commits[n];
        var tr = document.createElement("tr");
        tr.setAttribute("data-sha", c.sha);
        cell(tr, c.sha.slice(0, 10));
        cell(tr, c.date);
        cell(tr, c.subject);
        t.appendChild(tr);
      });
      panel.appendChild(t);
    }
    document.getElementById("history").scrollIntoView();
  }
  window.addEventListener("hashchange", showHistory);
  showHistory();
})();
"""
