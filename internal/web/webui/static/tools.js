// The configuration manager's tools: the routing trace, the call and
// recording reports, a webhook's delivery log and the imports. Each page
// is rendered by the server with the API route it is about (data-api);
// this script calls that route with the session (manage.js's api helper)
// and shows the answer. It holds no rule of its own: what the API refuses
// is shown with the API's reason, beside its field when it names one.
'use strict';
(() => {
  // The pages' layout loads manage.js first: its request and element
  // helpers are the tools' too.
  const { api, el } = window.switchboardManage;

  const errBox = document.getElementById('tool-error');
  const showError = (msg) => {
    errBox.textContent = msg || '';
    errBox.hidden = !msg;
  };
  const reason = (r) => (r.data && r.data.error) || `The server answered ${r.status}.`;

  // showRefusal puts the API's reasons beside the fields of form they
  // name, the rest in the page's error box.
  function showRefusal(form, r) {
    const fields = (r.data && r.data.fields) || {};
    const other = [];
    let first = null;
    for (const [name, msg] of Object.entries(fields)) {
      const w = form.querySelector(`.field[data-name="${name}"]`);
      if (!w) { other.push(`${name}: ${msg}`); continue; }
      w.classList.add('invalid');
      const label = w.querySelector('label');
      w.querySelector('.field-error').textContent = `${label ? label.firstChild.textContent.trim() : name}: ${msg}`;
      const input = w.querySelector('input');
      input.setAttribute('aria-invalid', 'true');
      first = first || input;
    }
    showError(Object.keys(fields).length ? other.join('; ') : reason(r));
    (first || errBox).focus();
  }
  function clearRefusal(form) {
    showError('');
    for (const w of form.querySelectorAll('.field.invalid')) {
      w.classList.remove('invalid');
      w.querySelector('.field-error').textContent = '';
      w.querySelector('input').removeAttribute('aria-invalid');
    }
  }

  // Times: inputs hold the browser's local time; the API takes RFC 3339.
  const rfc3339 = (v) => new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const localInput = (d) => {
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
  };
  const shown = (s) => (s ? new Date(s).toLocaleString() : '');

  // values are a form's filled inputs: api as the API takes them (times
  // in RFC 3339), page as the page's address keeps them.
  function values(form) {
    const api = new URLSearchParams();
    const page = new URLSearchParams();
    for (const i of form.querySelectorAll('input[name]')) {
      const v = i.value.trim();
      if (i.type === 'file' || v === '') continue;
      page.set(i.name, v);
      api.set(i.name, i.type === 'datetime-local' ? rfc3339(v) : v);
    }
    return { api, page };
  }
  const withQuery = (url, q) => url + (url.includes('?') ? '&' : '?') + q.toString();

  // The routing trace: the answer as steps a person reads.
  const matched = {
    did: 'a DID', extension: 'an extension', extension_failover: "an extension's failover", special_mailbox: 'a special mailbox',
    routing_condition: 'a routing condition', hunt_group: 'a hunt group', conference: 'a conference room', ivr: 'an IVR',
    queue: 'a queue', queue_after: "a queue's next destination", special_endpoint: 'a special endpoint',
    prompt_then_hangup: 'a prompt, then hang up', feature: 'a feature code', park_return: 'a parked call',
    emergency: 'an emergency number', outbound: 'an outbound route',
  };
  function traceSteps(t) {
    const steps = [];
    const add = (title, text) => steps.push([title, text]);
    if (t.caller) add('Caller', t.caller + (t.caller_contact ? ` (${t.caller_contact})` : ''));
    add('Dialled', `${t.number} in ${t.context === 'public' ? 'the public context' : 'tenant ' + t.context}`);
    if (t.match) add('Matched', matched[t.match] || t.match.replace(/_/g, ' '));
    else add('Nothing matched', 'FreeSWITCH is answered "not found" and the call fails');
    if (t.reason) add('Why', t.reason);
    if (t.route_name || t.route_id) add('Route', `${t.route_name || 'route'}${t.route_id ? ` (#${t.route_id})` : ''}`);
    if (t.condition_name || t.condition_id) {
      add('Condition', `${t.condition_name || '#' + t.condition_id}: ${t.condition_branch === 'match' ? 'true' : 'false'}${t.condition_reason ? ` (${t.condition_reason})` : ''}`);
    }
    if (t.schedule_open !== undefined) add('Schedule', `${t.schedule_id ? `#${t.schedule_id} ` : ''}${t.schedule_open ? 'open' : 'closed'}`);
    if (t.holiday) add('Holiday', t.holiday);
    if (t.office_mode) add('Office mode', t.office_mode);
    if (t.feature) add('Feature', t.feature);
    if (t.pattern) add('Pattern', t.pattern + (t.dialled ? `, dialled as ${t.dialled}` : ''));
    if (t.trunks && t.trunks.length) add('Trunks, in order', t.trunks.join(', '));
    if (t.destination) add('Goes to', `${t.destination.type.replace(/_/g, ' ')} ${t.destination.target || ''}`.trim());
    else if (t.match === 'extension') add('Goes to', `extension ${t.number}: its phones ring`);
    const depends = [];
    if (t.time_dependent) depends.push('the time');
    if (t.caller_dependent) depends.push('the caller');
    if (t.live_dependent) depends.push('live calls');
    if (depends.length) add('Depends on', depends.join(', '));
    return steps;
  }
  function setupTrace(form) {
    const out = document.getElementById('trace-result');
    const run = async (focus) => {
      clearRefusal(form);
      const { api: q, page } = values(form);
      history.replaceState(null, '', form.action.replace(location.origin, '') + '?' + page);
      const r = await api('GET', withQuery(form.dataset.api, q));
      if (!r.ok) { out.hidden = true; showRefusal(form, r); return; }
      const list = document.getElementById('trace-steps');
      list.replaceChildren(...traceSteps(r.data.trace || {}).map(([title, text]) => el('li', {}, el('strong', { text: title + ': ' }), text)));
      document.getElementById('trace-xml').textContent = r.data.xml || '';
      out.hidden = false;
      out.dataset.done = String(Number(out.dataset.done || 0) + 1);
      if (focus) out.focus();
    };
    form.addEventListener('submit', (ev) => { ev.preventDefault(); run(true); });
    if ([...form.querySelectorAll('input[required]')].every((i) => i.value.trim() !== '')) run(false);
  }

  // Reports and the delivery log: a page of the API's list at a time.
  const pageSize = 50;
  function cell(...kids) { return el('td', {}, ...kids); }
  const seconds = (n) => (n === undefined || n === null ? '' : `${n} s`);
  const renderers = {
    cdrs: {
      columns: ['Started', 'Direction', 'From', 'To', 'Extension', 'Duration', 'Talk time', 'Hangup cause', 'Recording'],
      row(c, form) {
        const from = [c.caller_id_name, c.caller_id_number].filter(Boolean).join(' ');
        const cells = [el('th', { scope: 'row', text: shown(c.started_at) }), cell(c.direction), cell(from), cell(c.destination),
          cell(c.extension), cell(seconds(c.duration_seconds)), cell(seconds(c.billsec)), cell(c.hangup_cause)];
        const recording = cell();
        if (c.recording_url) {
          // A live call's recording, which the server reaches on the
          // nodes' recordings directory, plays here.
          recording.append(el('audio', { controls: true, preload: 'none', src: new URL(c.recording_url, location.href).pathname,
            'aria-label': `Recording of the call from ${from || 'unknown'} to ${c.destination} at ${shown(c.started_at)}` }));
        } else if (form.dataset.recordings) {
          // A recording is indexed with the call's start and numbers:
          // its report, narrowed to this call, plays it.
          const start = new Date(c.started_at);
          const q = new URLSearchParams({ number: c.caller_id_number || c.destination, from: localInput(new Date(start.getTime() - 60000)), to: localInput(new Date(start.getTime() + 120000)) });
          recording.append(el('a', { href: `${form.dataset.recordings}?${q}`, text: 'Recordings', 'aria-label': `Recordings of the call from ${from || 'unknown'} at ${shown(c.started_at)}` }));
        }
        return [...cells, recording];
      },
    },
    recordings: {
      columns: ['When', 'From', 'To', 'Extension', 'Direction', 'Duration', 'Recording'],
      row(r) {
        const what = `the call from ${r.src} to ${r.dst} at ${shown(r.when)}`;
        const audio = el('audio', { controls: true, preload: 'none', src: new URL(r.download_url, location.href).pathname, 'aria-label': `Recording of ${what}` });
        return [el('th', { scope: 'row', text: shown(r.when) }), cell(r.src), cell(r.dst), cell(r.extension), cell(r.direction),
          cell(seconds(r.duration)), cell(audio, ' ', el('a', { href: audio.getAttribute('src'), download: '', text: 'Download', 'aria-label': `Download the recording of ${what}` }))];
      },
    },
    deliveries: {
      columns: ['Event', 'Created', 'Status', 'Attempts', 'Last answer', 'Action'],
      row(d, form, reload) {
        const answer = d.attempts === 0 ? 'not sent yet' : `${d.response_status ? 'HTTP ' + d.response_status : 'no answer'}${d.error ? ` (${d.error})` : ''}, ${d.latency_ms} ms`;
        const hist = el('ol');
        for (const a of d.attempt_history || []) {
          hist.append(el('li', { text: `${shown(a.at)}: ${a.response_status ? 'HTTP ' + a.response_status : 'no answer'}${a.error ? ` (${a.error})` : ''}, ${a.latency_ms} ms` }));
        }
        const last = cell(answer);
        if (d.response_body) last.append(el('pre', { class: 'answer', text: d.response_body }));
        if ((d.attempt_history || []).length) last.append(el('details', {}, el('summary', { text: `Attempts (${d.attempt_history.length})` }), hist));
        const action = cell();
        if (form.dataset.write && d.status !== 'pending') {
          const b = el('button', { type: 'button', class: 'small', text: 'Replay', 'data-replay': String(d.id), 'aria-label': `Replay delivery ${d.id} (${d.event_type})` });
          b.addEventListener('click', () => replay(form, d, b, reload));
          action.append(b);
        }
        return [el('th', { scope: 'row' }, d.event_type, el('br'), el('small', { text: `delivery ${d.id}` })), cell(shown(d.created_at)),
          cell(el('span', { class: `state ${d.status}`, text: d.status })), cell(String(d.attempts)), last, action];
      },
    },
  };

  function setupReport(form) {
    const kind = renderers[form.dataset.kind];
    const status = document.getElementById('report-status');
    const box = document.getElementById('report');
    const pager = document.querySelector('nav.pager');
    const prev = document.getElementById('report-prev');
    const next = document.getElementById('report-next');
    let offset = Number(new URLSearchParams(location.search).get('offset')) || 0;
    const load = async () => {
      clearRefusal(form);
      const { api: q, page } = values(form);
      q.set('limit', String(pageSize));
      q.set('offset', String(offset));
      if (offset) page.set('offset', String(offset));
      if (form.dataset.kind !== 'deliveries') history.replaceState(null, '', location.pathname + (page.toString() ? '?' + page : ''));
      status.textContent = 'Loading…';
      const r = await api('GET', withQuery(form.dataset.api, q));
      if (!r.ok) { status.textContent = ''; showRefusal(form, r); return null; }
      const rows = Array.isArray(r.data) ? r.data : [];
      const head = el('tr', {}, ...kind.columns.map((c) => el('th', { scope: 'col', text: c })));
      const body = el('tbody', {}, ...rows.map((x) => el('tr', { 'data-id': String(x.id) }, ...kind.row(x, form, load))));
      box.replaceChildren(rows.length ? el('table', { class: 'grid' }, el('caption', { class: 'visually-hidden', text: document.querySelector('h1').textContent }), el('thead', {}, head), body) : '');
      status.textContent = rows.length ? `${offset + 1}–${offset + rows.length} of ${r.total}` : 'Nothing matches.';
      prev.disabled = offset === 0;
      next.disabled = offset + rows.length >= r.total;
      pager.hidden = prev.disabled && next.disabled;
      box.dataset.loaded = String(Number(box.dataset.loaded || 0) + 1);
      return rows;
    };
    form.addEventListener('submit', (ev) => { ev.preventDefault(); offset = 0; load(); });
    prev.addEventListener('click', () => { offset = Math.max(0, offset - pageSize); load(); });
    next.addEventListener('click', () => { offset += pageSize; load(); });
    load();
    return load;
  }

  // replay sends a delivery again and follows it until the worker's
  // attempt is in the log.
  async function replay(form, d, button, reload) {
    const status = document.getElementById('report-status');
    button.disabled = true;
    const r = await api('POST', `${form.dataset.api}/${d.id}/replay`, {});
    if (!r.ok) { button.disabled = false; showError(`Not replayed: ${reason(r)}`); return; }
    showError('');
    let rows = null;
    for (let i = 0; i < 150; i++) {
      rows = await reload();
      const now = rows && rows.find((x) => x.id === d.id);
      if (!now || now.status !== 'pending') break;
      await new Promise((res) => setTimeout(res, 400));
    }
    const now = rows && rows.find((x) => x.id === d.id);
    status.textContent = now ? `Delivery ${d.id} replayed: ${now.status}, ${now.response_status ? 'HTTP ' + now.response_status : 'no answer'}.` : `Delivery ${d.id} replayed.`;
    const again = document.querySelector(`button[data-replay="${d.id}"]`);
    (again || status).focus();
  }

  function setupHook(form, reload) {
    const hook = document.getElementById('hook');
    if (!hook) return;
    const state = document.getElementById('hook-state');
    const enable = document.getElementById('hook-enable');
    if (enable) {
      enable.addEventListener('click', async () => {
        const r = await api('POST', hook.dataset.enable, {});
        if (!r.ok) { showError(`Not enabled: ${reason(r)}`); return; }
        showError('');
        state.textContent = 'The webhook is enabled; held deliveries are sent again.';
        state.setAttribute('tabindex', '-1');
        enable.remove();
        state.focus();
        reload();
      });
    }
    const test = document.getElementById('hook-test');
    if (test) {
      test.addEventListener('click', async () => {
        test.disabled = true;
        const r = await api('POST', hook.dataset.test, {});
        test.disabled = false;
        if (!r.ok) { showError(`Not sent: ${reason(r)}`); return; }
        showError('');
        await reload();
        document.getElementById('report-status').textContent = `Test event sent: ${r.data.status}, ${r.data.response_status ? 'HTTP ' + r.data.response_status : 'no answer'}.`;
      });
    }
  }

  // Imports: a call record file runs as a job watched here; a recording
  // or a voicemail message is answered at once.
  const base64 = (file) => new Promise((resolve, reject) => {
    const fr = new FileReader();
    fr.onload = () => resolve(String(fr.result).replace(/^data:[^,]*,/, ''));
    fr.onerror = () => reject(fr.error);
    fr.readAsDataURL(file);
  });

  function setupImport(form, watch) {
    const result = form.querySelector('.import-result');
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearRefusal(form);
      result.textContent = '';
      const input = form.querySelector('input[type=file]');
      const file = input.files[0];
      if (!file) {
        showRefusal(form, { status: 400, data: { fields: { file: 'choose a file' } } });
        return;
      }
      const submit = form.querySelector('button[type=submit]');
      submit.disabled = true;
      let r;
      try {
        if (form.dataset.kind === 'file') {
          const type = /\.(jsonl|ndjson)$/i.test(file.name) || file.type === 'application/x-ndjson' ? 'application/x-ndjson' : 'text/csv';
          r = await api('POST', form.dataset.api, file, type);
        } else {
          const body = { audio_base64: await base64(file) };
          for (const i of form.querySelectorAll('input[name]')) {
            const v = i.value.trim();
            if (i.type === 'file' || v === '') continue;
            body[i.name] = i.type === 'datetime-local' ? rfc3339(v) : i.type === 'number' && /^\d+$/.test(v) ? Number(v) : v;
          }
          r = await api('POST', form.dataset.api, body);
        }
      } finally {
        submit.disabled = false;
      }
      if (!r.ok) { showRefusal(form, r); return; }
      if (r.status === 202) { watch(r.data.id, true); return; }
      result.textContent = `Imported as #${r.data.id}${r.data.created === false ? ' (imported before: nothing changed)' : ''}.`;
    });
  }

  function setupJob() {
    const box = document.getElementById('job');
    let timer = null;
    const show = (j) => {
      document.getElementById('job-id').textContent = `#${j.id}`;
      const bar = document.getElementById('job-progress');
      bar.max = Math.max(1, j.source_bytes);
      bar.value = j.status === 'running' ? j.bytes_done : bar.max;
      document.getElementById('job-counts').replaceChildren(...[
        ['Rows read', j.rows_done], ['Created', j.created], ['Duplicates', j.duplicates], ['Refused', j.failed],
      ].map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', { text: String(v) }))));
      const st = document.getElementById('job-status');
      const text = j.status === 'running' ? `Running: ${j.rows_done} rows read.`
        : j.status === 'done' ? `Done: ${j.rows_done} rows read, ${j.created} created, ${j.duplicates} duplicates, ${j.failed} refused.`
          : `Failed: ${j.error || 'the job stopped'}.`;
      // Announced when the state changes, not at every row count.
      if (st.dataset.state !== j.status || j.status === 'running') st.textContent = text;
      st.dataset.state = j.status;
      box.dataset.status = j.status;
      const errs = document.getElementById('job-errors');
      errs.replaceChildren();
      if ((j.errors || []).length) {
        errs.append(el('h3', { text: 'Refused rows' }), el('table', { class: 'grid' },
          el('thead', {}, el('tr', {}, ...['Row', 'External id', 'Reason'].map((c) => el('th', { scope: 'col', text: c })))),
          el('tbody', {}, ...j.errors.map((e) => el('tr', {}, el('th', { scope: 'row', text: String(e.row) }), cell(e.external_id || ''), cell(e.error))))));
      }
    };
    const watch = async (id, focus) => {
      clearTimeout(timer);
      history.replaceState(null, '', `${box.dataset.page}?job=${encodeURIComponent(id)}`);
      box.hidden = false;
      if (focus) box.focus();
      const r = await api('GET', box.dataset.api + encodeURIComponent(id));
      if (!r.ok) { box.hidden = true; showError(`Import job ${id}: ${reason(r)}`); return; }
      show(r.data);
      if (r.data.status === 'running') timer = setTimeout(() => watch(id, false), 300);
    };
    if (box.dataset.job) watch(box.dataset.job, false);
    return watch;
  }

  document.addEventListener('DOMContentLoaded', () => {
    const form = document.getElementById('tool-form');
    if (form && form.dataset.kind === 'trace') setupTrace(form);
    else if (form && renderers[form.dataset.kind]) {
      const reload = setupReport(form);
      setupHook(form, reload);
    }
    if (document.getElementById('job')) {
      const watch = setupJob();
      for (const f of document.querySelectorAll('form.import')) setupImport(f, watch);
    }
  });
})();
