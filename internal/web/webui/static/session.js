// What every page of the configuration manager does when its session is
// gone (signed out in another tab, expired, revoked): the header no
// longer names the administrator, the page says so and offers the sign-in
// again (coming back here afterwards), and the page's own script hears a
// "sb-signed-out" event to stop what needed the session.
(function () {
  'use strict';

  var done = false;

  function signedOut() {
    if (done) return;
    done = true;
    document.body.setAttribute('data-signed-in', 'no');
    document.querySelectorAll('[data-needs-session]').forEach(function (e) { e.hidden = true; });
    var signin = document.getElementById('sb-signin');
    if (signin) {
      signin.href = '/login?next=' + encodeURIComponent(window.location.pathname + window.location.search);
      signin.hidden = false;
    }
    var box = document.getElementById('sb-status');
    if (box) {
      box.textContent = 'You are signed out: the session ended. Sign in again to continue.';
      box.hidden = false;
    }
    document.dispatchEvent(new CustomEvent('sb-signed-out'));
  }

  // check asks the server whether the session still works; a 401 means
  // it ended. Anything else (the server restarting) decides nothing.
  function check() {
    return fetch('/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (r.status === 401) signedOut();
        return r.status !== 401;
      })
      .catch(function () { return true; });
  }

  window.sbSession = { signedOut: signedOut, check: check, isSignedOut: function () { return done; } };
})();
