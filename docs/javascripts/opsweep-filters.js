/* What the filter bars share (the support page's operators, the models page's models): a
   bar of facet rows whose buttons say how many rows each choice would leave, the target
   select, and the start once the page is ready. */
var opsweepFilter = (function () {
  "use strict";
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // `node`: the bar; `rows`: the table's rows; `facets`: name -> test of a row; `update`:
  // what a choice calls (it hides rows, then `refresh`es the controls)
  function bar(node, rows, facets, update) {
    var controls = [];  // functions that refresh a control's label and pressed state
    function matches(row, except) {
      return Object.keys(facets).every(function (f) { return f === except || facets[f](row); });
    }
    function count(except, test) {
      return rows.filter(function (r) { return matches(r, except) && test(r); }).length;
    }
    // `over`: the filter its count leaves out (default: its own facet)
    function button(facet, label, pressed, choose, test, over) {
      var b = el("button", {type: "button", "data-facet": facet});
      b.addEventListener("click", function () { choose(); update(); });
      controls.push(function () {
        var n = count(over || facet, test);
        b.textContent = label + " (" + n + ")";
        b.setAttribute("aria-pressed", pressed() ? "true" : "false");
        b.disabled = n === 0 && !pressed();
      });
      return b;
    }
    function facetRow(name) {
      var div = el("div", {"class": "facet"});
      div.appendChild(el("span", {"class": "name"}, name));
      node.appendChild(div);
      return div;
    }
    // one select among the table's targets, when it has more than the stock exporter
    function targets(names, choose) {
      if (names.length < 2) { return; }
      var select = el("select", {"aria-label": "target", "data-facet": "target"});
      names.forEach(function (t, i) {
        select.appendChild(el("option", {value: String(i)}, i ? "with " + t : "stock exporter"));
      });
      select.addEventListener("change", function () { choose(+select.value); update(); });
      facetRow("Target").appendChild(select);
    }
    function status() {
      var div = el("div", {"class": "status", role: "status", "aria-live": "polite"});
      node.appendChild(div);
      return div;
    }
    function refresh() { controls.forEach(function (f) { f(); }); }
    return {matches: matches, count: count, button: button, facetRow: facetRow,
            targets: targets, status: status, controls: controls, refresh: refresh};
  }

  // `setup(table, bar)` once, when both elements are on the page and the DOM is ready
  function start(tableId, barId, setup) {
    function init() {
      var table = document.getElementById(tableId), node = document.getElementById(barId);
      if (table && node && !node.dataset.ready) { node.dataset.ready = "1"; setup(table, node); }
    }
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", init);
    } else {
      init();
    }
  }
  return {el: el, bar: bar, start: start};
})();

/* Filters with counts for the support page's operator table (plain JavaScript, no
   library, works offline). Everything it needs is in the rows' data attributes,
   written by `opsweep render`:
     data-op    the operator
     data-core  1 for a core operator (absent: not core)
     data-g     per target (space-separated, stock first): four grade letters, export
                runtime numerics dynamic (f full, p partial, n none, b blocked, s skipped,
                - not reached); empty when that target did not measure the operator
     data-chg   per target: 1 when the grades changed across the last recorded bump
                (absent: changed for none)
     data-fail  each dtype class with a failing static example (stock), with the ranks it
                fails at, a base-36 digit each: "float16:04 integer:2" (absent: none; a
                class alone, without its ranks, is read too)
     data-ulp   the largest error in ULP among the operator's float16/bfloat16 cells within
                tolerance, stock exporter (absent: none recorded)
   and the table's data-ranks: the ranks the "Failing at" filter offers (absent: none).
   Without JavaScript the table is complete as rendered; this only hides rows. */
