// The configuration manager's live state (trunks' gateways, servers'
// connections): every element marked data-live is refreshed from the
// page itself, read again every few seconds while the page is visible,
// so a change shows without a reload. A page that no longer answers (the
// session ended) leaves the last state in place.
(() => {
  'use strict';
  const every = 2000;

  async function refresh() {
    const live = document.querySelectorAll('[data-live][id]');
    if (!live.length) return;
    try {
      if (document.hidden) return;
      const r = await fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
      let changed = false;
      for (const el of live) {
        const fresh = doc.getElementById(el.id);
        if (!fresh || fresh.innerHTML === el.innerHTML) continue;
        el.replaceChildren(...Array.from(fresh.childNodes, (n) => document.adoptNode(n)));
        changed = true;
      }
      const note = document.getElementById('live-note');
      if (changed && note) note.textContent = 'Live state updated at ' + new Date().toLocaleTimeString();
    } catch (e) {
      // Offline for a moment: the next round tries again.
    } finally {
      setTimeout(refresh, every);
    }
  }

  document.addEventListener('DOMContentLoaded', () => setTimeout(refresh, every));
})();
