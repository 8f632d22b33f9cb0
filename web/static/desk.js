// The desk's live updates: new cases appear at the top of the table and
// states change in place, without reloading. Progressive: without this
// script (or without EventSource) the desk is a plain page.
(function () {
  'use strict';

  var table = document.getElementById('cases');
  var status = document.getElementById('live-status');
  if (!table || !window.EventSource || !window.fetch) {
    return;
  }
  var tbody = table.tBodies[0];
  // The latest known transition of each case, so that an update that
  // arrives while its row is still being fetched is not lost.
  var latest = {};

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  function rowOf(caseID) {
    var rows = tbody.rows;
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].getAttribute('data-case') === caseID) {
        return rows[i];
      }
    }
    return null;
  }

  // apply moves a row to a newer state; an older one never overwrites it.
  function apply(tr, to, version) {
    var have = parseInt(tr.getAttribute('data-version') || '0', 10);
    if (version && version <= have) {
      return;
    }
    var cell = tr.querySelector('td.state');
    if (cell) {
      cell.textContent = to;
    }
    if (version) {
      tr.setAttribute('data-version', String(version));
    }
    tr.classList.add('updated');
  }

  function insert(caseID) {
    if (rowOf(caseID)) {
      return;
    }
    // The row comes from the server, which applies this desk's filters
    // (204: the case does not match them).
    fetch('/desk/rows/' + encodeURIComponent(caseID) + window.location.search, {
      credentials: 'same-origin',
      headers: { 'Accept': 'text/html' }
    }).then(function (res) {
      return res.status === 200 ? res.text() : null;
    }).then(function (html) {
      if (!html || rowOf(caseID)) {
        return;
      }
      var tpl = document.createElement('template');
      tpl.innerHTML = html.trim();
      var tr = tpl.content.querySelector('tr');
      if (!tr) {
        return;
      }
      tr.classList.add('fresh');
      tbody.insertBefore(tr, tbody.firstChild);
      var none = document.getElementById('no-cases');
      if (none) {
        none.parentNode.removeChild(none);
      }
      var l = latest[caseID];
      if (l) {
        apply(tr, l.to, l.version);
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
      insert(d.case_id);
    }
  });
  es.addEventListener('case.transitioned', function (ev) {
    var d = parse(ev);
    if (!d || !d.case_id || !d.payload || typeof d.payload.to !== 'string') {
      return;
    }
    var version = typeof d.payload.version === 'number' ? d.payload.version : 0;
    var l = latest[d.case_id];
    if (!l || version > l.version) {
      latest[d.case_id] = { to: d.payload.to, version: version };
    }
    var tr = rowOf(d.case_id);
    if (tr) {
      apply(tr, d.payload.to, version);
    }
  });
  window.addEventListener('pagehide', function () {
    es.close();
  });
}());
