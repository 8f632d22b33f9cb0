// The case page's live updates: new ledger events of this case are added
// to the timeline as they happen, and when the case changes state a
// notice offers a reload (never done for the person: what they typed in a
// form stays). Every string from the stream is set as text, never markup.
(function () {
  "use strict";
  var live = document.getElementById("case-live");
  var list = document.getElementById("timeline");
  if (!live || !list || !window.EventSource) return;
  var caseID = live.getAttribute("data-case");
  var shownState = live.getAttribute("data-state");
  var evidence = { live: true, replayed: true, authored: true, simulated: true };
  var last = 0;
  list.querySelectorAll("li[data-seq]").forEach(function (li) {
    var n = parseInt(li.getAttribute("data-seq"), 10);
    if (n > last) last = n;
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function badge(type) {
    if (!evidence[type]) type = "live"; // the server only sends these four
    return el("span", "badge evidence-" + type, type);
  }
  function who(d) {
    var w = el("span", "who", "by ");
    var a = el("span", "actor", d.actor);
    a.title = d.actor_id;
    w.appendChild(a);
    return w;
  }
  function when(d) {
    var t = el("time", "when", d.time.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC"));
    t.setAttribute("datetime", d.time);
    return t;
  }
  function add(d) {
    if (d.seq <= last) return; // already on the page
    last = d.seq;
    var group = d.task ? list.querySelector('li.task-group[data-task="' + CSS.escape(d.task) + '"] ul.task-events') : null;
    var li = el("li", group ? "" : "line new");
    li.setAttribute("data-seq", String(d.seq));
    li.setAttribute("data-type", d.type);
    var head = el("span", "event-head");
    head.appendChild(badge(d.evidence));
    head.appendChild(document.createTextNode(" "));
    if (group) {
      head.appendChild(el("code", "", d.type));
      head.appendChild(document.createTextNode(" "));
    }
    head.appendChild(el("span", "what", d.summary || d.type));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(who(d));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(when(d));
    li.appendChild(head);
    if (group) {
      group.appendChild(li);
      group.closest("li.task-group").classList.add("new");
    } else {
      list.appendChild(li);
    }
  }
  function moved(d) {
    if (!d.state || d.state === shownState) return;
    var box = document.getElementById("case-moved");
    var text = document.getElementById("case-moved-text");
    if (!box || !text) return;
    text.textContent = "The case moved: it is now " + d.state.replace(/_/g, " ") + ".";
    box.hidden = false;
    document.body.setAttribute("data-case-moved", d.state);
  }

  var src = new EventSource("/cases/" + encodeURIComponent(caseID) + "/events?after=" + last);
  src.addEventListener("open", function () {
    live.hidden = false;
    live.textContent = "Live: new events of this case appear below as they happen.";
    document.body.setAttribute("data-case-live", "on");
  });
  src.addEventListener("error", function () {
    document.body.setAttribute("data-case-live", "off");
  });
  src.addEventListener("event", function (m) {
    add(JSON.parse(m.data));
  });
  src.addEventListener("moved", function (m) {
    var d = JSON.parse(m.data);
    add(d);
    moved(d);
  });
})();
