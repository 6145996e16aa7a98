// The configuration manager's forms. The page is rendered by the server
// from the registry; this script builds the widgets of structured fields
// (lists, object lists, destinations) from their declared props, fills
// reference pickers from the API's lists, and sends the form to the same
// /api route any client uses (session cookie and CSRF header). It holds no
// validation rule: a field is checked by the server when it is left (the
// write with ?dry_run=true), and the answer's reasons are shown beside
// their fields.
'use strict';
(() => {
  const meta = (n) => { const m = document.querySelector(`meta[name="${n}"]`); return m ? m.content : ''; };
  const csrfHeader = meta('csrf-header') || 'X-CSRF-Token';
  const csrfToken = meta('csrf-token');

  // api sends a request with the session (cookie and CSRF header); body
  // is sent as JSON, or as it is with the content type given. An answer
  // that never came is a status 0 with a reason a person reads.
  async function api(method, url, body, type) {
    const headers = { Accept: 'application/json' };
    if (method !== 'GET') headers[csrfHeader] = csrfToken;
    const opt = { method, headers, credentials: 'same-origin' };
    if (body !== undefined) {
      headers['Content-Type'] = type || 'application/json';
      opt.body = type ? body : JSON.stringify(body);
    }
    let r;
    try {
      r = await fetch(url, opt);
    } catch (e) {
      return { status: 0, ok: false, data: { error: 'The server could not be reached.' }, total: 0 };
    }
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
    return { status: r.status, ok: r.ok, data, total: Number(r.headers.get('X-Total-Count') || 0) };
  }

  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v; else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k !== null && k !== undefined && k !== false) e.append(k);
    return e;
  };

  // Pickers: the options of a reference, read once per list. A picker
  // whose list is searchable reads one page first; when the tenant has
  // more objects than that, what a person types asks the API (?q=), so a
  // form stays light with thousands of extensions to pick from.
  const lists = new Map();
  const fill = (dl, p, data) => {
    if (!Array.isArray(data)) return;
    const opts = [];
    for (const o of data) {
      const v = o[p.value];
      if (v === undefined || v === null) continue;
      const label = o[p.label] !== undefined && String(o[p.label]) !== String(v) ? `${o[p.label]} (${v})` : String(v);
      opts.push(el('option', { value: String(v), label }, document.createTextNode(label)));
    }
    dl.replaceChildren(...opts);
  };
  function datalistFor(p) {
    const id = 'dl-' + btoa(p.list + '|' + p.value + '|' + p.label).replace(/[^A-Za-z0-9]/g, '');
    let dl = document.getElementById(id);
    if (dl) return id;
    dl = el('datalist', { id });
    document.body.append(dl);
    if (!lists.has(p.list)) lists.set(p.list, api('GET', p.list));
    lists.get(p.list).then((r) => {
      if (!r.ok) return;
      fill(dl, p, r.data);
      dl.dataset.more = p.search && r.total > r.data.length ? '1' : '';
    });
    return id;
  }
  // searchPicker asks the API for the objects matching what is typed
  // into input, when its picker's first page did not hold them all; picked is
  // the picker, or a function answering the input's picker of the moment.
  function searchPicker(input, picked) {
    let timer = 0, asked = '';
    input.addEventListener('input', () => {
      const p = typeof picked === 'function' ? picked() : picked;
      const dl = p && document.getElementById(input.getAttribute('list'));
      if (!dl || dl.dataset.more !== '1') return;
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const q = input.value.trim();
        if (q === asked) return;
        asked = q;
        const r = await api('GET', p.list + (q ? '&q=' + encodeURIComponent(q) : ''));
        if (r.ok && asked === q) fill(dl, p, r.data);
      }, 150);
    });
  }

  // A number input's value: a number when it reads as one, else the text
  // itself, which the server refuses with its own reason.
  const numberOf = (s) => (/^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s);

  let uid = 0;
  // scalar builds the input of a scalar spec; read returns its value
  // (undefined when empty).
  function scalar(spec, value, name) {
    const id = 'w' + (++uid);
    let input;
    if (spec.kind === 'bool' || spec.kind === 'flag') {
      input = el('input', { type: 'checkbox', id, 'aria-label': name });
      input.checked = spec.kind === 'bool' ? value === true : value === '1';
      return { node: input, read: () => (spec.kind === 'bool' ? input.checked : input.checked ? '1' : undefined) };
    }
    if (spec.kind === 'enum' || (spec.kind === 'destination-type')) {
      input = el('select', { id, 'aria-label': name }, el('option', { value: '', text: '—' }));
      for (const o of spec.enum || []) input.append(el('option', { value: o, text: o }));
      input.value = value === undefined || value === null ? '' : String(value);
      return { node: input, read: () => (input.value === '' ? undefined : input.value) };
    }
    input = el('input', { id, 'aria-label': name, inputmode: spec.kind === 'number' ? 'decimal' : null });
    if (spec.picker) {
      input.setAttribute('list', datalistFor(spec.picker));
      input.setAttribute('autocomplete', 'off');
      searchPicker(input, spec.picker);
    }
    input.value = value === undefined || value === null ? '' : String(value);
    return {
      node: input,
      read: () => {
        const s = input.value.trim();
        if (s === '') return undefined;
        return spec.kind === 'number' || spec.item === 'number' ? numberOf(s) : input.value;
      },
    };
  }

  // build makes the widget of any spec inside box and returns its reader.
  function build(spec, box, value, name) {
    switch (spec.kind) {
      case 'list': {
        const itemSpec = { kind: spec.item, picker: spec.picker };
        return rowsEditor(box, value || [], name, (row, v, n) => {
          const w = scalar(itemSpec, v, `${name} ${n}`);
          row.append(el('td', {}, w.node));
          return w.read;
        }, null);
      }
      case 'checks': {
        const chosen = new Set(value || []);
        const boxes = (spec.enum || []).map((o) => {
          const c = el('input', { type: 'checkbox', value: o, id: 'w' + (++uid) });
          c.checked = chosen.has(o);
          box.append(el('label', { class: 'check', for: c.id }, c, document.createTextNode(' ' + o)));
          return c;
        });
        return () => boxes.filter((c) => c.checked).map((c) => c.value);
      }
      case 'rows':
        return rowsEditor(box, value || [], name, (row, v, n) => {
          const readers = {};
          for (const p of spec.props) {
            const cell = el('td');
            readers[p.name] = build(p, cell, v ? v[p.name] : undefined, `${p.label}, ${name} ${n}`);
            row.append(cell);
          }
          return () => objectOf(readers);
        }, spec.props);
      case 'object': {
        const readers = {};
        for (const p of spec.props) {
          const w = el('div', { class: 'prop' });
          const inner = el('div');
          readers[p.name] = build(p, inner, value ? value[p.name] : undefined, p.label);
          const ctl = inner.querySelector('input,select,textarea');
          const text = p.label + (p.required ? ' (required)' : '');
          if (ctl && (p.kind === 'bool' || p.kind === 'flag')) {
            ctl.removeAttribute('aria-label');
            w.append(el('label', { class: 'check', for: ctl.id }, ctl, document.createTextNode(' ' + text)));
          } else if (ctl && inner.children.length === 1) {
            ctl.removeAttribute('aria-label');
            w.append(el('label', { for: ctl.id, text }), inner);
          } else {
            w.append(el('span', { class: 'prop-label', text }), inner);
          }
          box.append(w);
        }
        return () => {
          const o = objectOf(readers);
          return Object.keys(o).length ? o : undefined; // nothing given: no object
        };
      }
      case 'destination': {
        const t = scalar({ kind: 'enum', enum: spec.enum }, value ? value.type : undefined, `${name}: type`);
        const target = scalar({ kind: 'text' }, value ? value.target : undefined, `${name}: target`);
        // The target offers the tenant's objects of the chosen type.
        const targets = spec.targets || {};
        const offer = () => {
          const p = targets[t.node.value];
          if (p) target.node.setAttribute('list', datalistFor(p)); else target.node.removeAttribute('list');
          if (p) target.node.setAttribute('autocomplete', 'off'); else target.node.removeAttribute('autocomplete');
        };
        searchPicker(target.node, () => targets[t.node.value]);
        t.node.addEventListener('change', offer);
        offer();
        box.append(el('span', { class: 'dest' }, t.node, target.node));
        return () => {
          const type = t.read();
          if (type === undefined) return undefined;
          const out = { type };
          const tg = target.read();
          if (tg !== undefined) out.target = tg;
          return out;
        };
      }
      case 'json': {
        const ta = el('textarea', { rows: 4, 'aria-label': name, id: 'w' + (++uid) });
        ta.value = value === undefined || value === null ? '' : JSON.stringify(value, null, 2);
        box.append(ta);
        return () => {
          const s = ta.value.trim();
          if (s === '') return undefined;
          try { return JSON.parse(s); } catch (e) { return s; }
        };
      }
      default: {
        const w = scalar(spec, value, name);
        box.append(w.node);
        return w.read;
      }
    }
  }

  function objectOf(readers) {
    const out = {};
    for (const [k, r] of Object.entries(readers)) {
      const v = r();
      if (v !== undefined) out[k] = v;
    }
    return out;
  }

  // rowsEditor is the repeated-row editor of lists: a table with a row per
  // item, add and remove buttons; makeRow fills a row and returns its reader.
  function rowsEditor(box, items, name, makeRow, props) {
    const table = el('table', { class: 'rows' });
    if (props) {
      const head = el('tr');
      for (const p of props) head.append(el('th', { scope: 'col', text: p.label + (p.required ? ' *' : '') }));
      head.append(el('th', { scope: 'col' }, el('span', { class: 'visually-hidden', text: 'Remove' })));
      table.append(el('thead', {}, head));
    }
    const body = el('tbody');
    table.append(body);
    const readers = [];
    let n = 0;
    const add = (v) => {
      const row = el('tr');
      const entry = { row, read: makeRow(row, v, ++n) };
      const rm = el('button', { type: 'button', class: 'small', text: 'Remove', 'aria-label': `Remove ${name} ${n}` });
      rm.addEventListener('click', () => {
        readers.splice(readers.indexOf(entry), 1);
        row.remove();
        box.closest('.field')?.dispatchEvent(new CustomEvent('changed', { bubbles: true }));
      });
      row.append(el('td', {}, rm));
      body.append(row);
      readers.push(entry);
      return row;
    };
    for (const v of items) add(v);
    const addBtn = el('button', { type: 'button', class: 'small', text: `Add ${name.toLowerCase()} row` });
    addBtn.addEventListener('click', () => {
      const row = add(undefined);
      const first = row.querySelector('input,select,textarea');
      if (first) first.focus();
    });
    box.append(table, addBtn);
    return () => {
      const out = readers.map((e) => e.read());
      return out.filter((v) => v !== undefined && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0));
    };
  }

  // The form: one reader per top-level field.
  function setupForm(form) {
    const edit = form.dataset.edit === '1';
    const fields = new Map();
    for (const w of form.querySelectorAll('.field')) {
      const spec = JSON.parse(w.dataset.spec);
      const initial = w.dataset.value ? JSON.parse(w.dataset.value) : undefined;
      let read;
      const box = w.querySelector('.widget');
      if (box) {
        read = build(spec, box, initial, spec.label);
        if (w.dataset.disabled) for (const c of box.querySelectorAll('input,select,textarea,button')) c.disabled = true;
      } else {
        const input = w.querySelector('input,select');
        if (spec.picker && input.getAttribute('list')) {
          // The shared list, so a search's answer reaches every input
          // picking from it.
          input.setAttribute('list', datalistFor(spec.picker));
          searchPicker(input, spec.picker);
        }
        read = () => {
          if (input.type === 'checkbox') return spec.kind === 'flag' ? (input.checked ? '1' : undefined) : input.checked;
          const s = input.value.trim();
          if (s === '') return undefined;
          return spec.kind === 'number' ? numberOf(s) : input.value;
        };
      }
      const f = { w, spec, read, secret: spec.kind === 'secret', disabled: !!w.dataset.disabled, touched: false };
      f.start = JSON.stringify(read());
      fields.set(spec.name, f);
    }

    // body is what the form sends: on create every given value, on edit
    // the changed ones (an emptied value is null; a secret left empty is
    // kept).
    const body = () => {
      const out = {};
      for (const [name, f] of fields) {
        if (f.disabled) continue;
        const v = f.read();
        if (!edit) {
          if (v !== undefined) out[name] = v;
          continue;
        }
        if (f.secret && v === undefined) continue;
        if (JSON.stringify(v) === f.start) continue;
        out[name] = v === undefined ? null : v;
      }
      return out;
    };

    const errBox = document.getElementById('form-error');
    const showField = (name, msg) => {
      const f = fields.get(name);
      if (!f) return false;
      const p = f.w.querySelector('.field-error');
      p.textContent = msg ? `${f.spec.label}: ${msg}` : '';
      f.w.classList.toggle('invalid', !!msg);
      for (const c of f.w.querySelectorAll('input,select,textarea')) {
        if (msg) c.setAttribute('aria-invalid', 'true'); else c.removeAttribute('aria-invalid');
      }
      return true;
    };
    const showForm = (msg) => {
      errBox.textContent = msg || '';
      errBox.hidden = !msg;
    };
    // conflictField finds the field a 409's message names ("already
    // exists: name").
    const conflictField = (msg) => {
      const m = /already exists: (.*)$/.exec(msg || '');
      if (!m) return null;
      const names = m[1].split(',').map((s) => s.trim()).filter((s) => fields.has(s));
      return names.length ? names[names.length - 1] : null;
    };

    const url = (dry) => form.dataset.action + (dry ? (form.dataset.action.includes('?') ? '&' : '?') + 'dry_run=true' : '');

    // check asks the server about the field just left: the whole form
    // on create (other fields' reasons wait until they are touched), the
    // field alone on edit.
    let seq = 0;
    async function check(name) {
      const f = fields.get(name);
      f.touched = true;
      let b = body();
      if (edit) {
        if (!(name in b)) { showField(name, ''); return; }
        b = { [name]: b[name] };
      }
      const mine = ++seq;
      const r = await api(form.dataset.method, url(true), b);
      if (mine !== seq && !f.touched) return;
      const reasons = (r.data && r.data.fields) || {};
      if (r.status === 409 && conflictField(r.data.error) === name) reasons[name] = r.data.error;
      for (const [n, g] of fields) {
        if (n === name || g.touched) showField(n, reasons[n] || '');
      }
    }

    for (const [name, f] of fields) {
      f.w.addEventListener('focusout', (ev) => {
        if (ev.relatedTarget && f.w.contains(ev.relatedTarget)) return; // still inside the field
        check(name);
      });
      f.w.addEventListener('changed', () => check(name));
    }

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      showForm('');
      const submit = form.querySelector('button[type=submit]');
      submit.disabled = true;
      let r;
      try {
        r = await api(form.dataset.method, url(false), body());
      } finally {
        submit.disabled = false;
      }
      for (const n of fields.keys()) showField(n, '');
      if (r.ok) return done(r.data);
      const reasons = (r.data && r.data.fields) || {};
      if (r.status === 409) {
        const n = conflictField(r.data.error);
        if (n) reasons[n] = r.data.error;
      }
      const other = [];
      let first = null;
      for (const [n, msg] of Object.entries(reasons)) {
        if (showField(n, msg)) first = first || n; else other.push(`${n}: ${msg}`);
      }
      const general = Object.keys(reasons).length ? other.join('; ') : (r.data && r.data.error) || `The server answered ${r.status}.`;
      showForm(general ? (edit ? 'Not saved: ' : 'Not created: ') + general : (edit ? 'Not saved: see the fields marked below.' : 'Not created: see the fields marked below.'));
      const target = first ? fields.get(first).w.querySelector('input,select,textarea,button') : null;
      (target || errBox).focus();
    });

    function done(rec) {
      const key = rec ? rec[form.dataset.keyField] : undefined;
      const next = form.dataset.done || (form.dataset.viewBase + encodeURIComponent(key) + (form.dataset.viewBase.endsWith('/tenants/') ? '/' : ''));
      const names = (JSON.parse(form.dataset.secrets || '[]') || []).filter((n) => rec && rec[n] !== undefined && rec[n] !== null && rec[n] !== '');
      if (edit || names.length === 0) {
        location.assign(next);
        return;
      }
      // A secret the server generated or sealed is in this answer only.
      const section = document.getElementById('secrets');
      const list = document.getElementById('secret-list');
      for (const n of names) {
        const v = typeof rec[n] === 'string' ? rec[n] : JSON.stringify(rec[n]);
        const code = el('code', { class: 'key', text: v });
        const copy = el('button', { type: 'button', class: 'small', text: 'Copy', 'aria-label': `Copy ${n.replace(/_/g, ' ')}` });
        copy.addEventListener('click', async () => {
          try { await navigator.clipboard.writeText(v); copy.textContent = 'Copied'; } catch (e) { copy.textContent = 'Select and copy'; }
        });
        list.append(el('dt', { text: n.replace(/_/g, ' ') }), el('dd', {}, code, document.createTextNode(' '), copy));
      }
      document.getElementById('secrets-done').setAttribute('href', next);
      form.hidden = true;
      section.hidden = false;
      section.focus();
    }
  }

  // Delete asks first, then sends DELETE; a refusal (an object still in
  // use) is shown with what uses it.
  function setupDelete(btn) {
    const out = document.getElementById('delete-result');
    btn.addEventListener('click', () => {
      out.replaceChildren();
      const yes = el('button', { type: 'button', class: 'danger', text: `Yes, delete ${btn.dataset.what}` });
      const no = el('button', { type: 'button', text: 'Keep it' });
      const box = el('div', { class: 'confirm card' }, el('p', { text: `Delete ${btn.dataset.what}? This cannot be undone.` }), yes, document.createTextNode(' '), no);
      out.append(box);
      no.addEventListener('click', () => { out.replaceChildren(); btn.focus(); });
      yes.addEventListener('click', async () => {
        const r = await api('DELETE', btn.dataset.delete);
        if (r.ok) { location.assign(btn.dataset.then); return; }
        const msg = (r.data && r.data.error) || `The server answered ${r.status}.`;
        const refused = el('div', { class: 'error' }, el('p', { text: `Not deleted: ${msg}` }));
        const used = /still used by (.*)$/.exec(msg);
        if (used) {
          const ul = el('ul', { class: 'referrers' });
          for (const it of used[1].split(/, (?=[a-zA-Z])/)) ul.append(el('li', { text: it }));
          refused.append(el('p', { text: 'Change or delete these first:' }), ul);
        }
        out.replaceChildren(refused);
      });
      yes.focus();
    });
  }

  // The per-resource touches (manage_touches.js) and the tools (tools.js)
  // write with the same helpers.
  window.switchboardManage = { api, el };

  document.addEventListener('DOMContentLoaded', () => {
    const form = document.getElementById('object-form');
    if (form) {
      setupForm(form);
      form.dataset.ready = '1';
    }
    for (const b of document.querySelectorAll('button[data-delete]')) setupDelete(b);
    // Marks for the page-cost measurement (and any browser's performance
    // panel): set up, and every picker's list loaded.
    performance.mark('switchboard:ready');
    Promise.allSettled(lists.values()).then(() => performance.mark('switchboard:pickers'));
  });
})();
