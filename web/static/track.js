// The tracking page's answer form: "No" needs what is different or still
// goes wrong. The server enforces it; this only says so before sending.
(function () {
  'use strict';

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
}());
