// The reporter's pages (see docs/web.md). Everything here is a convenience:
// the pages work without it, and the server checks everything it says.
//
//  - The answer form: "No" needs what is different or still goes wrong.
//  - The page after filing a report: a button that copies the tracking
//    link (the clipboard API, else the link is selected for Ctrl+C).
//  - The tracking page: the page is read again every 30 seconds while it is
//    open and visible, for half an hour at most. A new state replaces the
//    page's contents in place, unless the reporter has started to fill in
//    a form: then the page only says that there is news, and keeps what
//    they typed. Tracking pages share a per-address rate limit (60 a
//    minute), so polling stays far below it and waits out a 429.
(function () {
  'use strict';

  // --- the answer form -------------------------------------------------
  function bindAnswer() {
    var no = document.getElementById('answer-no');
    var yes = document.getElementById('answer-yes');
    var text = document.getElementById('answer-text');
    if (!no || !yes || !text) {
      return;
    }
    function sync() {
      text.required = no.checked;
    }
    no.addEventListener('change', sync);
    yes.addEventListener('change', sync);
    sync();
  }
  bindAnswer();

  // --- the copy button ---------------------------------------------------
  function bindCopy() {
    var button = document.getElementById('copy-link');
    var link = document.getElementById('tracking-link');
    var status = document.getElementById('copy-status');
    if (!button || !link || !status) {
      return;
    }
    var url = link.href;
    function selectLink() {
      var range = document.createRange();
      range.selectNodeContents(link);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    function fallback() {
      selectLink();
      var copied = false;
      try {
        copied = document.execCommand('copy');
      } catch (e) {
        copied = false;
      }
      status.textContent = copied ? 'Link copied.' : 'The link is selected: press Ctrl+C (⌘C on a Mac) to copy it.';
    }
    button.addEventListener('click', function () {
      status.textContent = '';
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(url).then(function () {
          status.textContent = 'Link copied.';
        }, fallback);
      } else {
        fallback();
      }
    });
    button.hidden = false;
  }
  bindCopy();

  // --- the tracking page's refresh ------------------------------------------
  var live = document.getElementById('track-live');
  if (!live || !window.fetch || !window.DOMParser) {
    return;
  }
  var EVERY = 30000; // never more often than this
  var SLOWER = 60000; // after the first ten minutes
  var MAX_POLLS = 40; // about half an hour, then the Refresh link
  var polls = 0;
  var timer = null;
  var last = Date.now();
  var stopped = false;

  function say(msg) {
    var s = document.getElementById('track-status');
    if (s) {
      s.textContent = msg;
    }
  }

  // typing reports whether a form holds anything of the reporter's: a
  // choice made or text written (also what the server sent back with an
  // error, which a fresh page would not have), or they are in it.
  function typing() {
    var forms = live.querySelectorAll('form');
    for (var i = 0; i < forms.length; i++) {
      var els = forms[i].elements;
      for (var j = 0; j < els.length; j++) {
        var el = els[j];
        if (el.type === 'hidden') {
          continue;
        }
        if ((el.type === 'radio' || el.type === 'checkbox') && el.checked) {
          return true;
        }
        if ((el.tagName === 'TEXTAREA' || el.type === 'text') && el.value !== '') {
          return true;
        }
      }
      if (forms[i].contains(document.activeElement)) {
        return true;
      }
    }
    return false;
  }

  function delay() {
    return polls < 20 ? EVERY : SLOWER;
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = null;
    if (stopped || document.hidden) {
      return;
    }
    timer = setTimeout(poll, ms);
  }

  function stop(msg) {
    stopped = true;
    clearTimeout(timer);
    say(msg);
  }

  function poll() {
    timer = null;
    if (document.hidden || stopped) {
      return;
    }
    if (polls >= MAX_POLLS) {
      stop('Automatic updates have stopped. Use Refresh to see the latest.');
      return;
    }
    polls++;
    last = Date.now();
    fetch(live.getAttribute('data-poll'), {credentials: 'same-origin', cache: 'no-store', headers: {'Accept': 'text/html'}})
      .then(function (res) {
        if (res.status === 429) {
          var wait = parseInt(res.headers.get('Retry-After'), 10);
          schedule(Math.max(delay(), (isNaN(wait) ? 60 : wait) * 1000));
          return null;
        }
        if (!res.ok) {
          // Gone (404) or broken: the reporter can still use Refresh.
          stop('Automatic updates have stopped. Use Refresh to see the latest.');
          return null;
        }
        return res.text();
      })
      .then(function (html) {
        if (html === null || html === undefined) {
          return;
        }
        update(html);
        schedule(delay());
      })
      .catch(function () {
        schedule(delay() * 2);
      });
  }

  function update(html) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    var fresh = doc.getElementById('track-live');
    if (!fresh || fresh.getAttribute('data-version') === live.getAttribute('data-version')) {
      return;
    }
    if (typing()) {
      say('There is news on your report. Send your answer, or use Refresh to see it (what you typed here is not sent).');
      return;
    }
    // The fresh page is this server's own escaped markup; nodes parsed by
    // DOMParser run no script, and the CSP allows none inline anyway.
    var open = {};
    var det = live.querySelectorAll('details[id]');
    for (var i = 0; i < det.length; i++) {
      open[det[i].id] = det[i].open;
    }
    live.replaceChildren.apply(live, Array.prototype.map.call(fresh.childNodes, function (n) {
      return document.importNode(n, true);
    }));
    live.setAttribute('data-version', fresh.getAttribute('data-version'));
    document.title = doc.title;
    var det2 = live.querySelectorAll('details[id]');
    for (var j = 0; j < det2.length; j++) {
      if (open[det2[j].id]) {
        det2[j].open = true;
      }
    }
    bindAnswer();
    say('Updated just now.');
  }

  document.addEventListener('visibilitychange', function () {
    if (document.hidden) {
      clearTimeout(timer);
      timer = null;
      return;
    }
    // Back on the page: read it again once a full interval has passed
    // since the last read, not sooner.
    schedule(Math.max(0, delay() - (Date.now() - last)));
  });
  schedule(delay());
}());
