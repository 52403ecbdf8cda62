// Interlock dashboard: countdowns, confirmed actions and live updates.
// Plain JavaScript, no build step. Every page works without it; it only
// adds ticking countdowns, the action buttons' requests, and updates from
// the event stream. Data comes from <meta> and data- attributes (the
// Content-Security-Policy allows no inline script).
(function () {
  "use strict";

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : "";
  }

  // The server's clock, so a countdown does not depend on the browser's.
  var serverNow = Date.parse(meta("server-now"));
  var skew = isNaN(serverNow) ? 0 : serverNow - Date.now();
  function now() { return Date.now() + skew; }

  function durText(ms) {
    var s = Math.round(Math.abs(ms) / 1000);
    var d = Math.floor(s / 86400); s -= d * 86400;
    var h = Math.floor(s / 3600); s -= h * 3600;
    var m = Math.floor(s / 60); s -= m * 60;
    if (d > 0) return d + "d " + h + "h";
    if (h > 0) return h + "h " + m + "m";
    if (m > 0) return m + "m " + s + "s";
    return s + "s";
  }

  function tick() {
    var els = document.querySelectorAll("[data-countdown]");
    for (var i = 0; i < els.length; i++) {
      var at = Date.parse(els[i].getAttribute("data-countdown"));
      if (isNaN(at)) continue;
      var left = at - now();
      els[i].textContent = left >= 0 ? "in " + durText(left) : durText(left) + " ago";
      els[i].classList.toggle("past", left < 0);
    }
  }

  // Actions: a confirmed fetch POST to the /v1 route, with the CSRF token
  // of the page; the API's answer (a refusal's reason) is shown.
  var resultID = "action-result";
  function say(text, kind) {
    var out = document.getElementById(resultID);
    if (!out) return;
    out.textContent = text;
    out.className = "action-result " + kind;
    out.setAttribute("data-result", kind);
  }

  function value(id) {
    var el = document.getElementById(id);
    return el ? el.value.trim() : "";
  }

  function actionBody(btn) {
    var kind = btn.getAttribute("data-action");
    if (kind === "rerun") {
      var reason = document.getElementById("rerun-reason");
      return { period: btn.getAttribute("data-period"), reason: reason ? reason.value : "" };
    }
    if (kind === "backfill") {
      var n = parseInt(value("backfill-max-active"), 10);
      return { from: value("backfill-from"), to: value("backfill-to"), only: value("backfill-only") || "missing", maxActive: isNaN(n) ? 1 : n };
    }
    if (kind === "cancel-backfill") return null;
    if (kind === "silence") {
      var b = { duration: value("silence-duration"), comment: value("silence-comment") };
      ["pipelines", "owners", "types", "levels"].forEach(function (f) {
        var vs = value("silence-" + f).split(",").map(function (x) { return x.trim(); }).filter(Boolean);
        if (vs.length) b[f] = vs;
      });
      return b;
    }
    if (kind === "pause") {
      var until = document.getElementById("pause-until");
      if (until && until.value) {
        var t = new Date(until.value); // the input is in the browser's time zone
        if (isNaN(t.getTime())) return null;
        return { until: t.toISOString().replace(/\.\d{3}Z$/, "Z") };
      }
      return {};
    }
    return {};
  }

  // question is what the action asks before it is sent: a backfill names
  // its range, the others say it in their data-confirm.
  function question(btn, body) {
    if (btn.getAttribute("data-action") === "silence") {
      var what = ["pipelines", "owners", "types", "levels"].filter(function (f) { return body[f]; })
        .map(function (f) { return f + "=" + body[f].join(","); }).join(" ");
      return "Silence " + what + " for " + body.duration + "?" +
        (btn.getAttribute("data-extend") ? " Silence " + btn.getAttribute("data-extend") + " is expired once this one is saved." : "");
    }
    if (btn.getAttribute("data-action") === "backfill") {
      return "Backfill " + btn.getAttribute("data-pipeline") + " from " + body.from + " to " + body.to +
        " (only " + body.only + ", at most " + body.maxActive + " at once)? Each period runs on its own sensors.";
    }
    return btn.getAttribute("data-confirm") || "Are you sure?";
  }

  function act(btn) {
    var kind = btn.getAttribute("data-action");
    var method = btn.getAttribute("data-method") || "POST";
    resultID = btn.getAttribute("data-result") || "action-result";
    var body = actionBody(btn);
    if (body === null && method === "POST") { say("That date is not valid.", "error"); return; }
    if (!window.confirm(question(btn, body))) return;
    btn.disabled = true;
    say("Sending…", "pending");
    var init = {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": meta("csrf-token") }
    };
    if (method === "POST") init.body = JSON.stringify(body);
    fetch(btn.getAttribute("data-url"), init).then(function (resp) {
      return resp.text().then(function (text) {
        var doc = null;
        try { doc = JSON.parse(text); } catch (e) { doc = null; }
        if (!resp.ok) {
          var msg = doc && doc.error && doc.error.message ? doc.error.message : "HTTP " + resp.status;
          say("Refused: " + msg, "error");
          return;
        }
        if (doc && doc.accepted === false) {
          say("Refused: " + (doc.reason || "the rerun was rejected"), "refused");
          return;
        }
        if (kind === "backfill" && doc && doc.backfill) {
          var runs = (doc.periods || []).filter(function (p) { return p.run; }).length;
          say("Backfill " + doc.backfill.id + " started: " + runs + " of " + (doc.periods || []).length + " periods to run.", "done");
        } else if (kind === "silence" && doc && doc.id) {
          var old = btn.getAttribute("data-extend");
          if (!old) { say("Silence " + doc.id + " saved: it ends " + doc.endsAt + ".", "done"); refreshSections(); return; }
          // Extending: the new silence first, then the one it replaces.
          return fetch("/v1/silences/" + encodeURIComponent(old), { method: "DELETE", credentials: "same-origin", headers: { "X-CSRF-Token": meta("csrf-token") } })
            .then(function (r) {
              say(r.ok ? "Silence " + doc.id + " saved (it ends " + doc.endsAt + "); " + old + " expired." :
                "Silence " + doc.id + " saved, but " + old + " could not be expired (HTTP " + r.status + ").", r.ok ? "done" : "error");
              refreshSections();
            });
        } else if (kind === "rerun") {
          followRerun(btn.getAttribute("data-period"));
          return;
        } else if (kind === "cancel-backfill" && doc) {
          say("Backfill " + doc.id + " " + doc.state + ".", "done");
        } else {
          say("Done.", "done");
        }
        refreshSections();
      });
    }).catch(function (err) {
      say("The request failed: " + err, "error");
    }).then(function () { btn.disabled = false; });
  }

  // A rerun's result follows its run: the period's lock (#lock) is read
  // again with each live update, and the result names the rerun's
  // generation, links to it and says how it ended. It lives outside the
  // live sections, so no update wipes it.
  var following = null;
  function lockOf(doc) {
    var l = doc.getElementById("lock");
    if (!l) return null;
    return { state: l.getAttribute("data-run-state") || "", generation: parseInt(l.getAttribute("data-generation"), 10),
      outcome: l.getAttribute("data-outcome") || "", failure: l.getAttribute("data-failure") || "" };
  }
  function followRerun(period) {
    var now = lockOf(document);
    var head = document.getElementById("pipeline");
    following = { period: period, after: now && !isNaN(now.generation) ? now.generation : -1, pipeline: head ? head.getAttribute("data-pipeline") : "" };
    say("Rerun of " + period + " accepted: waiting for its run…", "done");
    refreshSections();
  }
  function showRerun() {
    if (!following) return;
    var out = document.getElementById("action-result");
    var l = lockOf(document);
    if (!out || !l || isNaN(l.generation) || l.generation <= following.after) return;
    var ended = l.state === "COMPLETED" || l.state === "FAILED_FINAL";
    out.textContent = "Rerun accepted: ";
    var a = document.createElement("a");
    a.href = "/ui/pipelines/" + encodeURIComponent(following.pipeline) + "/periods/" + encodeURIComponent(following.period) + "#lock";
    a.id = "rerun-attempt";
    a.textContent = following.period + " generation " + l.generation;
    out.appendChild(a);
    var how = ended ? (l.state === "COMPLETED" ? " succeeded." : " failed" + (l.outcome ? " (" + l.outcome + ")" : "") + (l.failure ? ": " + l.failure : ".")) :
      " is " + l.state.toLowerCase() + "…";
    out.appendChild(document.createTextNode(how));
    out.setAttribute("data-run-state", l.state);
    out.className = "action-result " + (ended && l.state !== "COMPLETED" ? "refused" : "done");
    if (ended) following = null;
  }

  // The new-silence form: its preview follows the matchers as they are
  // typed (the page's own preview, ?fragment=preview).
  function previewSilence() {
    var form = document.getElementById("silence-fields");
    var box = document.getElementById("silence-preview");
    if (!form || !box) return;
    later("preview", function () {
      var q = new URLSearchParams(new FormData(form));
      q.set("fragment", "preview");
      fetch("/ui/silences?" + q.toString(), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (text === null) return;
          var doc = parseHTML(text);
          box.textContent = "";
          Array.prototype.forEach.call(doc.body.childNodes, function (n) { box.appendChild(document.importNode(n, true)); });
          box.setAttribute("data-for", q.toString());
        }).catch(function () {});
    });
  }
  document.addEventListener("input", function (ev) {
    if (ev.target && ev.target.closest && ev.target.closest("#silence-fields")) previewSilence();
  });

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest ? ev.target.closest("button[data-action]") : null;
    if (btn) { ev.preventDefault(); act(btn); }
  });

  // Live updates. The page names its stream in <meta name="live-stream">;
  // each message is one event as GET /v1/events lists it. Without the
  // stream (an older server, a proxy that cuts it) nothing happens.
  var pending = {};
  function later(key, f) {
    if (pending[key]) return;
    pending[key] = setTimeout(function () { delete pending[key]; f(); }, 300);
  }

  function parseHTML(text) {
    return new DOMParser().parseFromString(text, "text/html");
  }

  function sameOrigin(path) { return path.charAt(0) === "/" && path.charAt(1) !== "/"; }

  // Overview: move a pipeline between the counts at the top when its
  // row changes state (the counts cover every page of the overview).
  // The problems view's count follows its states.
  var problemStates = ["breached", "failed", "at-risk"];
  function recount(state, by) {
    if (problemStates.indexOf(state) >= 0) bump(document.getElementById("view-problems"), by);
    bump(state && document.getElementById("count-" + state), by);
  }
  function bump(el, by) {
    if (!el) return;
    var n = Math.max(0, (parseInt(el.getAttribute("data-count"), 10) || 0) + by);
    el.setAttribute("data-count", String(n));
    var shown = el.querySelector(".n");
    if (shown) shown.textContent = String(n);
    el.classList.toggle("zero", n === 0);
  }

  // Overview: re-read the row of the pipeline an event concerns.
  function refreshRow(id) {
    var rows = document.querySelectorAll("tr[data-pipeline]");
    var row = null;
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute("data-pipeline") === id) row = rows[i];
    if (!row) return;
    later("row:" + id, function () {
      fetch("/ui/pipelines/" + encodeURIComponent(id) + "?fragment=row", { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (!text || !row.parentNode) return;
          var fresh = parseHTML(text).querySelector("tr[data-pipeline]");
          if (!fresh) return;
          fresh.classList.add("flash");
          var was = row.getAttribute("data-state"), now = fresh.getAttribute("data-state");
          row.parentNode.replaceChild(document.importNode(fresh, true), row);
          if (was !== now) { recount(was, -1); recount(now, 1); }
          tick();
        }).catch(function () {});
    });
  }

  // Pipeline, period and health pages: re-read the page and swap the
  // sections marked data-live-section (the action inputs keep what was
  // typed).
  function refreshSections() {
    later("sections", function () {
      if (!sameOrigin(location.pathname)) return;
      fetch(location.pathname + location.search, { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (text) {
          if (!text) return;
          var doc = parseHTML(text);
          var olds = document.querySelectorAll("[data-live-section]");
          for (var i = 0; i < olds.length; i++) {
            var fresh = olds[i].id ? doc.getElementById(olds[i].id) : null;
            if (fresh) olds[i].parentNode.replaceChild(document.importNode(fresh, true), olds[i]);
          }
          var head = document.getElementById("pipeline"), freshHead = doc.getElementById("pipeline");
          if (head && freshHead) head.setAttribute("data-state", freshHead.getAttribute("data-state"));
          var resume = document.getElementById("action-resume"), freshResume = doc.getElementById("action-resume");
          if (resume && freshResume) resume.disabled = freshResume.disabled;
          showRerun();
          tick();
        }).catch(function () {});
    });
  }

  // Events page: the event as a row at the top, newest first (text only,
  // never HTML).
  function prependEvent(env) {
    var body = document.getElementById("events-body");
    if (!body || !env || !env.id) return;
    if (body.querySelector('tr[data-event="' + CSS.escape(env.id) + '"]')) return;
    var empty = body.querySelector("tr.empty");
    if (empty) empty.remove();
    var d = env.detail || {};
    var tr = document.createElement("tr");
    tr.className = "ev level-" + (d.level || "info") + " flash";
    tr.setAttribute("data-event", env.id);
    tr.setAttribute("data-type", env["detail-type"] || "");
    tr.setAttribute("data-level", d.level || "");
    tr.setAttribute("data-pipeline", d.pipelineId || "");
    function cell(text, href, cls) {
      var td = document.createElement("td");
      var el = td;
      if (href) { el = document.createElement("a"); el.href = href; td.appendChild(el); }
      el.textContent = text || "";
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    cell((env.time || "").replace("T", " ").replace(/(\.\d+)?Z$/, "Z"), "", "c-time");
    cell(env["detail-type"]);
    cell(d.pipelineId, d.pipelineId ? "/ui/pipelines/" + encodeURIComponent(d.pipelineId) : "");
    cell(d.date, d.pipelineId && d.date ? "/ui/pipelines/" + encodeURIComponent(d.pipelineId) + "/periods/" + encodeURIComponent(d.date) : "", "c-period");
    cell(d.message, "", "ev-msg");
    var b = d.blockedBy;
    if (b && b.pipelineId) {
      // As the server renders it (partials.html, blocked-by).
      var span = document.createElement("span");
      span.className = "blocked-by";
      span.setAttribute("data-blocked-by", b.pipelineId);
      var a = document.createElement("a");
      a.href = "/ui/pipelines/" + encodeURIComponent(b.pipelineId) + "/periods/" + encodeURIComponent(b.date || "");
      a.textContent = b.pipelineId + " " + (b.date || "");
      span.appendChild(document.createTextNode(" blocked by "));
      span.appendChild(a);
      span.appendChild(document.createTextNode(" (" + (b.reason || "") + "), not paged on its own"));
      tr.lastChild.appendChild(span);
    }
    if (env.silencedBy) {
      // As the server renders it (partials.html, silenced-mark): stored
      // and shown, not sent (docs/silences.md).
      tr.className += " silenced";
      tr.setAttribute("data-silenced-by", env.silencedBy);
      var mark = document.createElement("span");
      mark.className = "silenced-by";
      mark.textContent = " silenced by " + env.silencedBy;
      tr.lastChild.appendChild(mark);
    }
    var fields = d.detail && typeof d.detail === "object" ? Object.keys(d.detail).sort() : [];
    if (fields.length) {
      // As the server renders it (events.html, event-row): one line,
      // opened on a click.
      var det = document.createElement("details"), sum = document.createElement("summary"), dl = document.createElement("dl");
      det.className = "ev-detail";
      sum.className = "detail-line";
      sum.textContent = fields.map(function (k) { return k + "=" + detailText(d.detail[k]); }).join(" · ");
      fields.forEach(function (k) {
        var dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = k;
        dd.textContent = detailText(d.detail[k]);
        dl.appendChild(dt); dl.appendChild(dd);
      });
      det.appendChild(sum); det.appendChild(dl);
      tr.lastChild.appendChild(det);
    }
    body.insertBefore(tr, body.firstChild);
  }

  function detailText(v) { return typeof v === "string" ? v : JSON.stringify(v); }

  function onEvent(env) {
    var d = (env && env.detail) || {};
    if (document.getElementById("board")) {
      if (d.pipelineId) refreshRow(d.pipelineId);
      return;
    }
    var page = document.getElementById("pipeline");
    if (page) {
      if (d.pipelineId === page.getAttribute("data-pipeline")) refreshSections();
      return;
    }
    if (document.querySelector("[data-live-section]")) {
      refreshSections();
      return;
    }
    prependEvent(env);
  }

  function follow() {
    var url = meta("live-stream");
    if (!url || !window.EventSource || !sameOrigin(url)) return;
    var status = document.getElementById("live-status");
    var es;
    try { es = new EventSource(url, { withCredentials: true }); } catch (e) { return; }
    es.onopen = function () { if (status) status.setAttribute("data-live", "on"); };
    es.onerror = function () {
      if (status) status.setAttribute("data-live", "off");
      // A stream that is not there (404, 401) closes for good: stay quiet.
    };
    // Each message is named by its event type (event: JOB_FAILED), so a
    // listener per type of the catalogue (<meta name="event-types">), and
    // onmessage for unnamed ones.
    function handle(m) {
      var env = null;
      try { env = JSON.parse(m.data); } catch (e) { return; }
      onEvent(env);
    }
    es.onmessage = handle;
    meta("event-types").split(",").forEach(function (t) {
      if (t) es.addEventListener(t, handle);
    });
  }

  function start() {
    tick();
    setInterval(tick, 1000);
    follow();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
