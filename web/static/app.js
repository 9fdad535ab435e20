// gnomon's web UI: live updates, the CSRF token on every change, and
// actions confirmed before they are sent to the JSON API.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="csrf-token"]');
  var csrf = meta ? meta.content : "";
  var dialog = document.getElementById("confirm");

  // Every request htmx makes carries the session's CSRF token.
  document.addEventListener("htmx:configRequest", function (e) {
    e.detail.headers["X-CSRF-Token"] = csrf;
  });

  function toast(text, bad) {
    var t = document.getElementById("toast");
    t.textContent = text;
    t.className = bad ? "show bad" : "show";
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { t.className = ""; }, 6000);
  }

  function refresh() {
    if (window.htmx && !(dialog && dialog.open)) {
      htmx.trigger(document.body, "gnomon-change");
    }
  }

  // A run's log opens in place of the task's log files. The request is
  // not tied to the link, which a live update may replace before the
  // answer comes; the log stays open across live updates.
  document.addEventListener("click", function (e) {
    var a = e.target.closest("a[data-runlog]");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) { return; }
    e.preventDefault();
    fetch(a.href, { credentials: "same-origin", headers: { "HX-Request": "true" } }).then(function (r) {
      if (r.status === 401) { location.href = "/login"; return; }
      if (!r.ok) { throw new Error("the run's log: " + r.status + " " + r.statusText); }
      return r.text().then(function (html) {
        var logs = document.getElementById("logs");
        if (!logs) { return; }
        logs.innerHTML = html;
        if (window.htmx) { htmx.process(logs); }
        logsAtEnd(logs);
        logs.scrollIntoView({ block: "start" });
      });
    }).catch(function (err) { toast(err.message, true); });
  });
  // Keyboard focus outlives a live update: the control that had it is
  // found again in the new content (by its id, its action, its link or its
  // name and value) and given it back, so that a reader tabbing through a
  // page that changes under them does not start again from the top.
  var focusKey = null;
  function keyOf(el) {
    var tag = el.tagName.toLowerCase();
    if (el.id) { return "#" + CSS.escape(el.id); }
    if (el.dataset && el.dataset.action) { return tag + '[data-action="' + CSS.escape(el.dataset.action) + '"]'; }
    if (el.getAttribute("href")) { return tag + '[href="' + CSS.escape(el.getAttribute("href")) + '"]'; }
    if (el.name) {
      var k = tag + '[name="' + CSS.escape(el.name) + '"]';
      return el.value !== undefined && el.value !== "" ? k + '[value="' + CSS.escape(el.value) + '"]' : k;
    }
    return null;
  }
  document.addEventListener("htmx:beforeSwap", function (e) {
    var a = document.activeElement;
    focusKey = a && a !== document.body && e.detail.target.contains(a) ? keyOf(a) : null;
  });
  document.addEventListener("htmx:afterSwap", function () {
    var el = focusKey && document.querySelector(focusKey);
    focusKey = null;
    if (el && el !== document.activeElement) { el.focus({ preventScroll: true }); }
  });

  var chosenLog = null;
  document.addEventListener("htmx:beforeSwap", function (e) {
    var logs = document.getElementById("logs");
    chosenLog = e.detail.target.id === "live" && logs && logs.querySelector("[data-run]") ? logs : null;
  });
  document.addEventListener("htmx:afterSwap", function () {
    var fresh = document.getElementById("logs");
    if (chosenLog && fresh && fresh !== chosenLog) {
      fresh.replaceWith(chosenLog);
    }
    chosenLog = null;
  });

  // Logs open at their end, where the newest lines are. A box with a
  // "follow" control ([data-follow] naming it) is polled while its run
  // lasts: its logs stay at their end as they grow while it is ticked,
  // and keep where the reader left them when it is not.
  var opened = new WeakSet();
  function logsAtEnd(root) {
    (root || document).querySelectorAll("pre.log").forEach(function (pre) {
      if (!opened.has(pre)) {
        pre.scrollTop = pre.scrollHeight;
        opened.add(pre);
      }
    });
  }
  var readAt = {};
  document.addEventListener("htmx:beforeSwap", function () {
    document.querySelectorAll("[data-follow]").forEach(function (c) {
      var box = document.querySelector(c.dataset.follow);
      readAt[c.dataset.follow] = box ? Array.prototype.map.call(box.querySelectorAll("pre.log"), function (p) { return p.scrollTop; }) : [];
    });
  });
  function follow() {
    document.querySelectorAll("[data-follow]").forEach(function (c) {
      var box = document.querySelector(c.dataset.follow);
      if (!box) { return; }
      box.querySelectorAll("pre.log").forEach(function (pre, i) {
        opened.add(pre);
        var at = readAt[c.dataset.follow] || [];
        pre.scrollTop = c.checked || at[i] === undefined ? pre.scrollHeight : at[i];
      });
    });
  }
  var texts = new WeakMap();
  function searchLogs(input) {
    var box = document.querySelector(input.dataset.logsearch);
    if (!box) { return; }
    var q = input.value.toLowerCase(), n = 0;
    box.querySelectorAll("pre.log").forEach(function (pre) {
      if (!texts.has(pre)) { texts.set(pre, { text: pre.textContent, nodes: pre.cloneNode(true).childNodes }); }
      var orig = texts.get(pre), text = orig.text;
      pre.textContent = "";
      if (!q) {
        orig.nodes.forEach(function (n) { pre.appendChild(n.cloneNode(true)); });
        return;
      }
      var lower = text.toLowerCase(), at = 0, i;
      while ((i = lower.indexOf(q, at)) >= 0) {
        pre.appendChild(document.createTextNode(text.slice(at, i)));
        var m = document.createElement("mark");
        m.textContent = text.slice(i, i + q.length);
        pre.appendChild(m);
        n++;
        at = i + q.length;
      }
      pre.appendChild(document.createTextNode(text.slice(at)));
    });
    var count = input.closest(".logtools").querySelector("[data-logcount]");
    if (count) { count.textContent = q ? n + (n === 1 ? " match" : " matches") : ""; }
    searchLogs.current = -1;
  }
  document.addEventListener("input", function (e) {
    if (e.target.dataset && e.target.dataset.logsearch) { searchLogs(e.target); }
  });
  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-lognext]");
    if (!b) { return; }
    var marks = document.querySelectorAll(b.dataset.lognext + " pre.log mark");
    if (!marks.length) { return; }
    marks.forEach(function (m) { m.classList.remove("current"); });
    searchLogs.current = ((searchLogs.current || 0) + 1) % marks.length;
    var m = marks[searchLogs.current];
    m.classList.add("current");
    var pre = m.closest("pre");
    pre.scrollTop = m.offsetTop - pre.offsetTop - pre.clientHeight / 2;
  });
  document.addEventListener("htmx:afterSwap", function () {
    document.querySelectorAll("input[data-logsearch]").forEach(function (input) {
      if (input.value) { searchLogs(input); }
    });
    follow();
    logsAtEnd(document);
  });
  document.addEventListener("change", function (e) {
    if (e.target.dataset && e.target.dataset.follow) { follow(); }
  });
  logsAtEnd(document);

  // The server tells open pages when the scheduler's state changes.
  if (csrf && window.EventSource && document.getElementById("live")) {
    var es = new EventSource("/live");
    es.addEventListener("change", refresh);
    // Marked for whoever waits for a live page (tests do).
    es.addEventListener("open", function () { document.documentElement.setAttribute("data-live", "open"); });
    window.addEventListener("pagehide", function () { es.close(); });
  }

  // post sends a change to the JSON API and answers its decoded reply.
  function post(path, body) {
    var init = { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (v) {
        if (!r.ok) {
          var msg = v.error || r.statusText;
          if (v.errors) { msg += ": " + v.errors.join("; "); }
          throw new Error(msg);
        }
        return v;
      });
    });
  }

  // ask shows the confirmation dialog; then runs if the user confirms.
  function ask(title, body, then) {
    document.getElementById("confirm-title").textContent = title;
    var b = document.getElementById("confirm-body");
    b.textContent = "";
    if (typeof body === "string") {
      var p = document.createElement("p");
      p.textContent = body;
      b.appendChild(p);
    } else {
      b.appendChild(body);
    }
    dialog.returnValue = "";
    dialog.onclose = function () {
      if (dialog.returnValue === "ok") { then(); } else { refresh(); }
    };
    dialog.showModal();
    document.getElementById("confirm-ok").focus();
  }

  var verbs = {
    start: "Start", abort: "Abort the run of", freeze: "Freeze", reset: "Reset",
    green: "Mark as succeeded", red: "Mark as failed"
  };

  document.addEventListener("click", function (e) {
    var btn = e.target.closest("button");
    if (!btn) { return; }
    if (btn.id === "logout") {
      post("/logout").catch(function () {}).then(function () { location.href = "/login"; });
      return;
    }
    if (btn.dataset.action) {
      var task = btn.dataset.task, act = btn.dataset.action;
      if (btn.getAttribute("aria-disabled") === "true") {
        // Kept focusable, so that the reason can be read: it sends nothing.
        toast("Not now: " + btn.dataset.refusal + ".", true);
        return;
      }
      var text = btn.dataset.words || ("This sends the event " + act + " to " + task + ".");
      var form = btn.dataset.params ? paramsForm(text, JSON.parse(btn.dataset.params)) : null;
      ask(verbs[act] + " " + task + "?", form ? form.box : text, function () {
        var req = { event: act };
        if (form) { req.params = form.values(); }
        post("/api/v1/tasks/" + encodeURIComponent(task) + "/events", req)
          .then(function (v) { toast(v.message || "sent"); refresh(); })
          .catch(function (err) { toast(err.message, true); });
      });
      return;
    }
    if (btn.dataset.drain) {
      var node = btn.dataset.drain;
      ask("Drain " + node + "?", node + " hands its partitions to the other clock nodes, claims no new run, finishes the runs it holds, and exits (status 0, which a service manager should not restart). Start it again to bring it back.", function () {
        post("/api/v1/cluster/nodes/" + encodeURIComponent(node) + "/drain").then(function () {
          toast(node + " is draining");
          refresh();
        }).catch(function (err) { toast(err.message, true); });
      });
      return;
    }
    if (btn.dataset.revoke) {
      revoke(btn.dataset.revoke, btn.dataset.name);
      return;
    }
    if (btn.dataset.bulk) {
      bulk(btn.dataset.bulk);
      return;
    }
    if (btn.dataset.backfill) {
      backfill(btn.dataset.backfill, btn.dataset.zone);
      return;
    }
    if (btn.hasAttribute("data-node")) {
      nodeActions(btn.dataset.process, btn.dataset.timeperiod, btn.dataset.state);
    }
  });

  // paramsForm is the start dialog's body for a task with parameters: a
  // field for each, holding its default; values() reads them.
  function paramsForm(text, params) {
    var box = document.createElement("div");
    var p = document.createElement("p");
    p.textContent = text + " Its run gets these parameters:";
    box.appendChild(p);
    var inputs = [];
    params.forEach(function (param) {
      var label = document.createElement("label");
      label.textContent = param.name + " ";
      var input = document.createElement("input");
      input.type = "text";
      input.name = param.name;
      input.value = param.value;
      input.setAttribute("data-param", param.name);
      label.appendChild(input);
      var div = document.createElement("div");
      div.appendChild(label);
      box.appendChild(div);
      inputs.push(input);
    });
    return {
      box: box,
      values: function () {
        var v = {};
        inputs.forEach(function (input) { v[input.name] = input.value; });
        return v;
      }
    };
  }

  // The task list's selection: names kept across live updates, which
  // draw the rows again.
  var selected = new Set();
  function showSelection() {
    var boxes = document.querySelectorAll("input[data-select]");
    var all = boxes.length > 0;
    boxes.forEach(function (b) {
      b.checked = selected.has(b.dataset.select);
      all = all && b.checked;
    });
    var sa = document.querySelector("input[data-select-all]");
    if (sa) { sa.checked = all; }
    var say = document.querySelector("[data-selected]");
    if (say) { say.textContent = selected.size === 0 ? "none selected" : selected.size + " selected"; }
  }
  document.addEventListener("change", function (e) {
    var b = e.target;
    if (b.dataset && b.dataset.select) {
      if (b.checked) { selected.add(b.dataset.select); } else { selected.delete(b.dataset.select); }
      showSelection();
    } else if (b.hasAttribute && b.hasAttribute("data-select-all")) {
      document.querySelectorAll("input[data-select]").forEach(function (r) {
        if (b.checked) { selected.add(r.dataset.select); } else { selected.delete(r.dataset.select); }
      });
      showSelection();
    }
  });
  document.addEventListener("htmx:afterSwap", showSelection);

  // What each action for a selection does, and which of its tasks it
  // takes: rerun starts only the failed ones.
  var bulkActions = {
    freeze: { event: "freeze", refusal: "noFreeze", done: "froze",
      words: "Each is frozen until it is reset: nothing starts it (its occurrences are recorded skipped), and every condition clause on it holds, so the tasks waiting for it may start." },
    reset: { event: "reset", refusal: "noReset", done: "reset",
      words: "Each goes back to idle (a frozen one is unfrozen): its condition and its time trigger start it again." },
    rerun: { event: "start", refusal: "noStart", done: "started", failedOnly: true,
      words: "Each failed one starts a run now, whatever its condition." }
  };

  // bulk sends an action to the selected tasks it applies to, after a
  // confirmation that names them and those left out, and says how each
  // fared.
  function bulk(kind) {
    var a = bulkActions[kind], take = [], left = [];
    document.querySelectorAll("input[data-select]").forEach(function (b) {
      if (!selected.has(b.dataset.select)) { return; }
      var why = b.dataset[a.refusal];
      if (a.failedOnly && b.dataset.status !== "failure") { why = "it is " + b.dataset.status + ", not failed"; }
      if (why) { left.push(b.dataset.select + " (" + why + ")"); } else { take.push(b.dataset.select); }
    });
    if (take.length === 0 && left.length === 0) {
      toast("Select tasks first: the boxes at the start of each row.", true);
      return;
    }
    var box = document.createElement("div");
    var p = document.createElement("p");
    p.textContent = take.length === 0 ? "It applies to none of the selected tasks." :
      a.event[0].toUpperCase() + a.event.slice(1) + " " + take.length + (take.length === 1 ? " task: " : " tasks: ") + take.join(", ") + ". " + a.words;
    box.appendChild(p);
    if (left.length > 0) {
      var q = document.createElement("p");
      q.textContent = "Left alone: " + left.join("; ") + ".";
      box.appendChild(q);
    }
    if (take.length === 0) {
      ask("Nothing to " + a.event, box, function () {});
      okText("Close", true);
      return;
    }
    ask(a.event[0].toUpperCase() + a.event.slice(1) + " " + take.length + (take.length === 1 ? " task?" : " tasks?"), box, function () {
      var failed = [], next = 0, done = 0;
      // Four at a time: each is a request of its own, checked as its task's.
      function one() {
        if (next >= take.length) { return Promise.resolve(); }
        var name = take[next++];
        return post("/api/v1/tasks/" + encodeURIComponent(name) + "/events", { event: a.event })
          .then(function () { done++; }, function (err) { failed.push(name + ": " + err.message); })
          .then(one);
      }
      Promise.all([one(), one(), one(), one()]).then(function () {
        var text = a.done + " " + done + (done === 1 ? " task" : " tasks");
        if (failed.length > 0) { text += "; refused: " + failed.join("; "); }
        toast(text, failed.length > 0);
        selected.clear();
        refresh();
      });
    });
  }

  // revoke revokes a token once confirmed.
  function revoke(id, name) {
    ask("Revoke the token " + name + "?", "Every request made with it (" + id + "), and every session signed in with it, is refused from now on. It cannot be undone: make a new token instead.", function () {
      post("/api/v1/tokens/" + encodeURIComponent(id) + "/revoke").then(function () {
        toast("revoked " + name);
        refresh();
      }).catch(function (err) { toast(err.message, true); });
    });
  }

  // The new token's form: the token is shown once, in a dialog, to copy.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute("data-token-form")) { return; }
    e.preventDefault();
    var scope = form.elements.scope.value.split(",").map(function (s) { return s.trim(); }).filter(Boolean);
    var req = { name: form.elements.name.value.trim(), role: form.elements.role.value };
    if (scope.length > 0) { req.scope = scope; }
    if (form.elements.expires.value.trim()) { req.expires = form.elements.expires.value.trim(); }
    post("/api/v1/tokens", req).then(function (v) {
      var box = document.createElement("div");
      var p = document.createElement("p");
      p.textContent = "The token " + v.name + " (" + v.role + ", " + v.id + "). Copy it now: it is not shown again.";
      box.appendChild(p);
      var label = document.createElement("label");
      label.textContent = "Token ";
      var input = document.createElement("input");
      input.readOnly = true;
      input.value = v.token;
      input.size = 48;
      input.setAttribute("data-new-token", "");
      label.appendChild(input);
      box.appendChild(label);
      form.reset();
      ask("Token " + v.name + " made", box, refresh);
      okText("Done", true);
      input.select();
      refresh();
    }).catch(function (err) { toast(err.message, true); });
  });

  // field adds a labelled input to box and returns it.
  function field(box, label, type, name) {
    var l = document.createElement("label");
    l.textContent = label + " ";
    var input = document.createElement("input");
    input.type = type;
    input.name = name;
    input.required = true;
    l.appendChild(input);
    var div = document.createElement("div");
    div.appendChild(l);
    box.appendChild(div);
    return input;
  }

  // okText names the dialog's confirming button until it closes; alone
  // hides the cancel button meanwhile (a dialog that only shows).
  function okText(text, alone) {
    var ok = document.getElementById("confirm-ok");
    var cancel = dialog.querySelector('button[value="cancel"]');
    ok.textContent = text;
    cancel.hidden = !!alone;
    dialog.addEventListener("close", function () { ok.textContent = "Confirm"; cancel.hidden = false; }, { once: true });
  }

  var backfillWords = {
    queued: "runs", done: "already ran", pending: "already waiting", scheduled: "left to its schedule",
    excluded: "excluded by its calendar"
  };

  // backfill asks for a range, shows what a backfill of it would do (the
  // API's dry run), and runs it once confirmed.
  function backfill(task, zone) {
    var path = "/api/v1/tasks/" + encodeURIComponent(task) + "/backfill";
    var box = document.createElement("div");
    var p = document.createElement("p");
    p.textContent = "Runs the occurrences of " + task + "'s time trigger in a past range, both ends included, " +
      "as they would have run; those that ran already are left alone. Times are the server's (" + zone + ").";
    box.appendChild(p);
    var from = field(box, "From", "datetime-local", "from");
    var to = field(box, "To", "datetime-local", "to");
    var par = field(box, "Runs at once", "number", "max_parallel");
    par.min = "1";
    par.value = "1";
    ask("Backfill " + task, box, function () {
      var req = { from: from.value, to: to.value, max_parallel: Number(par.value) || 1 };
      post(path, Object.assign({ dry_run: true }, req)).then(function (v) {
        var list = document.createElement("div");
        var head = document.createElement("p");
        head.textContent = v.message + ".";
        list.appendChild(head);
        var queued = (v.occurrences || []).filter(function (o) { return o.action === "queued"; }).length;
        if ((v.occurrences || []).length > 0) {
          var table = document.createElement("table");
          var tr = table.createTHead().insertRow();
          ["Occurrence", "Backfill", "Before"].forEach(function (h) {
            var th = document.createElement("th");
            th.scope = "col";
            th.textContent = h;
            tr.appendChild(th);
          });
          var body = table.createTBody();
          v.occurrences.forEach(function (o) {
            var row = body.insertRow();
            row.insertCell().textContent = o.scheduled.replace("T", " ").replace(/:00(Z|[+-].*)$/, "");
            row.insertCell().textContent = backfillWords[o.action] || o.action;
            row.insertCell().textContent = [o.fate, o.reason, o.run_id ? "run " + o.run_id : ""].filter(Boolean).join(": ");
          });
          list.appendChild(table);
        }
        if (queued === 0) {
          ask("Backfill " + task, list, function () {});
          okText("Close", true);
          return;
        }
        ask("Backfill " + task + "?", list, function () {
          post(path, req).then(function (r) { toast(r.message); refresh(); })
            .catch(function (err) { toast(err.message, true); });
        });
        okText("Run " + queued + (queued === 1 ? " occurrence" : " occurrences"));
      }).catch(function (err) { toast(err.message, true); });
    });
    okText("Preview");
  }

  // nodeActions offers to skip or reprocess a period, showing what the
  // cascade would change before it is applied.
  function nodeActions(process, timeperiod, state) {
    var path = "/api/v1/nodes/" + encodeURIComponent(process) + "/" + encodeURIComponent(timeperiod);
    var box = document.createElement("div");
    var p = document.createElement("p");
    p.textContent = process + " " + timeperiod + " is " + state + ".";
    box.appendChild(p);
    ["skip", "reprocess"].forEach(function (verb) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = "Preview " + verb;
      b.addEventListener("click", function () {
        post(path + "/" + verb + "?dry_run=true").then(function (v) {
          dialog.close("preview");
          var list = document.createElement("div");
          var n = (v.changed || []).length;
          var head = document.createElement("p");
          head.textContent = n === 0 ? "It changes nothing." : "It changes " + n + " node(s):";
          list.appendChild(head);
          var ul = document.createElement("ul");
          (v.changed || []).forEach(function (c) {
            var li = document.createElement("li");
            li.textContent = c.process + " " + c.timeperiod + ": " + c.from + " → " + c.to;
            ul.appendChild(li);
          });
          list.appendChild(ul);
          ask(verb[0].toUpperCase() + verb.slice(1) + " " + process + " " + timeperiod + "?", list, function () {
            post(path + "/" + verb).then(function (r) {
              toast(verb + ": " + (r.changed || []).length + " node(s) changed");
              refresh();
            }).catch(function (err) { toast(err.message, true); });
          });
        }).catch(function (err) { dialog.close(); toast(err.message, true); });
      });
      box.appendChild(b);
    });
    ask("Period " + timeperiod + " of " + process, box, function () {});
    okText("Close", true);
  }

  // The header's clock ticks: the scheduler's reading when the page was
  // made, moved on by the browser's clock, in the server's zone, as the
  // server prints it. A simulated clock moves only when advanced: it
  // carries no data-tick and stays.
  (function () {
    var t = document.querySelector("header time[data-tick]");
    if (!t || !window.Intl) return;
    var zone = t.getAttribute("data-tick"), shift = 0, f;
    var offset = Date.parse(t.getAttribute("datetime")) - Date.now();
    var opts = { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false };
    try {
      f = new Intl.DateTimeFormat("sv-SE", opts);
    } catch (e) {
      // A zone the browser does not know by name (the server machine's
      // own, "Local"): its offset when the page was made.
      opts.timeZone = "UTC";
      shift = 1000 * Number(t.getAttribute("data-offset") || 0);
      f = new Intl.DateTimeFormat("sv-SE", opts);
    }
    setInterval(function () {
      var now = new Date(Date.now() + offset);
      t.textContent = f.format(new Date(now.getTime() + shift)).replace(",", "");
      t.setAttribute("datetime", now.toISOString());
    }, 1000);
  })();
})();
