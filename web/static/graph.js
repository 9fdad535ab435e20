// The dependency graph: cytoscape.js laid out by dagre, left to right.
(function () {
  "use strict";
  var box = document.getElementById("graph");
  if (!box || !window.cytoscape) { return; }
  cytoscape.use(cytoscapeDagre);
  var colours = {
    success: "#1a7f37", failure: "#c62828", aborted: "#8e24aa", running: "#1565c0",
    ready: "#00838f", waiting: "#b26a00", frozen: "#546e7a", idle: "#9e9e9e"
  };
  fetch(box.dataset.src, { credentials: "same-origin" }).then(function (r) {
    if (!r.ok) { throw new Error("graph not loaded: " + r.status); }
    return r.json();
  }).then(function (g) {
    var notice = document.getElementById("graph-notice");
    if (g.choose) {
      notice.textContent = g.tasks + " tasks are too many to draw at once: centre on a task, or choose some by name, label, bundle or status.";
      box.dataset.ready = "0";
      box.hidden = true;
      return;
    }
    notice.textContent = g.truncated ?
      "The graph would hold " + g.tasks + " tasks: the " + g.drawn + " nearest are drawn, " + (g.tasks - g.drawn) + " are left out. Take fewer steps out, or choose fewer tasks." :
      g.drawn + (g.drawn === 1 ? " task." : " tasks.");
    if (g.truncated) { notice.className = "error"; }
    var list = document.getElementById("graph-list");
    g.elements.forEach(function (el) {
      if (el.group !== "nodes") { return; }
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "/tasks/" + encodeURIComponent(el.data.id);
      a.textContent = el.data.id + " (" + el.data.status + ")";
      li.appendChild(a);
      list.appendChild(li);
    });
    var cy = cytoscape({
      container: box,
      elements: g.elements,
      wheelSensitivity: 0.3,
      maxZoom: 1.6,
      style: [
        // Each node holds its label, and is as wide as it: the layout
        // places whole labels, which never overlap.
        { selector: "node", style: {
          "label": "data(label)", "shape": "round-rectangle", "background-color": "#fff",
          "border-width": 3, "border-color": function (n) { return colours[n.data("status")] || "#9e9e9e"; },
          "color": "#111", "font-size": 11, "text-valign": "center", "text-halign": "center",
          "width": "label", "height": 14, "padding": "6px" } },
        { selector: "node[type = 'bundle']", style: { "shape": "cut-rectangle", "border-style": "double", "border-width": 5 } },
        { selector: "node[type = 'configuration']", style: { "shape": "hexagon" } },
        { selector: "node[?centre]", style: { "font-weight": "bold", "background-color": "#fff8e6" } },
        { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.5, "line-color": "#777", "target-arrow-color": "#777" } },
        { selector: "edge[kind = 'bundle']", style: { "line-style": "dashed" } },
        { selector: ":selected", style: { "border-width": 3, "border-color": "#f9a825" } }
      ],
      // The edges are routed on the positions dagre gave, and again
      // after a task is dragged.
      layout: { name: "dagre", rankDir: "LR", nodeSep: 14, rankSep: 70, edgeSep: 10,
        stop: function (ev) { route(ev.cy); } }
    });
    cy.on("free", "node", function () { route(cy); });
    cy.on("tap", "node", function (e) {
      location.href = "/graph?task=" + encodeURIComponent(e.target.id());
    });
    cy.on("dbltap", "node", function (e) {
      location.href = "/tasks/" + encodeURIComponent(e.target.id());
    });
    box.cy = cy;
    box.dataset.ready = String(g.elements.filter(function (el) { return el.group === "nodes"; }).length);
  }).catch(function (err) {
    box.textContent = err.message;
  });

  // route draws the edges that would pass through a task they do not
  // join round it. dagre places the tasks in columns (its ranks, left to
  // right), with nothing between two columns; such an edge leaves its
  // source at the source's height, crosses each column between its ends
  // through the free gap nearest its straight line, and reaches its
  // target at the target's height: it meets no other task.
  function route(cy) {
    var pad = 6, cols = {};
    cy.edges().removeStyle();
    cy.nodes().forEach(function (n) {
      var b = n.boundingBox({ includeLabels: true }), k = Math.round(n.position("x"));
      var c = cols[k] || (cols[k] = { x: k, x1: b.x1, x2: b.x2, boxes: [] });
      c.x1 = Math.min(c.x1, b.x1);
      c.x2 = Math.max(c.x2, b.x2);
      c.boxes.push({ x1: b.x1, x2: b.x2, y1: b.y1 - pad, y2: b.y2 + pad });
    });
    var list = Object.keys(cols).map(function (k) { return cols[k]; });
    cy.edges().forEach(function (e) {
      var s = e.source().position(), t = e.target().position();
      var sc = cols[Math.round(s.x)], tc = cols[Math.round(t.x)];
      if (!sc || !tc || t.x <= s.x || !blocked(cy, e, s, t)) { return; }
      var pts = [{ x: sc.x2 + pad, y: s.y }];
      list.forEach(function (c) {
        if (c === sc || c === tc || c.x < s.x || c.x > t.x) { return; }
        var y = gap(c, s.y + (t.y - s.y) * (c.x - s.x) / (t.x - s.x));
        pts.push({ x: c.x1 - pad, y: y }, { x: c.x2 + pad, y: y });
      });
      pts.sort(function (a, b) { return a.x - b.x; });
      pts.push({ x: tc.x1 - pad, y: t.y });
      // As cytoscape's segments: how far along the line from source to
      // target, and how far from it, each point is.
      var dx = t.x - s.x, dy = t.y - s.y, len2 = dx * dx + dy * dy, len = Math.sqrt(len2);
      e.style({
        "curve-style": "segments", "edge-distances": "node-position",
        "segment-weights": pts.map(function (p) { return ((p.x - s.x) * dx + (p.y - s.y) * dy) / len2; }),
        "segment-distances": pts.map(function (p) { return ((p.y - s.y) * dx - (p.x - s.x) * dy) / len; })
      });
    });
  }

  // blocked reports whether the straight line of an edge enters a task
  // other than its ends.
  function blocked(cy, e, s, t) {
    var hit = false;
    cy.nodes().forEach(function (n) {
      if (hit || n.same(e.source()) || n.same(e.target())) { return; }
      hit = crosses(s, t, n.boundingBox({ includeLabels: true }));
    });
    return hit;
  }

  // crosses reports whether the segment a-b enters the box r (Liang-Barsky).
  function crosses(a, b, r) {
    var t0 = 0, t1 = 1, dx = b.x - a.x, dy = b.y - a.y;
    var sides = [[-dx, a.x - r.x1], [dx, r.x2 - a.x], [-dy, a.y - r.y1], [dy, r.y2 - a.y]];
    for (var i = 0; i < sides.length; i++) {
      var p = sides[i][0], q = sides[i][1];
      if (p === 0) {
        if (q < 0) { return false; }
        continue;
      }
      var u = q / p;
      if (p < 0) {
        if (u > t1) { return false; }
        if (u > t0) { t0 = u; }
      } else {
        if (u < t0) { return false; }
        if (u < t1) { t1 = u; }
      }
    }
    return t0 < t1;
  }

  // gap returns the height nearest y at which a line crosses the column c
  // without entering any of its tasks.
  function gap(c, y) {
    var free = function (v) {
      return c.boxes.every(function (b) { return v <= b.y1 || v >= b.y2; });
    };
    var best = null;
    [y].concat(c.boxes.map(function (b) { return b.y1; }), c.boxes.map(function (b) { return b.y2; })).forEach(function (v) {
      if (free(v) && (best === null || Math.abs(v - y) < Math.abs(best - y))) { best = v; }
    });
    return best === null ? y : best;
  }
})();
