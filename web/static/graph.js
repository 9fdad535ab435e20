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
      layout: { name: "dagre", rankDir: "LR", nodeSep: 14, rankSep: 70, edgeSep: 10 }
    });
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
})();
