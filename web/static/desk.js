// The desk's live updates: new cases appear at the top of the list and
// rows change in place, without reloading. A changed case's row is asked
// of the server again (/desk/rows/{id}), which words its state and who it
// waits on; the "Needs me" table gains or loses it as it starts or stops
// waiting on you, and its counts follow. Progressive: without this script
// (or without EventSource) the desk is a plain page.
(function () {
  'use strict';

  var table = document.getElementById('cases');
  var needs = document.getElementById('needs');
  var status = document.getElementById('live-status');
  if (!table || !window.EventSource || !window.fetch) {
    return;
  }
  // The latest known version of each case, so that a row fetched before
  // a newer transition is fetched again, and an older one never wins.
  var latest = {};

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function rowOf(tbl, caseID) {
    if (!tbl) {
      return null;
    }
    var rows = tbl.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].getAttribute('data-case') === caseID) {
        return rows[i];
      }
    }
    return null;
  }

  function versionOf(tr) {
    return parseInt(tr.getAttribute('data-version') || '0', 10);
  }

  // recount sets the inbox's count and its per-action counts from the
  // rows it holds.
  function recount() {
    if (!needs) {
      return;
    }
    var rows = needs.tBodies[0].rows;
    var total = document.getElementById('needs-count');
    if (total) {
      total.textContent = String(rows.length);
    }
    needs.hidden = rows.length === 0;
    var items = document.querySelectorAll('#needs-counts .count-item');
    for (var i = 0; i < items.length; i++) {
      var n = 0;
      for (var j = 0; j < rows.length; j++) {
        if (rows[j].getAttribute('data-action') === items[i].getAttribute('data-action')) {
          n++;
        }
      }
      var strong = items[i].querySelector('strong');
      if (strong) {
        strong.textContent = String(n);
      }
    }
  }

  // place puts a row fetched from the server into tbl: in place of the
  // case's row if it has one (unless that one is newer), else at the top.
  function place(tbl, caseID, html, fresh) {
    var have = rowOf(tbl, caseID);
    if (!html) {
      if (have && tbl === needs) {
        have.parentNode.removeChild(have);
      }
      return;
    }
    var tpl = document.createElement('template');
    tpl.innerHTML = html.trim();
    var tr = tpl.content.querySelector('tr');
    if (!tr) {
      return;
    }
    if (have) {
      if (versionOf(have) > versionOf(tr)) {
        return;
      }
      tr.classList.add('updated');
      have.parentNode.replaceChild(tr, have);
    } else {
      if (!fresh && tbl === table) {
        return; // an older case not on this page of the list
      }
      tr.classList.add('fresh');
      tbl.tBodies[0].insertBefore(tr, tbl.tBodies[0].firstChild);
    }
    if (tbl === table) {
      var none = document.getElementById('no-cases');
      if (none) {
        none.parentNode.removeChild(none);
      }
    }
  }

  // refresh asks the server for the case's rows: the list's (with this
  // desk's filters: 204 when it does not match them) and the inbox's
  // (204 when it does not wait on you).
  function refresh(caseID, fresh) {
    var want = latest[caseID] || 0;
    var get = function (query) {
      return fetch('/desk/rows/' + encodeURIComponent(caseID) + query, {
        credentials: 'same-origin',
        headers: { 'Accept': 'text/html' }
      }).then(function (res) {
        return res.status === 200 ? res.text() : null;
      });
    };
    Promise.all([get(window.location.search), needs ? get('?needs=1') : Promise.resolve(null)]).then(function (got) {
      place(table, caseID, got[0], fresh);
      if (needs) {
        place(needs, caseID, got[1], true);
        recount();
      }
      var tr = rowOf(table, caseID) || rowOf(needs, caseID);
      if (tr && want && versionOf(tr) < want) {
        // A transition arrived while the row was on its way.
        setTimeout(function () { refresh(caseID, false); }, 250);
      }
    }).catch(function () {});
  }

  function parse(ev) {
    try {
      return JSON.parse(ev.data);
    } catch (e) {
      return null;
    }
  }

  var es = new EventSource('/desk/events');
  es.onopen = function () {
    document.body.setAttribute('data-live', 'on');
    say('Live: new cases and state changes appear as they happen.');
  };
  es.onerror = function () {
    if (es.readyState === EventSource.CLOSED) {
      document.body.setAttribute('data-live', 'off');
      say('Live updates stopped. Reload the page to see the latest.');
    } else {
      document.body.setAttribute('data-live', 'reconnecting');
      say('Reconnecting…');
    }
  };
  es.addEventListener('case.created', function (ev) {
    var d = parse(ev);
    if (d && d.case_id) {
      refresh(d.case_id, true);
    }
  });
  es.addEventListener('case.transitioned', function (ev) {
    var d = parse(ev);
    if (!d || !d.case_id || !d.payload || typeof d.payload.to !== 'string') {
      return;
    }
    var version = typeof d.payload.version === 'number' ? d.payload.version : 0;
    if (version && version <= (latest[d.case_id] || 0)) {
      return;
    }
    latest[d.case_id] = version;
    refresh(d.case_id, false);
  });
  window.addEventListener('pagehide', function () {
    es.close();
  });
}());
