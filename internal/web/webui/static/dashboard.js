// The live-calls dashboard: the live channels the session may see, kept
// current from the Server-Sent Events stream (EventSource resumes with
// Last-Event-ID by itself after a dropped connection), grouped into calls
// per tenant, with hang-up, blind-transfer and record buttons that call the
// live-call API with the session and its CSRF token.
(function () {
  'use strict';

  var meta = function (name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute('content') : '';
  };
  var platform = document.body.getAttribute('data-platform') === 'yes';
  var csrfHeader = meta('csrf-header');
  var csrfToken = meta('csrf-token');
  var callsBox = document.getElementById('sb-calls');
  var countsBody = document.querySelector('#sb-counts tbody');
  var emptyNote = document.getElementById('sb-empty');
  var streamBadge = document.getElementById('sb-stream');
  var statusBox = document.getElementById('sb-status');

  var channels = new Map(); // id → channel
  var rows = new Map(); // id → {sig, row}: the rows on the page (legRow)
  var ended = new Set(); // ids seen ending: a late list answer must not bring them back
  // The tenants counted: a scoped administrator's all along, others' once
  // a call of theirs was seen (a count drops to 0 rather than vanishing).
  var tenants = [];
  var pending = false;
  var sources = []; // the open event streams

  // Signed out: nothing of the calls stays on the screen or keeps coming.
  document.addEventListener('sb-signed-out', function () {
    sources.forEach(function (es) { es.close(); });
    channels.clear();
    rows.clear();
    render();
    streamState('down', 'signed out');
  });

  function status(text) {
    statusBox.textContent = text;
    statusBox.hidden = !text;
  }

  function streamState(state, text) {
    streamBadge.setAttribute('data-state', state);
    streamBadge.textContent = text;
  }

  // upsert keeps the newest version of a channel (by its event sequence).
  function upsert(ch) {
    if (!ch || !ch.id || ended.has(ch.id)) return;
    var old = channels.get(ch.id);
    if (old && (old.last_seq || 0) > (ch.last_seq || 0)) return;
    channels.set(ch.id, ch);
    schedule();
  }

  function remove(ch) {
    if (!ch || !ch.id) return;
    ended.add(ch.id);
    channels.delete(ch.id);
    rows.delete(ch.id);
    schedule();
  }

  function schedule() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  }

  // groupCalls puts the legs of one call together: channels bridged to
  // each other, and channels naming another's UUID as their call or peer.
  function groupCalls(list) {
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
    list.forEach(function (ch) { parent.set(ch.id, ch.id); byUUID.set(ch.uuid, ch.id); });
    list.forEach(function (ch) {
      if (ch.bridged_to) union(ch.id, ch.bridged_to);
      [ch.peer_uuid, ch.call_uuid].forEach(function (u) { if (u && byUUID.has(u)) union(ch.id, byUUID.get(u)); });
    });
    var calls = new Map();
    list.forEach(function (ch) {
      var k = find(ch.id);
      if (!calls.has(k)) calls.set(k, []);
      calls.get(k).push(ch);
    });
    return calls;
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

  function render() {
    var legsByTenant = new Map();
    tenants.forEach(function (t) { legsByTenant.set(t, []); });
    channels.forEach(function (ch) {
      var t = ch.tenant || '(no tenant)';
      if (!legsByTenant.has(t)) legsByTenant.set(t, []);
      if (tenants.indexOf(t) < 0) tenants.push(t);
      legsByTenant.get(t).push(ch);
    });
    var byTenant = new Map();
    legsByTenant.forEach(function (legs, t) { byTenant.set(t, groupCalls(legs)); });
    var names = Array.from(byTenant.keys()).sort();

    countsBody.textContent = '';
    var totalCalls = 0;
    names.forEach(function (t) {
      var calls = byTenant.get(t);
      var legs = 0;
      calls.forEach(function (l) { legs += l.length; });
      totalCalls += calls.size;
      var row = el('tr', { 'data-tenant': t });
      row.appendChild(el('td', {}, t));
      row.appendChild(el('td', { 'class': 'sb-count' }, String(calls.size)));
      row.appendChild(el('td', {}, String(legs)));
      countsBody.appendChild(row);
    });

    callsBox.textContent = '';
    names.forEach(function (t) {
      var calls = byTenant.get(t);
      if (!calls.size) return;
      var section = el('section', { 'class': 'sb-tenant', 'data-tenant': t });
      section.appendChild(el('h2', {}, t + ' · ' + calls.size + (calls.size === 1 ? ' call' : ' calls')));
      Array.from(calls.values()).sort(function (a, b) {
        return String(since(a[0])).localeCompare(String(since(b[0])));
      }).forEach(function (legs) { section.appendChild(callCard(legs)); });
      callsBox.appendChild(section);
    });
    emptyNote.hidden = totalCalls > 0;
  }

  function callCard(legs) {
    legs.sort(function (a, b) { return String(a.started_at).localeCompare(String(b.started_at)); });
    var first = legs[0];
    var card = el('article', { 'class': 'sb-call' });
    var title = (first.caller_id_number || first.caller_id_name || '?') + ' → ' + (first.destination || '?');
    var head = el('header', {});
    head.appendChild(el('strong', {}, title));
    head.appendChild(el('span', { 'class': 'sb-duration', 'data-since': since(first) }, duration(since(first))));
    card.appendChild(head);
    var table = el('table', { 'class': 'sb-legs' });
    var hr = el('tr', {});
    ['Leg', 'Direction', 'From', 'To', 'State', 'Duration', ''].forEach(function (h) { hr.appendChild(el('th', {}, h)); });
    table.appendChild(el('thead', {})).appendChild(hr);
    var body = el('tbody', {});
    legs.forEach(function (ch) { body.appendChild(legRow(ch)); });
    table.appendChild(body);
    card.appendChild(table);
    return card;
  }

  // legRow returns the channel's row: the one already on the page while
  // nothing it shows has changed. The list is drawn again on every update;
  // reusing the row (the same element, moved into the new list) keeps a
  // click that is under way on its button, which a new element would lose.
  function legRow(ch) {
    var sig = JSON.stringify([ch.state, !!ch.recording, ch.caller_id_name, ch.caller_id_number,
      ch.destination, ch.direction, ch.uuid, ch.node, since(ch)]);
    var kept = rows.get(ch.id);
    if (kept && kept.sig === sig) return kept.row;
    var row = newLegRow(ch);
    rows.set(ch.id, { sig: sig, row: row });
    return row;
  }

  function newLegRow(ch) {
    var row = el('tr', { 'data-channel': ch.id, 'data-state': ch.state });
    row.appendChild(el('td', { 'class': 'sb-id', 'title': ch.uuid + ' on ' + ch.node }, ch.id));
    row.appendChild(el('td', {}, ch.direction || ''));
    row.appendChild(el('td', {}, (ch.caller_id_name ? ch.caller_id_name + ' ' : '') + (ch.caller_id_number || '')));
    row.appendChild(el('td', {}, ch.destination || ''));
    var state = el('td', { 'class': 'sb-state' }, ch.state + (ch.recording ? ' · recording' : ''));
    row.appendChild(state);
    row.appendChild(el('td', { 'class': 'sb-duration', 'data-since': since(ch) }, duration(since(ch))));
    var actions = el('td', { 'class': 'sb-actions' });
    actions.appendChild(button('Hang up', 'hangup', function () {
      return act('hangup', { channel: ch.id });
    }));
    actions.appendChild(button('Transfer', 'transfer', function () {
      var to = window.prompt('Blind-transfer ' + ch.id + ' to (extension or number):', '');
      if (!to) return Promise.resolve();
      return act('transfer', { channel: ch.id, to: to.trim() });
    }));
    actions.appendChild(button(ch.recording ? 'Stop recording' : 'Record', 'record', function () {
      return act('record', { channel: ch.id, action: ch.recording ? 'stop' : 'start' });
    }));
    row.appendChild(actions);
    return row;
  }

  function button(label, action, run) {
    var b = el('button', { type: 'button', 'data-action': action }, label);
    b.addEventListener('click', function () {
      b.disabled = true;
      Promise.resolve(run()).finally(function () { b.disabled = false; });
    });
    return b;
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
    return fetch('/api/telephony/channels?limit=1000' + q, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (r) {
        if (r.status === 401) window.sbSession.signedOut();
        if (!r.ok) throw new Error('the channel list answered ' + r.status);
        return r.json();
      })
      .then(function (list) { list.forEach(upsert); });
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
      var seen = function (e) { if (e.lastEventId) lastID = e.lastEventId; };
      ['channel.created', 'channel.updated'].forEach(function (type) {
        es.addEventListener(type, function (e) { seen(e); upsert(JSON.parse(e.data).channel); });
      });
      es.addEventListener('channel.ended', function (e) { seen(e); remove(JSON.parse(e.data).channel); });
      es.addEventListener('call.updated', seen);
      // The server ends a session's stream when the session ends.
      es.addEventListener('session.ended', function () { es.close(); window.sbSession.signedOut(); });
      sources.push(es);
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
  fetch('/api/tenants/?limit=1000', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(function (r) {
      if (!r.ok) throw new Error('the tenant list answered ' + r.status);
      return r.json();
    })
    .then(function (list) {
      tenants = list.map(function (t) { return t.tenant; });
      render();
      tenants.forEach(follow);
    })
    .catch(function (e) { status(e.message); streamState('down', 'not connected'); });
})();
