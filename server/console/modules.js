/* SPDX-License-Identifier: Apache-2.0 */
/* Modules: the modules this token may see (GET /v1/modules), registering
 * one from pasted text or a file (POST /v1/modules) and deleting one. */
'use strict';

(function () {
  const { el, byId, setText, call, errorText, fmtBytes, base64 } = Shlo;
  const BYTECODE_MAGIC = [0x4d, 0x4c, 0xef, 0x52]; /* "ML\xefR" */

  function ordinal(n) {
    if (n === 1) return 'most recent';
    const s = ['th', 'st', 'nd', 'rd'], v = n % 100;
    return n + (s[(v - 20) % 10] || s[v] || s[0]) + ' most recent';
  }

  function signature(f) {
    return '@' + f.name + '(' + (f.inputs || []).join(', ') + ') -> (' +
           (f.outputs || []).join(', ') + ')';
  }

  function deleteButton(id) {
    let armed = null;
    const b = el('button', { type: 'button', className: 'small danger',
                             dataset: { action: 'delete', id } }, 'Delete');
    b.addEventListener('click', async () => {
      if (!armed) { /* two clicks: a stray one deletes nothing */
        b.textContent = 'Confirm delete';
        b.dataset.armed = '1';
        armed = setTimeout(() => {
          armed = null; b.textContent = 'Delete'; delete b.dataset.armed;
        }, 4000);
        return;
      }
      clearTimeout(armed);
      const res = await call('DELETE', '/v1/modules/' + encodeURIComponent(id));
      setText('modules-status', res.ok ? 'Deleted ' + id : 'Delete failed: ' + errorText(res),
              res.ok ? 'result' : 'result bad');
      refresh();
    });
    return b;
  }

  function row(m, rank) {
    const grid = (m.replicas || 1) + ' × ' + (m.partitions || 1);
    const sigs = (m.functions || []).map((f) =>
      el('span', { className: 'sig' }, signature(f)));
    const kind = m.artifact ? el('div', { className: 'note' },
      'artifact, StableHLO ' + (m.artifact.stablehlo_version || '?')) : null;
    /* its names (issue #34): NAME vN, with TEAM/ for an admin's token */
    const names = (m.names || []).length ? el('div', { className: 'note names' },
      m.names.map((n) => (n.team ? n.team + '/' : '') + n.name + ' v' + n.version)
        .join(', ')) : null;
    return el('tr', { dataset: { id: m.id } },
      el('td', { className: 'mono', title: m.id }, m.id.slice(0, 19) + '…', kind,
         names),
      el('td', { className: 'mono' }, m.entry || ''),
      el('td', {}, sigs),
      el('td', { className: 'nowrap' }, grid),
      el('td', { className: 'nowrap' }, fmtBytes(m.bytes)),
      el('td', { className: 'nowrap' }, ordinal(rank)),
      el('td', {}, deleteButton(m.id)));
  }

  async function refresh() {
    const res = await call('GET', '/v1/modules');
    const body = byId('modules-body');
    if (!res.ok || !res.json) {
      body.replaceChildren();
      setText('modules-status', res.status === 403 ? 'This token may not list modules.'
        : 'Cannot list modules: ' + errorText(res), 'result bad');
      return;
    }
    const mods = res.json.modules || [];
    body.replaceChildren(...mods.map((m, i) => row(m, i + 1)));
    if (!mods.length) body.append(el('tr', {}, el('td', { colSpan: 7, className: 'note' },
      'No modules yet: register one above, or run a program in the playground.')));
  }

  function isBytecode(bytes) {
    return BYTECODE_MAGIC.every((b, i) => bytes[i] === b);
  }

  /* The request body: raw bytes for an artifact, text for a program, or
   * JSON when an entry is named. */
  async function requestBody() {
    const entry = byId('module-entry').value.trim();
    const file = byId('module-file').files[0];
    if (file) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      if (isBytecode(bytes)) {
        if (entry) return [JSON.stringify({ artifact: base64(bytes), entry }), 'application/json'];
        return [bytes, 'application/octet-stream'];
      }
      const text = new TextDecoder().decode(bytes);
      byId('module-text').value = text;
    }
    const text = byId('module-text').value;
    if (!text.trim()) return null;
    if (entry) return [JSON.stringify({ program: text, entry }), 'application/json'];
    return [text, 'text/plain; charset=utf-8'];
  }

  async function register() {
    const body = await requestBody();
    if (!body) {
      setText('module-result', 'Paste a program or choose a file first.', 'result bad');
      return;
    }
    setText('module-result', 'Registering…', 'result');
    const res = await call('POST', '/v1/modules', body[0], body[1]);
    if (res.ok && res.json) {
      setText('module-result', (res.json.cached ? 'Already registered: ' : 'Registered ') +
              res.json.id, 'result good');
      byId('module-file').value = '';
    } else {
      setText('module-result', 'Not registered: ' + errorText(res), 'result bad');
    }
    refresh();
  }

  document.addEventListener('DOMContentLoaded', () => {
    byId('module-register').addEventListener('click', register);
    byId('modules-refresh').addEventListener('click', refresh);
    refresh();
    /* not while a delete waits for its confirmation: that would reset it */
    setInterval(() => { if (!document.querySelector('[data-armed]')) refresh(); }, 10000);
  });
})();
