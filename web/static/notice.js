// The server's notice (the demo's "ShopLite is being built"): the page
// asks for news every two seconds and updates the note in place; once
// the notice is gone it says so, with a link to reload the page. A
// failure is final: the page stops asking. Progressive: without this
// script the note is as the page was rendered.
(function () {
  'use strict';

  var box = document.getElementById('notice');
  var heading = document.getElementById('notice-heading');
  var text = document.getElementById('notice-text');
  if (!box || !heading || !text || !window.fetch || box.getAttribute('data-failed')) {
    return;
  }

  function ready() {
    box.className = 'site-notice callout';
    heading.textContent = box.getAttribute('data-ready') || 'Done.';
    text.textContent = ' ';
    var reload = document.createElement('a');
    reload.href = window.location.href;
    reload.id = 'notice-reload';
    reload.textContent = 'Reload the page';
    text.appendChild(reload);
  }

  function poll() {
    fetch('/desk/notice', { credentials: 'same-origin', headers: { 'Accept': 'application/json' } }).then(function (res) {
      if (res.status === 204) {
        ready();
        return null;
      }
      return res.status === 200 ? res.json() : undefined;
    }).then(function (n) {
      if (n === null) {
        return;
      }
      if (n) {
        heading.textContent = n.heading;
        text.textContent = n.text;
        if (n.failed) {
          box.className = 'site-notice alert';
          return;
        }
      }
      setTimeout(poll, 2000);
    }).catch(function () {
      setTimeout(poll, 5000);
    });
  }

  setTimeout(poll, 2000);
}());
