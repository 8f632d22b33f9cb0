// Passkeys: register one (people page) and approve or reject with one
// (approval page). The server makes every challenge and checks every
// answer; this file only carries them between it and the authenticator.
(function () {
  "use strict";

  function fromB64u(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64u(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function say(form, text, bad) {
    var p = form.querySelector(".passkey-status");
    if (p) {
      p.textContent = text;
      p.classList.toggle("bad", !!bad);
    }
  }
  function post(url, fields) {
    var body = new URLSearchParams();
    Object.keys(fields).forEach(function (k) { body.append(k, fields[k]); });
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": fields.csrf },
      body: body
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (!r.ok) throw new Error(j.error || ("The server answered " + r.status + "."));
        return j;
      });
    });
  }
  function supported(form) {
    if (window.PublicKeyCredential && navigator.credentials) return true;
    say(form, "This browser does not support passkeys.", true);
    return false;
  }
  function busy(form, on) {
    form.querySelectorAll("button").forEach(function (b) { b.disabled = on; });
  }
  // ready enables a form's buttons, which the page sends disabled: a click
  // before this script has bound its handler would post the form itself
  // and show the person the server's JSON instead of asking their
  // authenticator. A browser without passkeys keeps them disabled.
  function ready(form) {
    if (supported(form)) busy(form, false);
  }

  var reg = document.getElementById("passkey-register");
  if (reg) {
    reg.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!supported(reg)) return;
      var csrf = reg.elements.csrf.value;
      busy(reg, true);
      say(reg, "Asking your authenticator…");
      var token = reg.elements.token.value;
      reg.elements.token.value = "";
      post("/people/passkeys/begin", { csrf: csrf, token: token }).then(function (o) {
        var pk = o.publicKey;
        pk.challenge = fromB64u(pk.challenge);
        pk.user.id = fromB64u(pk.user.id);
        pk.excludeCredentials = (pk.excludeCredentials || []).map(function (c) { return { type: c.type, id: fromB64u(c.id) }; });
        return navigator.credentials.create({ publicKey: pk }).then(function (cred) {
          var r = cred.response;
          var out = {
            id: cred.id, rawId: toB64u(cred.rawId), type: cred.type,
            response: { clientDataJSON: toB64u(r.clientDataJSON), attestationObject: toB64u(r.attestationObject),
              transports: r.getTransports ? r.getTransports() : [] },
            clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
            authenticatorAttachment: cred.authenticatorAttachment || undefined
          };
          return post("/people/passkeys/finish", { csrf: csrf, pending: o.pending, credential: JSON.stringify(out) });
        });
      }).then(function (j) {
        say(reg, "Passkey " + j.key_id + " registered.");
        window.location.assign(j.redirect);
      }).catch(function (e) {
        say(reg, e.message || String(e), true);
        busy(reg, false);
      });
    });
    ready(reg);
  }

  var form = document.getElementById("passkey-form");
  if (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!supported(form)) return;
      var decision = ev.submitter ? ev.submitter.value : "approve";
      var csrf = form.elements.csrf.value;
      var reason = form.elements.reason.value;
      if (decision === "reject" && !reason.trim()) {
        say(form, "A rejection needs a reason: say what should change.", true);
        form.elements.reason.focus();
        return;
      }
      var path = form.getAttribute("action").replace(/\/begin$/, "");
      busy(form, true);
      say(form, "Asking your authenticator to sign the statement…");
      post(path + "/begin", { csrf: csrf, decision: decision, reason: reason, digest: form.elements.digest.value }).then(function (o) {
        var pk = o.publicKey;
        pk.challenge = fromB64u(pk.challenge);
        pk.allowCredentials = pk.allowCredentials.map(function (c) { return { type: c.type, id: fromB64u(c.id) }; });
        return navigator.credentials.get({ publicKey: pk }).then(function (a) {
          var r = a.response;
          var out = {
            id: a.id, rawId: toB64u(a.rawId), type: a.type,
            response: { clientDataJSON: toB64u(r.clientDataJSON), authenticatorData: toB64u(r.authenticatorData),
              signature: toB64u(r.signature), userHandle: r.userHandle ? toB64u(r.userHandle) : "" }
          };
          return post(path + "/finish", { csrf: csrf, pending: o.pending, credential: JSON.stringify(out) });
        });
      }).then(function (j) {
        say(form, "Recorded.");
        window.location.assign(j.redirect);
      }).catch(function (e) {
        say(form, e.message || String(e), true);
        busy(form, false);
      });
    });
    ready(form);
  }
})();
