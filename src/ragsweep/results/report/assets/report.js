// ragsweep report: sortable tables, the summary's split switch and the per-question explorer.
// Self-contained (no libraries, no network); data comes from the JSON block in this page.
"use strict";
(function () {
  function num(v) { if (v === null || String(v).trim() === "") return null; var x = Number(v); return isFinite(x) ? x : null; }
  function cellValue(td) { return td.hasAttribute("data-v") ? td.getAttribute("data-v") : td.textContent.trim(); }

  function sortTable(table, col, dir) {
    var body = table.tBodies[0];
    // a row's expandable detail row (class "detail") travels with it
    var rows = Array.prototype.filter.call(body.rows, function (r) { return !r.classList.contains("detail"); });
    var numeric = rows.every(function (r) { var v = cellValue(r.cells[col]); return v === "" || num(v) !== null; });
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col]), y = cellValue(b.cells[col]);
      if (numeric) {
        x = num(x); y = num(y);
        if (x === null && y === null) return 0;
        if (x === null) return 1;   // unmeasured last, whatever the direction
        if (y === null) return -1;
        return dir === "ascending" ? x - y : y - x;
      }
      return dir === "ascending" ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (r) { body.appendChild(r); if (r.detailRow) body.appendChild(r.detailRow); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) th.setAttribute("aria-sort", dir); else th.removeAttribute("aria-sort");
    });
  }

  function makeSortable(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.title = "click to sort";
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending";
        sortTable(table, i, dir);
      });
    });
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k]; else if (k === "cls") e.className = attrs[k]; else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function fmt(v, digits) { return v === null || v === undefined ? "-" : Number(v).toFixed(digits === undefined ? 3 : digits); }

  // ------------------------------------------------------------------ summary split switch
  function initSplits() {
    var select = document.getElementById("split-select");
    if (!select) return;
    function show() {
      document.querySelectorAll("[data-split]").forEach(function (t) { t.hidden = t.getAttribute("data-split") !== select.value; });
    }
    select.addEventListener("change", show);
    show();
  }

  function initFilter() {
    var input = document.getElementById("summary-filter");
    if (!input) return;
    input.addEventListener("input", function () {
      var q = input.value.toLowerCase();
      document.querySelectorAll("#summary table tbody tr").forEach(function (tr) {
        tr.hidden = q !== "" && tr.cells[0].textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }

  // ------------------------------------------------------------------ explorer
  function initExplorer(data) {
    var list = document.getElementById("qlist"), detail = document.getElementById("qdetail");
    var typeSel = document.getElementById("q-type"), splitSel = document.getElementById("q-split");
    var historySel = document.getElementById("q-history");
    var search = document.getElementById("q-search"), count = document.getElementById("q-count");
    if (!list || !data) return;
    var types = {}, splits = {};
    data.questions.forEach(function (q) { types[q.type || "(none)"] = 1; splits[q.split] = 1; });
    Object.keys(types).sort().forEach(function (t) { typeSel.appendChild(el("option", {value: t, text: t})); });
    Object.keys(splits).sort().forEach(function (s) { splitSel.appendChild(el("option", {value: s, text: s})); });
    var selected = null;

    function renderList() {
      list.textContent = "";
      var t = typeSel.value, s = splitSel.value, q = search.value.toLowerCase(), n = 0;
      var h = historySel ? historySel.value : "";
      data.questions.forEach(function (item) {
        if (t && (item.type || "(none)") !== t) return;
        if (s && item.split !== s) return;
        var turns = (item.history || []).length;
        if ((h === "with" && !turns) || (h === "without" && turns)) return;
        if (q && (item.qid + " " + item.question).toLowerCase().indexOf(q) < 0) return;
        n += 1;
        var row = el("div", {"data-qid": item.qid, cls: item.qid === selected ? "sel" : ""},
          [el("span", {cls: "tag", text: item.type || "-"}), item.qid + ": " + item.question]);
        row.addEventListener("click", function () { select(item.qid); });
        list.appendChild(row);
      });
      count.textContent = n + " of " + data.questions.length + " questions";
    }

    function sourcesTable(sources, hasGraph, hasFusion, hasBase) {
      var head = ["rank", "document", "span", "score", "gold"];
      if (hasBase) head.push("rank before rerank");
      if (hasFusion) head.push("vector rank", "bm25 rank");
      if (hasGraph) head.push("graph rank", "triplets");
      var t = el("table", {cls: "sources"}, [el("thead", {}, [el("tr", {}, head.map(function (h) { return el("th", {text: h}); }))])]);
      var b = el("tbody");
      sources.forEach(function (s) {
        var cells = [el("td", {cls: "num", text: String(s.rank)}), el("td", {text: s.page ? s.doc + " (p. " + s.page + ")" : s.doc}),
          el("td", {cls: "num", text: s.start + "-" + s.end}), el("td", {cls: "num", text: fmt(s.score, 4)}),
          el("td", {cls: s.gold ? "gold" : "", text: s.gold ? "yes" : "no"})];
        if (hasBase) cells.push(el("td", {cls: "num", text: s.rbase === null || s.rbase === undefined ? "-" : String(s.rbase)}));
        if (hasFusion) cells.push(el("td", {cls: "num", text: s.rv === null ? "-" : String(s.rv)}), el("td", {cls: "num", text: s.rb === null ? "-" : String(s.rb)}));
        if (hasGraph) cells.push(el("td", {cls: "num", text: s.rg === null ? "-" : String(s.rg)}),
          el("td", {cls: "triplets", text: (s.triplets || []).join("; ")}));
        b.appendChild(el("tr", {}, cells));
      });
      t.appendChild(b);
      return t;
    }

    function judgeCell(j) {
      if (!j) return el("td", {cls: "num", "data-v": "", text: "-"});
      return el("td", {cls: j.status === "ok" ? "num" : "num err", "data-v": j.score === null ? "" : j.score,
        text: j.status === "ok" ? String(j.score) : j.status});
    }

    function detailContent(r, judges) {
      var hasGraph = r.sources.some(function (s) { return s.rg !== null || (s.triplets && s.triplets.length); });
      var hasFusion = r.sources.some(function (s) { return s.rv !== null || s.rb !== null; });
      var hasBase = r.sources.some(function (s) { return s.rbase !== undefined && s.rbase !== null; });
      var parts = [el("b", {text: "Retrieved sources"}), sourcesTable(r.sources, hasGraph, hasFusion, hasBase)];
      judges.forEach(function (name) {
        var j = r.judges[name];
        if (!j) return;
        var head = name + ": " + (j.status === "ok" ? String(j.score) : j.status) + (j.reason ? " (" + j.reason + ")" : "");
        parts.push(el("div", {cls: "judge"}, [el("b", {text: head}), el("div", {cls: "answer", text: j.reasoning || ""})]));
      });
      return parts;
    }

    function select(qid) {
      selected = qid;
      Array.prototype.forEach.call(list.children, function (r) { r.className = r.getAttribute("data-qid") === qid ? "sel" : ""; });
      var q = data.questions.filter(function (x) { return x.qid === qid; })[0];
      var rows = data.answers[qid] || [];
      detail.textContent = "";
      detail.appendChild(el("h3", {text: q.qid + ": " + q.question}));
      detail.appendChild(el("p", {}, [el("span", {cls: "tag", text: q.type || "-"}), el("span", {cls: "tag", text: q.split})]));
      if (q.history && q.history.length) {  // a follow-up: the conversation before it
        detail.appendChild(el("p", {}, [el("b", {text: "Conversation before it:"})]));
        detail.appendChild(el("div", {cls: "history"}, q.history.map(function (t) {
          return el("div", {}, [el("span", {cls: "tag", text: t[0]}), t[1]]);
        })));
      }
      detail.appendChild(el("p", {}, [el("b", {text: "Reference answer: "}), q.ref === null ? "(none)" : q.ref]));
      var gold = q.gold.length ? q.gold.map(function (g) { return g[0] + " [" + g[1] + ", " + g[2] + ")"; }).join("; ") : "(none: out of scope)";
      detail.appendChild(el("p", {}, [el("b", {text: "Gold evidence: "}), gold]));
      var judges = data.judges;
      var metrics = data.metrics;  // the catalogue's per-question columns
      var head = ["configuration", "answer"].concat(metrics.map(function (m) { return m.label; })).concat(judges).concat(["sources, verdicts"]);
      var ncols = head.length;
      var table = el("table", {cls: "sortable", id: "answers-table"}, [el("thead", {}, [el("tr", {}, head.map(function (h, i) {
        return el("th", {cls: i >= 2 && i < 2 + metrics.length + judges.length ? "num" : "", text: h});
      }))])]);
      var body = el("tbody");
      rows.forEach(function (r) {
        var c = data.configs[r.c];
        var answer = r.error ? el("td", {cls: "err answer", text: "failed: " + r.error}) : el("td", {cls: "answer", text: r.answer || "(empty answer)"});
        if (r.rewrite) {  // what a history mode searched a follow-up with, beside its answer
          answer.insertBefore(el("div", {cls: "muted rewrite", text: "searched with: " + r.rewrite}), answer.firstChild);
        }
        var cells = [el("td", {cls: "id", text: c.id}), answer];
        metrics.forEach(function (m, i) {
          var v = r.scores[i];
          cells.push(el("td", {cls: "num", "data-v": v === null ? "" : v, text: fmt(v, m.digits)}));
        });
        judges.forEach(function (j) { cells.push(judgeCell(r.judges[j])); });
        var button = el("button", {cls: "toggle", type: "button", "aria-expanded": "false", text: r.sources.length + " sources \u25B8"});
        cells.push(el("td", {"data-v": r.sources.length}, [button]));
        var row = el("tr", {"data-config": c.id}, cells);
        var extra = el("tr", {cls: "detail"}, [el("td", {colspan: String(ncols)}, detailContent(r, judges))]);
        extra.hidden = true;
        row.detailRow = extra;
        button.addEventListener("click", function () {
          extra.hidden = !extra.hidden;
          button.setAttribute("aria-expanded", String(!extra.hidden));
          button.textContent = r.sources.length + " sources " + (extra.hidden ? "\u25B8" : "\u25BE");
        });
        body.appendChild(row);
        body.appendChild(extra);
      });
      table.appendChild(body);
      detail.appendChild(el("div", {cls: "scroll"}, [table]));
      makeSortable(table);
      sortTable(table, 2, "descending");
    }

    [typeSel, splitSel, historySel].forEach(function (s) { if (s) s.addEventListener("change", renderList); });
    search.addEventListener("input", renderList);
    renderList();
    if (data.questions.length) select(data.questions[0].qid);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    initSplits();
    initFilter();
    var block = document.getElementById("explorer-data");
    initExplorer(block ? JSON.parse(block.textContent) : null);
    document.body.setAttribute("data-ready", "1");
  });
})();