(function () {
  "use strict";
  var AXES = ["export", "runtime", "numerics", "dynamic"];
  // letter, word, badge class (the page's badges: opsweep.page.glyphs)
  var GRADES = [["f", "full", "g-f"], ["p", "partial", "g-p"], ["n", "none", "g-n"],
                ["b", "blocked", "g-b"], ["s", "skipped", "g-s"], ["-", "n/a", "g-x"],
                ["", "unmeasured", "g-u"]];
  var LETTER = {};
  GRADES.forEach(function (g) { LETTER[g[0]] = g; });
  var el = opsweepFilter.el;

  // a grade cell of the table (the third to the sixth) is its badge: <td class="g-p">partial</td>
  function paint(cell, g) {
    cell.className = g[2];
    cell.textContent = g[0] === "" ? "-" : g[1];
    if (g[0] === "") { cell.appendChild(el("i", {}, " unmeasured")); }
  }

  function setup(table, bar) {
    var targets = (table.dataset.targets || "stock").split("|");
    var bump = table.dataset.bump || "";
    var classes = (table.dataset.classes || "").split(" ").filter(Boolean);
    var ranks = (table.dataset.ranks || "").split(" ").filter(Boolean).map(Number);
    // "float16:04 integer:2" -> {float16: [0, 4], integer: [2]}
    function failingRanks(text) {
      var out = {};
      text.split(" ").filter(Boolean).forEach(function (token) {
        var at = token.indexOf(":");
        out[at < 0 ? token : token.slice(0, at)] = at < 0 ? [] :
          token.slice(at + 1).split("").map(function (d) { return parseInt(d, 36); });
      });
      return out;
    }
    var rows = Array.prototype.map.call(table.tBodies[0].rows, function (tr) {
      var codes = (tr.dataset.g || "").split(" ");
      return {tr: tr, op: tr.dataset.op, core: tr.dataset.core === "1",
              codes: targets.map(function (_, i) { return codes[i] || ""; }),
              chg: targets.map(function (_, i) { return (tr.dataset.chg || "")[i] === "1"; }),
              fr: failingRanks(tr.dataset.fail || ""),
              ulp: tr.dataset.ulp === undefined ? null : +tr.dataset.ulp,
              cells: Array.prototype.slice.call(tr.cells, 2, 6),  // the four grade cells
              chgCell: bump ? tr.lastElementChild : null};
    });
    var state = {target: 0, axes: {}, core: false, changed: false, dtype: "", rank: null, q: [],
                 ulp: null};
    var names = {};
    rows.forEach(function (r) { names[r.op] = true; });
    // the name box: one or more names, separated by commas or spaces, each with or without
    // "aten::" and an overload (".default", ".Tensor"); a term that is some operator's exact
    // name matches that operator alone, any other term every name containing it
    function terms(text) {
      return text.toLowerCase().split(/[\s,;]+/).filter(Boolean).map(function (t) {
        t = t.replace(/^aten::/, "").replace(/^torch\.ops\.aten\./, "");
        var bare = t.replace(/\.[a-z_0-9]+$/, "");
        var exact = names[t] ? t : names[bare] ? bare : "";
        return exact ? function (op) { return op === exact; }
                     : function (op) { return op.indexOf(t) >= 0; };
      });
    }

    // a failing static example of the dtype class ("": any) at the rank (null: any)
    function failsAt(r, dtype, rank) {
      if (rank === null) { return !dtype || r.fr.hasOwnProperty(dtype); }
      return (dtype ? [dtype] : Object.keys(r.fr)).some(function (c) {
        return (r.fr[c] || []).indexOf(rank) >= 0;
      });
    }
    function grade(row, axis) {
      var code = row.codes[state.target];
      return code ? code[AXES.indexOf(axis)] : "";
    }
    var facets = {
      core: function (r) { return !state.core || r.core; },
      changed: function (r) { return !state.changed || r.chg[state.target]; },
      fail: function (r) { return failsAt(r, state.dtype, state.rank); },
      q: function (r) { return !state.q.length || state.q.some(function (t) { return t(r.op); }); },
      ulp: function (r) { return state.ulp === null || (r.ulp !== null && r.ulp > state.ulp); }
    };
    AXES.forEach(function (axis) {
      facets[axis] = function (r) {
        return state.axes[axis] === undefined || grade(r, axis) === state.axes[axis];
      };
    });
    var kit = opsweepFilter.bar(bar, rows, facets, function () { update(); });
    var matches = kit.matches, count = kit.count, button = kit.button, facetRow = kit.facetRow;
    kit.targets(targets, function (i) { state.target = i; });
    AXES.forEach(function (axis) {
      var div = facetRow(axis.charAt(0).toUpperCase() + axis.slice(1));
      div.appendChild(button(axis, "all", function () { return state.axes[axis] === undefined; },
                             function () { delete state.axes[axis]; },
                             function () { return true; }));
      GRADES.forEach(function (g) {
        var b = button(axis, g[1],
                       function () { return state.axes[axis] === g[0]; },
                       function () { state.axes[axis] = g[0]; },
                       function (r) { return grade(r, axis) === g[0]; });
        b.setAttribute("data-axis", axis);
        b.classList.add(g[2]);
        b.setAttribute("data-value", g[1]);
        div.appendChild(b);
      });
    });
    var only = facetRow("Only");
    only.appendChild(button("core", "core operators", function () { return state.core; },
                            function () { state.core = !state.core; },
                            function (r) { return r.core; }));
    if (bump) {
      only.appendChild(button("changed", "changed torch " + bump,
                              function () { return state.changed; },
                              function () { state.changed = !state.changed; },
                              function (r) { return r.chg[state.target]; }));
    }
    if (classes.length) {
      var dt = facetRow("Failing at (static)");
      dt.appendChild(button("dtype", "any dtype", function () { return !state.dtype; },
                            function () { state.dtype = ""; },
                            function (r) { return failsAt(r, "", state.rank); }, "fail"));
      classes.forEach(function (c) {
        var b = button("dtype", c, function () { return state.dtype === c; },
                       function () { state.dtype = c; },
                       function (r) { return failsAt(r, c, state.rank); }, "fail");
        b.setAttribute("data-value", c);
        dt.appendChild(b);
      });
    }
    if (ranks.length) {
      // the rank beside the dtype: "float16" and "rank 4" lists the operators failing there
      var rk = facetRow("At rank (static)");
      rk.appendChild(button("rank", "any rank", function () { return state.rank === null; },
                            function () { state.rank = null; },
                            function (r) { return failsAt(r, state.dtype, null); }, "fail"));
      ranks.forEach(function (k) {
        var b = button("rank", "rank " + k, function () { return state.rank === k; },
                       function () { state.rank = k; },
                       function (r) { return failsAt(r, state.dtype, k); }, "fail");
        b.setAttribute("data-value", String(k));
        rk.appendChild(b);
      });
    }
    if (rows.some(function (r) { return r.ulp !== null; })) {
      // within tolerance, yet more than N ULP off PyTorch (empty: every operator)
      var tol = facetRow("Within tolerance");
      var ulps = el("input", {type: "number", min: "0", step: "1", placeholder: "N",
                              "aria-label": "more than N ULP", "data-facet": "ulp"});
      var said = el("span", {"class": "ulp-count"});
      ulps.addEventListener("input", function () {
        var n = parseInt(ulps.value, 10);
        state.ulp = isNaN(n) || n < 0 ? null : n; update();
      });
      kit.controls.push(function () {
        said.textContent = state.ulp === null ? " more than N ULP"
          : " more than " + state.ulp + " ULP (" + count("ulp", facets.ulp) + ")";
      });
      tol.appendChild(ulps);
      tol.appendChild(said);
    }
    var search = el("input", {type: "search", placeholder: "aten::layer_norm, gelu \u2026",
                              "aria-label": "search operators", "data-facet": "q"});
    search.addEventListener("input", function () {
      state.q = terms(search.value); update();
    });
    facetRow("Name").appendChild(search);
    var status = kit.status();

    var others = document.querySelectorAll("table.opsweep-matrix tbody tr[data-op]");
    var drawn = 0;  // the target whose grades the cells show
    function update() {
      var shown = {}, visible = 0, redraw = drawn !== state.target;
      drawn = state.target;
      rows.forEach(function (r) {
        var ok = matches(r, null);
        if (r.tr.hidden === ok) { r.tr.hidden = !ok; }
        if (ok) { shown[r.op] = true; visible += 1; }
        if (redraw) {
          AXES.forEach(function (axis, i) {
            if (r.cells[i]) { paint(r.cells[i], LETTER[grade(r, axis)]); }
          });
          if (r.chgCell) { r.chgCell.textContent = r.chg[state.target] ? "\u2195" : ""; }
        }
      });
      Array.prototype.forEach.call(others, function (tr) {
        var hide = !shown[tr.dataset.op];
        if (tr.hidden !== hide) { tr.hidden = hide; }
      });
      kit.refresh();
      status.textContent = visible + " of " + rows.length + " operators shown" +
        (state.target ? " (grades with " + targets[state.target] + ")" : "");
      bar.dataset.visible = String(visible);
    }
    update();
  }

  opsweepFilter.start("opsweep-ops", "opsweep-filters", setup);
})();

