// The configuration manager's per-resource touches (manage_touches.go):
// a new prompt's recording chosen as a file, and a queue's agents added
// and removed from the queue's page. Writes go to the same /api routes as
// every form, with manage.js's helpers (session cookie and CSRF header);
// the server's answer decides, and the page is read again after a change.
'use strict';
(() => {
  const { api, el } = window.switchboardManage;

  // A new prompt's audio: the file picked is sent as the form's
  // audio_base64 (the generated input, kept as the value holder).
  function promptUpload(marker) {
    const input = document.getElementById(marker.dataset.input);
    if (!input) return;
    const field = input.closest('.field');
    const label = field.querySelector(`label[for="${input.id}"]`);
    const file = el('input', { type: 'file', id: `${input.id}-file`, accept: '.wav,.mp3,.ogg,.flac,audio/wav,audio/mpeg,audio/ogg,audio/flac', 'aria-describedby': input.getAttribute('aria-describedby') });
    input.type = 'hidden';
    input.after(file);
    if (label) {
      label.setAttribute('for', file.id);
      label.firstChild.textContent = 'Recording (WAV, MP3, OGG or FLAC) ';
    }
    const help = field.querySelector('.help');
    if (help) help.textContent = 'Choose the audio file; it is converted to 16 kHz mono and stored when the prompt is created.';
    file.addEventListener('change', () => {
      const f = file.files[0];
      if (!f) {
        input.value = '';
        return;
      }
      const reader = new FileReader();
      reader.addEventListener('load', () => {
        input.value = String(reader.result).replace(/^data:[^,]*,/, '');
        field.dataset.loaded = f.name;
        field.dispatchEvent(new CustomEvent('changed', { bubbles: true }));
      });
      reader.readAsDataURL(f);
    });
  }

  // A queue's agents: adding one appends this queue to its tiers
  // (agents' queues), removing one drops it; both are a PUT of the agent.
  // The page is then read again; what changed is said there, with the
  // focus on the agents, where the keyboard was (not the page's top).
  const doneKey = 'switchboard:queue-agents';
  function queueAgents(box) {
    const queue = Number(box.dataset.queue);
    const out = document.getElementById('queue-agents-result');
    const said = sessionStorage.getItem(doneKey);
    if (said) {
      sessionStorage.removeItem(doneKey);
      out.replaceChildren(el('p', { text: said }));
      const heading = box.querySelector('h2');
      heading.setAttribute('tabindex', '-1');
      heading.focus();
    }
    const change = async (agentAPI, edit, what, done) => {
      out.replaceChildren();
      const got = await api('GET', agentAPI);
      let r = got;
      if (got.ok) {
        const queues = edit((got.data.queues || []).filter((t) => Number(t.queue_id) !== queue));
        r = await api('PUT', agentAPI, { queues });
      }
      if (r.ok) {
        sessionStorage.setItem(doneKey, `${got.data.name || got.data.agent_number} ${done}.`);
        location.reload();
        return;
      }
      let msg = (r.data && r.data.error) || `The server answered ${r.status}.`;
      if (r.data && r.data.fields) msg = Object.entries(r.data.fields).map(([k, v]) => `${k}: ${v}`).join('; ');
      out.replaceChildren(el('p', { class: 'error', text: `${what}: ${msg}` }));
    };
    for (const b of box.querySelectorAll('button[data-remove-agent]')) {
      b.addEventListener('click', () => change(b.dataset.removeAgent, (qs) => qs, 'Not removed', 'removed from this queue'));
    }
    const form = document.getElementById('queue-agent-add');
    if (!form) return;
    const num = (id) => {
      const s = document.getElementById(id).value.trim();
      return /^\d+$/.test(s) ? Number(s) : s;
    };
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const tier = { queue_id: queue, level: num('add-level'), position: num('add-position') };
      change(document.getElementById('add-agent').value, (qs) => qs.concat([tier]), 'Not added', 'added to this queue');
    });
  }

  const setup = () => {
    for (const m of document.querySelectorAll('[data-touch="prompt-upload"]')) promptUpload(m);
    for (const b of document.querySelectorAll('[data-touch="queue-agents"]')) queueAgents(b);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setup);
  else setup();
})();
