// The live-calls dashboard: the live channels the session may see, kept
// current from the Server-Sent Events stream (EventSource resumes with
// Last-Event-ID by itself after a dropped connection), grouped into calls,
// one compact line each: who calls whom (names from the tenant's
// extensions), the queue, IVR or conference the call is in (its numbers in
// the tenant's number plan), its state and duration, and buttons named for
// the call. Hanging up asks first; transferring opens a dialog that
// searches the tenant's extensions. Changes to the list are announced to
// screen readers.
(function () {
  'use strict';

  var meta = function (name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute('content') : '';
  };
  var platform = document.body.getAttribute('data-platform') === 'yes';
  var csrfHeader = meta('csrf-header');
  var csrfToken = meta('csrf-token');
  var list = document.getElementById('sb-calls');
  var emptyNote = document.getElementById('sb-empty');
  var streamBadge = document.getElementById('sb-stream');
  var statusBox = document.getElementById('sb-status');
  var tenantFilter = document.getElementById('sb-filter-tenant');
  var search = document.getElementById('sb-search');
  var total = document.getElementById('sb-total');
  var announcer = document.getElementById('sb-announce');

  var channels = new Map(); // id → channel
  var idOf = new Map(); // node + ' ' + uuid → the channel's current id
  var items = new Map(); // call key → {sig, li}: the lines on the page
  var ended = new Set(); // ids seen ending: a late list answer must not bring them back
  // The tenants offered in the filter: a scoped administrator's all along,
  // others' once a call of theirs was seen.
  var tenants = [];
  var directories = new Map(); // tenant → {ext: Map, numbers: Map}
  var shownCalls = null; // {legs, calls} as last announced
  var pending = false;
  var sources = []; // the open event streams

  function status(text) {
    if (window.sbSession.isSignedOut()) return;
    statusBox.textContent = text;
    statusBox.hidden = !text;
  }

  function streamState(state, text) {
    streamBadge.setAttribute('data-state', state);
    streamBadge.textContent = text;
  }

  // Signed out: nothing of the calls stays on the screen or keeps coming.
  document.addEventListener('sb-signed-out', function () {
    sources.forEach(function (es) { es.close(); });
    channels.clear();
    idOf.clear();
    render();
    streamState('down', 'signed out');
  });

  function upsert(ch) {
    if (!ch || !ch.id || ended.has(ch.id)) return;
    var old = channels.get(ch.id);
    if (old && (old.last_seq || 0) > (ch.last_seq || 0)) return;
    // A call that came in outside any tenant (a DID call in the public
    // dialplan) takes an id of its tenant when it enters one: the same
    // channel (node and UUID) under its first id is gone, not a second call.
    if (ch.uuid) {
      var leg = ch.node + ' ' + ch.uuid, first = idOf.get(leg);
      if (first && first !== ch.id) {
        var prior = channels.get(first);
        if (prior && (prior.last_seq || 0) > (ch.last_seq || 0)) return; // a late word of the first id
        ended.add(first);
        channels.delete(first);
      }
      idOf.set(leg, ch.id);
    }
    channels.set(ch.id, ch);
    if (ch.tenant) directory(ch.tenant);
    schedule();
  }

  function remove(ch) {
    if (!ch || !ch.id) return;
    ended.add(ch.id);
    channels.delete(ch.id);
    if (ch.uuid && idOf.get(ch.node + ' ' + ch.uuid) === ch.id) idOf.delete(ch.node + ' ' + ch.uuid);
    schedule();
  }

  function schedule() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  }

  function getJSON(url) {
    return fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } }).then(function (r) {
      if (r.status === 401) window.sbSession.signedOut();
      if (!r.ok) throw new Error(url.split('?')[0] + ' answered ' + r.status);
      return r.json();
    });
  }

  // directory loads, once per tenant, what names a call: the extensions
  // (by number) and the numbers of queues, IVR menus, conference rooms and
  // hunt groups. What cannot be read (a role without it) stays unnamed.
  function directory(tenant) {
    if (directories.has(tenant)) return directories.get(tenant);
    var d = { ext: new Map(), numbers: new Map() };
    directories.set(tenant, d);
    var base = '/api/tenants/' + encodeURIComponent(tenant) + '/';
    var kinds = [['queues', 'Queue'], ['ivr_menus', 'IVR'], ['conference_rooms', 'Conference'], ['hunt_groups', 'Hunt group']];
    getJSON(base + 'extensions/?limit=1000').then(function (exts) {
      exts.forEach(function (x) {
        var name = [x.first_name, x.last_name].filter(Boolean).join(' ');
        d.ext.set(x.name, name);
      });
      schedule();
    }).catch(function () { /* names are a help, not a need */ });
    kinds.forEach(function (k) {
      getJSON(base + k[0] + '/?limit=1000').then(function (objs) {
        objs.forEach(function (o) { if (o.number) d.numbers.set(o.number, k[1] + ' ' + (o.name || o.number)); });
        schedule();
      }).catch(function () { /* as above */ });
    });
    return d;
  }

  // party names a number of a tenant: "Ann Smith (1001)", or the caller
  // id name FreeSWITCH gave, or the number alone.
  function party(tenant, number, cidName) {
    var d = directories.get(tenant);
    var name = d && d.ext.get(number);
    if (!name && cidName && cidName !== number) name = cidName;
    if (!number) return name || 'unknown';
    return name ? name + ' (' + number + ')' : number;
  }

  // where is the queue, IVR, conference or hunt group a leg of the call
  // was sent to, if any.
  function where(tenant, legs) {
    var d = directories.get(tenant);
    if (!d) return '';
    for (var i = 0; i < legs.length; i++) {
      var n = d.numbers.get(legs[i].destination);
      if (n) return n;
    }
    return '';
  }

  // groupCalls puts the legs of one call together: channels bridged to
  // each other, and channels naming another's UUID as their call or peer.
  function groupCalls(chs) {
    var parent = new Map();
    var find = function (id) {
      while (parent.get(id) !== id) id = parent.get(id);
      return id;
    };
    var union = function (a, b) {
      if (!parent.has(a) || !parent.has(b)) return;
      parent.set(find(a), find(b));
    };
    var byUUID = new Map();
    chs.forEach(function (ch) { parent.set(ch.id, ch.id); byUUID.set(ch.uuid, ch.id); });
    chs.forEach(function (ch) {
      if (ch.bridged_to) union(ch.id, ch.bridged_to);
      [ch.peer_uuid, ch.call_uuid].forEach(function (u) { if (u && byUUID.has(u)) union(ch.id, byUUID.get(u)); });
    });
    var calls = new Map();
    chs.forEach(function (ch) {
      var k = find(ch.id);
      if (!calls.has(k)) calls.set(k, []);
      calls.get(k).push(ch);
    });
    return Array.from(calls.values()).map(function (legs) {
      legs.sort(function (a, b) { return String(a.started_at).localeCompare(String(b.started_at)) || a.id.localeCompare(b.id); });
      return legs;
    });
  }

  function since(ch) {
    return ch.answered_at || ch.started_at || '';
  }

  function duration(iso) {
    var t = Date.parse(iso);
    if (!iso || isNaN(t)) return '';
    var s = Math.max(0, Math.floor((Date.now() - t) / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    var two = function (n) { return (n < 10 ? '0' : '') + n; };
    return (h ? h + ':' + two(m) : m) + ':' + two(sec);
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // describe is what a call shows and is named by.
  function describe(legs) {
    var first = legs[0];
    var t = first.tenant || '';
    var call = {
      key: first.id, tenant: t, legs: legs, first: first,
      from: party(t, first.caller_id_number, first.caller_id_name),
      to: party(t, first.destination, ''),
      where: where(t, legs),
      recording: legs.some(function (l) { return l.recording; }),
      state: first.state
    };
    call.title = 'call from ' + call.from + ' to ' + call.to;
    return call;
  }

  function matches(call, q) {
    if (!q) return true;
    var hay = [call.from, call.to, call.where, call.tenant, call.state].concat(call.legs.map(function (l) {
      return [l.caller_id_number, l.caller_id_name, l.destination, l.extension].join(' ');
    })).join(' ').toLowerCase();
    return q.split(/\s+/).every(function (w) { return hay.indexOf(w) >= 0; });
  }

  function render() {
    var all = new Map(); // tenant → calls
    tenants.forEach(function (t) { all.set(t, []); });
    var byTenant = new Map();
    channels.forEach(function (ch) {
      var t = ch.tenant || '';
      if (!byTenant.has(t)) byTenant.set(t, []);
      byTenant.get(t).push(ch);
      if (t && tenants.indexOf(t) < 0) tenants.push(t);
    });
    var calls = [];
    byTenant.forEach(function (chs, t) {
      var these = groupCalls(chs).map(describe);
      all.set(t, these);
      calls = calls.concat(these);
    });
    filterOptions(all);

    var chosen = tenantFilter.value;
    var q = search.value.trim().toLowerCase();
    var inTenant = calls.filter(function (c) { return !chosen || c.tenant === chosen; });
    var shown = inTenant.filter(function (c) { return matches(c, q); });
    shown.sort(function (a, b) { return String(since(a.first)).localeCompare(String(since(b.first))) || a.key.localeCompare(b.key); });

    var had = focusedCall();
    var keep = new Map();
    var lines = shown.map(function (c) {
      var li = callLine(c);
      keep.set(c.key, items.get(c.key));
      return li;
    });
    items = keep;
    // Lines are moved, not rebuilt: a click under way keeps its button.
    lines.forEach(function (li, i) {
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    while (list.children.length > lines.length) list.removeChild(list.lastChild);
    // A line redrawn or gone took the focused button with it: the focus
    // goes to the same button of the call's new line, or to the list.
    if (had && !list.contains(document.activeElement)) focusCall(had.key, had.action);

    var n = inTenant.length;
    total.textContent = (shown.length === n ? n : shown.length + ' of ' + n) + (n === 1 ? ' call' : ' calls');
    emptyNote.hidden = shown.length > 0;
    emptyNote.textContent = n ? 'No call matches the filter.' : 'No live calls.';
    announce(calls);
  }

  // filterOptions keeps the tenant filter's options: every tenant seen,
  // with its number of calls.
  function filterOptions(all) {
    var names = Array.from(all.keys()).filter(Boolean).sort();
    var want = [''].concat(names);
    var opts = tenantFilter.options;
    var same = opts.length === want.length && want.every(function (v, i) { return opts[i].value === v; });
    if (!same) {
      var chosen = tenantFilter.value;
      tenantFilter.textContent = '';
      want.forEach(function (v) { tenantFilter.appendChild(el('option', { value: v })); });
      tenantFilter.value = want.indexOf(chosen) >= 0 ? chosen : '';
    }
    var sum = 0;
    all.forEach(function (calls) { sum += calls.length; });
    Array.from(tenantFilter.options).forEach(function (o) {
      var n = o.value ? all.get(o.value).length : sum;
      var text = (o.value || 'All tenants') + ' (' + n + ')';
      if (o.textContent !== text) o.textContent = text;
    });
  }

  // announce tells screen readers which calls started and ended since
  // the last drawing (at most three by name, else how many). A call is new
  // when none of its legs was on the page, ended when none of its legs is
  // left: legs joining or leaving a call (a bridge, a transfer) are no news.
  function announce(calls) {
    var legs = new Set();
    calls.forEach(function (c) { c.legs.forEach(function (l) { legs.add(l.id); }); });
    var before = shownCalls;
    shownCalls = { legs: legs, calls: calls };
    if (before === null) return;
    var msgs = [];
    calls.forEach(function (c) {
      if (!c.legs.some(function (l) { return before.legs.has(l.id); })) msgs.push('New ' + c.title + '.');
    });
    before.calls.forEach(function (c) {
      if (!c.legs.some(function (l) { return legs.has(l.id); })) msgs.push('Ended: ' + c.title + '.');
    });
    if (!msgs.length) return;
    announcer.textContent = msgs.length > 3 ? msgs.length + ' calls changed; ' + calls.length + ' live.' : msgs.join(' ');
  }

  // callLine returns the call's line: the one already on the page while
  // nothing it shows has changed (so a click under way is not lost).
  function callLine(c) {
    var sig = JSON.stringify([c.from, c.to, c.where, c.state, c.recording, c.tenant, since(c.first),
      c.legs.map(function (l) { return l.id + l.state; })]);
    var kept = items.get(c.key);
    if (kept && kept.sig === sig) return kept.li;
    var li = newLine(c);
    items.set(c.key, { sig: sig, li: li });
    return li;
  }

  function newLine(c) {
    var li = el('li', { 'class': 'sb-call', 'data-tenant': c.tenant, 'data-channel': c.first.id, 'data-state': c.state,
      'data-legs': c.legs.map(function (l) { return l.id; }).join(' ') });
    li.appendChild(el('span', { 'class': 'sb-duration', 'data-since': since(c.first), title: 'duration' }, duration(since(c.first))));
    var who = el('span', { 'class': 'sb-who' });
    who.appendChild(el('span', { 'class': 'sb-from' }, c.from));
    who.appendChild(el('span', { 'class': 'sb-arrow', 'aria-hidden': 'true' }, ' → '));
    who.appendChild(el('span', { 'class': 'sb-visually-hidden' }, ' to '));
    who.appendChild(el('span', { 'class': 'sb-to' }, c.to));
    li.appendChild(who);
    li.appendChild(el('span', { 'class': 'sb-where' }, c.where));
    li.appendChild(el('span', { 'class': 'sb-state' }, c.state + (c.recording ? ' · recording' : '')));
    if (platform || tenants.length > 1) li.appendChild(el('span', { 'class': 'sb-tenant-tag', title: c.tenant }, c.tenant));
    var actions = el('span', { 'class': 'sb-actions' });
    var ch = c.first;
    actions.appendChild(button('Hang up', 'hangup', 'Hang up ' + c.title, function () {
      return confirmHangup(c).then(function (ok) { return ok && act('hangup', { channel: ch.id }); });
    }));
    actions.appendChild(button('Transfer', 'transfer', 'Transfer ' + c.title, function () {
      return askTransfer(c).then(function (to) { return to && act('transfer', { channel: ch.id, to: to }); });
    }));
    actions.appendChild(button(c.recording ? 'Stop recording' : 'Record', 'record',
      (c.recording ? 'Stop recording ' : 'Record ') + c.title, function () {
        return act('record', { channel: ch.id, action: c.recording ? 'stop' : 'start' });
      }));
    li.appendChild(actions);
    return li;
  }

  // A button is busy (not disabled, which would drop the keyboard's
  // focus) until what it started is done: a second press meanwhile does
  // nothing.
  function button(label, action, name, run) {
    var b = el('button', { type: 'button', 'data-action': action, 'aria-label': name }, label);
    b.addEventListener('click', function () {
      if (b.getAttribute('aria-disabled') === 'true') return;
      b.setAttribute('aria-disabled', 'true');
      Promise.resolve(run()).finally(function () { b.removeAttribute('aria-disabled'); });
    });
    return b;
  }

  // focusedCall names the call button that has the focus: its call's key
  // and its action.
  function focusedCall() {
    var f = document.activeElement;
    if (!f || !list.contains(f)) return null;
    var found = null;
    items.forEach(function (it, key) { if (it.li.contains(f)) found = { key: key, action: f.getAttribute('data-action') }; });
    return found;
  }

  // focusCall puts the focus on the call's button for action, or on the
  // list when the call has left it.
  function focusCall(key, action) {
    var it = items.get(key);
    var b = it && it.li.isConnected ? it.li.querySelector('button[data-action="' + action + '"]') : null;
    (b || list).focus();
  }

  // modal opens a dialog and resolves with its form's returnValue; when it
  // closes, the focus goes back to the call's button that opened it.
  function modal(dialog, focus) {
    var opener = focusedCall();
    return new Promise(function (resolve) {
      dialog.returnValue = '';
      var closed = function () {
        dialog.removeEventListener('close', closed);
        if (opener) focusCall(opener.key, opener.action);
        resolve(dialog.returnValue);
      };
      dialog.addEventListener('close', closed);
      dialog.showModal();
      if (focus) focus.focus();
    });
  }

  // trapTab keeps Tab inside an open dialog: past its last control the
  // focus goes round to its first (a modal dialog makes the page inert,
  // but Tab would still leave for the browser's own controls).
  function trapTab(dialog) {
    dialog.addEventListener('keydown', function (ev) {
      if (ev.key !== 'Tab') return;
      var all = Array.from(dialog.querySelectorAll('button, input, select, textarea, a[href]')).filter(function (x) {
        return !x.disabled && x.getClientRects().length > 0;
      });
      if (!all.length) return;
      var first = all[0], last = all[all.length - 1];
      if (ev.shiftKey ? document.activeElement === first : document.activeElement === last) {
        ev.preventDefault();
        (ev.shiftKey ? last : first).focus();
      }
    });
  }

  var confirmDialog = document.getElementById('sb-confirm');
  trapTab(confirmDialog);
  function confirmHangup(c) {
    document.getElementById('sb-confirm-title').textContent = 'Hang up the call?';
    document.getElementById('sb-confirm-text').textContent = 'This ends the ' + c.title + (c.where ? ' (' + c.where + ')' : '') + ' for everyone on it.';
    return modal(confirmDialog, document.getElementById('sb-confirm-ok')).then(function (v) { return v === 'ok'; });
  }

  var transferDialog = document.getElementById('sb-transfer');
  trapTab(transferDialog);
  var transferTo = document.getElementById('sb-transfer-to');
  var picks = document.getElementById('sb-transfer-list');
  var pickTenant = '';

  // showPicks lists the tenant's extensions matching what was typed.
  function showPicks() {
    var d = directories.get(pickTenant);
    var q = transferTo.value.trim().toLowerCase();
    picks.textContent = '';
    if (!d) return;
    var found = [];
    d.ext.forEach(function (name, num) {
      if (!q || (num + ' ' + name).toLowerCase().indexOf(q) >= 0) found.push([num, name]);
    });
    found.sort(function (a, b) { return a[0].localeCompare(b[0]); });
    found.slice(0, 8).forEach(function (x) {
      var li = el('li');
      var b = el('button', { type: 'button', 'data-extension': x[0] }, x[0] + (x[1] ? ' · ' + x[1] : ''));
      b.addEventListener('click', function () {
        transferTo.value = x[0];
        showPicks();
        document.getElementById('sb-transfer-ok').focus();
      });
      li.appendChild(b);
      picks.appendChild(li);
    });
  }
  transferTo.addEventListener('input', showPicks);
  // Enter in the field transfers: the form's first button, which the
  // browser would press, is Cancel.
  transferTo.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter') return;
    ev.preventDefault();
    document.getElementById('sb-transfer-form').requestSubmit(document.getElementById('sb-transfer-ok'));
  });

  function askTransfer(c) {
    pickTenant = c.tenant;
    document.getElementById('sb-transfer-title').textContent = 'Transfer the call';
    document.getElementById('sb-transfer-text').textContent = 'Send the ' + c.title + ' to:';
    transferTo.value = '';
    showPicks();
    return modal(transferDialog, transferTo).then(function (v) {
      return v === 'ok' ? transferTo.value.trim() : '';
    });
  }

  // act calls a live-call action with the session; the stream shows the
  // result (the channel ends, transfers or starts recording).
  function act(action, body) {
    var headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (csrfHeader && csrfToken) headers[csrfHeader] = csrfToken;
    return fetch('/api/telephony/' + action, {
      method: 'POST', credentials: 'same-origin', headers: headers, body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (r.status === 401) window.sbSession.signedOut();
        if (!r.ok) throw new Error(j.error || ('status ' + r.status));
        status('');
        return j;
      });
    }).catch(function (e) { status(action + ' ' + body.channel + ' failed: ' + e.message); });
  }

  function load(tenant) {
    var q = tenant ? '&tenant=' + encodeURIComponent(tenant) : '';
    return getJSON('/api/telephony/channels?limit=1000' + q).then(function (chs) { chs.forEach(upsert); });
  }

  // follow opens the event stream (of one tenant, or all the session may
  // see). EventSource reconnects by itself and sends Last-Event-ID; when the
  // server refuses a reconnect outright (the session ended, a restart
  // answered 5xx) the browser gives up, and a fresh stream resumes from the
  // last id seen with ?last_event_id=.
  function follow(tenant) {
    var lastID = '';
    var listed = false;
    var open = function () {
      var params = [];
      if (tenant) params.push('tenant=' + encodeURIComponent(tenant));
      if (lastID) params.push('last_event_id=' + encodeURIComponent(lastID));
      var es = new EventSource('/api/telephony/events' + (params.length ? '?' + params.join('&') : ''));
      sources.push(es);
      var seen = function (e) { if (e.lastEventId) lastID = e.lastEventId; };
      ['channel.created', 'channel.updated'].forEach(function (type) {
        es.addEventListener(type, function (e) { seen(e); upsert(JSON.parse(e.data).channel); });
      });
      es.addEventListener('channel.ended', function (e) { seen(e); remove(JSON.parse(e.data).channel); });
      es.addEventListener('call.updated', seen);
      // The server ends a session's stream when the session ends.
      es.addEventListener('session.ended', function () { es.close(); window.sbSession.signedOut(); });
      es.onopen = function () {
        streamState('live', 'live');
        if (!listed) {
          // Listed once the stream is open, so nothing between the list
          // and the stream's start is missed.
          listed = true;
          load(tenant).catch(function (e) { status(e.message); listed = false; });
        }
      };
      es.onerror = function () {
        if (window.sbSession.isSignedOut()) return;
        if (es.readyState === EventSource.CLOSED) {
          streamState('down', 'disconnected, retrying…');
          // Refused outright: a 401 means the session ended.
          window.sbSession.check().then(function (ok) { if (ok) window.setTimeout(open, 5000); });
        } else {
          streamState('connecting', 'reconnecting…');
        }
      };
    };
    open();
  }

  tenantFilter.addEventListener('change', render);
  search.addEventListener('input', render);
  document.getElementById('sb-tools').addEventListener('submit', function (e) { e.preventDefault(); });

  window.setInterval(function () {
    document.querySelectorAll('.sb-duration[data-since]').forEach(function (e) {
      e.textContent = duration(e.getAttribute('data-since'));
    });
  }, 1000);

  if (platform) {
    follow('');
    render();
    return;
  }
  getJSON('/api/tenants/?limit=1000')
    .then(function (ts) {
      tenants = ts.map(function (t) { return t.tenant; });
      tenants.forEach(directory);
      render();
      tenants.forEach(follow);
    })
    .catch(function (e) { status(e.message); streamState('down', 'not connected'); });
})();