/* The history page: two selects choose the points to compare; only that pair's section is
   shown (without JavaScript every pair is listed). */
(function () {
  "use strict";
  function init() {
    var from = document.getElementById("opsweep-from"), to = document.getElementById("opsweep-to");
    var pairs = document.querySelectorAll("#opsweep-pairs section.opsweep-pair");
    if (!from || !to || !pairs.length) { return; }
    var note = document.createElement("p");
    note.className = "opsweep-same";
    note.textContent = "Pick two different points.";
    var back = document.createElement("p");
    back.className = "opsweep-reversed";
    back.textContent = "Shown from the earlier point to the later one.";
    document.getElementById("opsweep-pairs").prepend(back);
    document.getElementById("opsweep-pairs").prepend(note);
    function update() {
      var shown = false, a = +from.value, b = +to.value;
      var lo = String(Math.min(a, b)), hi = String(Math.max(a, b));
      Array.prototype.forEach.call(pairs, function (s) {
        var hit = s.dataset.from === lo && s.dataset.to === hi;
        s.hidden = !hit;
        shown = shown || hit;
      });
      note.hidden = shown;
      back.hidden = !(shown && a > b);
    }
    from.addEventListener("change", update);
    to.addEventListener("change", update);
    update();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

/* A link of the older layout, one page for every operator (operators/#op-NAME), lands on the
   operators' index: go on to the operator's own page. */
(function () {
  "use strict";
  var found = /^#op-([A-Za-z0-9_]+)$/.exec(location.hash);
  if (found && /\/operators\/(index\.html)?$/.test(location.pathname)) {
    location.replace(found[1] + "/");
  }
})();

/* The models page's table: filters by family, dtype, target and each axis's verdict, with
   counts. Everything is in the rows' data attributes, written by `opsweep render`:
     data-model   the model's name
     data-family  its family (the file its callable is defined in)
     data-dtype   the floating dtype most of its operator calls compute in (empty: none)
     data-v       per target (space-separated, the table's data-targets order): four verdict
                  letters, export runtime numerics dynamic (p pass, f fail, n not reached,
                  - none); empty when that target has no verdict for the model
   Without JavaScript the table is complete as rendered; this only hides rows. */
(function () {
  "use strict";
  var AXES = ["export", "runtime", "numerics", "dynamic"];
  var VERDICTS = [["p", "pass", "g-f"], ["f", "fail", "g-n"], ["n", "not reached", "g-x"]];

  function setup(table, bar) {
    var targets = (table.dataset.targets || "stock").split("|");
    var rows = Array.prototype.map.call(table.tBodies[0].rows, function (tr) {
      var codes = (tr.dataset.v || "").split(" ");
      return {tr: tr, family: tr.dataset.family || "", dtype: tr.dataset.dtype || "",
              codes: targets.map(function (_, i) { return codes[i] || ""; })};
    });
    var state = {target: 0, family: "", dtype: "", axes: {}};
    function verdict(r, axis) {
      var code = r.codes[state.target];
      return code ? code[AXES.indexOf(axis)] : "";
    }
    var facets = {
      target: function (r) { return r.codes[state.target] !== ""; },
      family: function (r) { return !state.family || r.family === state.family; },
      dtype: function (r) { return !state.dtype || r.dtype === state.dtype; }
    };
    AXES.forEach(function (axis) {
      facets[axis] = function (r) {
        return state.axes[axis] === undefined || verdict(r, axis) === state.axes[axis];
      };
    });
    var kit = opsweepFilter.bar(bar, rows, facets, function () { update(); });
    var matches = kit.matches, facetRow = kit.facetRow;
    function button(facet, label, value, pressed, choose, test) {
      var b = kit.button(facet, label, pressed, choose, test);
      b.setAttribute("data-value", value);
      return b;
    }
    // one choice among the values of a row's attribute (family, dtype): "all" first
    function choice(facet, title) {
      var values = [];
      rows.forEach(function (r) {
        if (r[facet] && values.indexOf(r[facet]) < 0) { values.push(r[facet]); }
      });
      values.sort();
      var div = facetRow(title);
      div.appendChild(button(facet, "all", "", function () { return !state[facet]; },
                             function () { state[facet] = ""; },
                             function () { return true; }));
      values.forEach(function (v) {
        div.appendChild(button(facet, v, v, function () { return state[facet] === v; },
                               function () { state[facet] = v; },
                               function (r) { return r[facet] === v; }));
      });
    }
    kit.targets(targets, function (i) { state.target = i; });
    choice("family", "Family");
    choice("dtype", "Dtype");
    AXES.forEach(function (axis) {
      var div = facetRow(axis.charAt(0).toUpperCase() + axis.slice(1));
      div.appendChild(button(axis, "all", "", function () { return state.axes[axis] === undefined; },
                             function () { delete state.axes[axis]; },
                             function () { return true; }));
      VERDICTS.forEach(function (v) {
        var b = button(axis, v[1], v[1], function () { return state.axes[axis] === v[0]; },
                       function () { state.axes[axis] = v[0]; },
                       function (r) { return verdict(r, axis) === v[0]; });
        b.setAttribute("data-axis", axis);
        b.classList.add(v[2]);
        div.appendChild(b);
      });
    });
    var status = kit.status();
    function update() {
      var visible = 0;
      rows.forEach(function (r) {
        var ok = matches(r, null);
        if (r.tr.hidden === ok) { r.tr.hidden = !ok; }
        if (ok) { visible += 1; }
      });
      kit.refresh();
      status.textContent = visible + " of " + rows.length + " models shown" +
        (state.target ? " (verdicts with " + targets[state.target] + ")" : "");
    }
    update();
  }

  opsweepFilter.start("opsweep-models", "opsweep-model-filters", setup);
})();
