/* SPDX-License-Identifier: Apache-2.0 */
/* Executions: streaming executions (POST /v1/executions, GET/DELETE
 * /v1/executions/{id}, .../outfeed) when this server has them.  Whether it
 * does is asked, not assumed: a server without them answers 404 "no
 * route" for /v1/executions. */
'use strict';

(function () {
  const { el, byId, setText, call, errorText, authHeaders } = Shlo;
  const FINAL = new Set(['done', 'succeeded', 'failed', 'canceled', 'cancelled', 'error', 'timeout']);
  const rows = new Map(); /* id -> {tr, state, out} */

  function isMissingRoute(res) {
    return res.status === 404 && res.json && res.json.error &&
           /no route/.test(res.json.error.message || '');
  }

  function setState(id, state) {
    const r = rows.get(id);
    if (r) r.state.textContent = state;
  }

  /* Read the outfeed stream (NDJSON) as it arrives; fetch, not
   * EventSource, because EventSource cannot send the bearer header. */
  async function watchOutfeed(id, pre) {
    const resp = await fetch('/v1/executions/' + encodeURIComponent(id) + '/outfeed', {
      headers: Object.assign({ Accept: 'application/x-ndjson' }, authHeaders()),
      cache: 'no-store', credentials: 'omit' });
    if (!resp.ok || !resp.body) {
      pre.textContent += 'outfeed: HTTP ' + resp.status + '\n';
      return;
    }
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let pending = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += dec.decode(value, { stream: true });
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (!line) continue;
        let msg = null;
        try { msg = JSON.parse(line); } catch (e) { msg = null; }
        if (msg && msg.state && !msg.dtype) setState(id, msg.state);
        pre.textContent += (msg && msg.data !== undefined
          ? msg.dtype + '[' + (msg.shape || []).join('×') + '] ' + JSON.stringify(msg.data) : line) + '\n';
        pre.scrollTop = pre.scrollHeight;
      }
    }
  }

  /* Long-poll the state until it is final. */
  async function followState(id) {
    for (;;) {
      const res = await call('GET', '/v1/executions/' + encodeURIComponent(id) + '?wait_ms=5000');
      if (!res.ok || !res.json) { setState(id, errorText(res)); return; }
      setState(id, res.json.state || '?');
      if (FINAL.has(res.json.state)) return;
    }
  }

  function addRow(id, state) {
    if (rows.has(id)) return;
    const stateCell = el('td', {}, state || '?');
    const out = el('pre', { className: 'outfeed' });
    const cancel = el('button', { type: 'button', className: 'small danger',
      onclick: async () => {
        const res = await call('DELETE', '/v1/executions/' + encodeURIComponent(id));
        if (!res.ok) setState(id, 'cancel failed: ' + errorText(res));
      } }, 'Cancel');
    const tr = el('tr', { dataset: { id } }, el('td', { className: 'mono' }, id), stateCell,
                  el('td', {}, out), el('td', {}, cancel));
    byId('exec-body').append(tr);
    rows.set(id, { tr, state: stateCell, out });
    watchOutfeed(id, out).catch((e) => { out.textContent += String(e) + '\n'; });
    followState(id).catch((e) => setState(id, String(e)));
  }

  async function start() {
    const req = {};
    const program = byId('exec-program').value, module = byId('exec-module').value.trim();
    if (program.trim()) req.program = program;
    else if (module) req.module = module;
    else { setText('exec-result', 'Give a program or a module id.', 'result bad'); return; }
    try {
      req.inputs = JSON.parse(byId('exec-inputs').value || '[]');
    } catch (e) {
      setText('exec-result', 'Inputs are not JSON: ' + e.message, 'result bad');
      return;
    }
    const res = await call('POST', '/v1/executions', JSON.stringify(req));
    if (!res.ok || !res.json || !res.json.id) {
      setText('exec-result', 'Not started: ' + errorText(res), 'result bad');
      return;
    }
    setText('exec-result', 'Started ' + res.json.id, 'result good');
    addRow(String(res.json.id), res.json.state);
  }

  async function detect() {
    let res;
    try {
      res = await call('GET', '/v1/executions');
    } catch (e) {
      setText('exec-status', 'The server does not answer: ' + e, 'note bad');
      return;
    }
    if (isMissingRoute(res)) {
      setText('exec-status', 'Streaming executions are not available on this server ' +
              '(GET /v1/executions: no such route).', 'note');
      byId('exec-status').dataset.available = 'no';
      return;
    }
    byId('exec-status').dataset.available = 'yes';
    setText('exec-status', 'This server runs streaming executions.', 'note');
    byId('exec-ui').hidden = false;
    byId('exec-start').addEventListener('click', start);
    const list = res.ok && res.json && res.json.executions;
    if (Array.isArray(list)) list.forEach((x) => addRow(String(x.id), x.state));
  }

  /* A trace by its id, as a timeline (GET /v1/traces/{id}); the page's
   * address may name one: executions.html#trace=ID. */
  async function showTrace() {
    const id = byId('trace-id').value.trim();
    const box = byId('timeline');
    box.hidden = false;
    if (!/^[0-9a-f]{32}$/.test(id)) {
      box.replaceChildren(el('p', { className: 'note bad' }, 'A trace id is 32 hex digits.'));
      return;
    }
    const res = await call('GET', '/v1/traces/' + id);
    if (!res.ok || !res.json) {
      box.replaceChildren(el('p', { className: 'note bad' }, 'Trace: ' + errorText(res)));
      return;
    }
    Shlo.timeline(box, res.json);
  }

  document.addEventListener('DOMContentLoaded', detect);
  document.addEventListener('DOMContentLoaded', () => {
    byId('trace-show').addEventListener('click', showTrace);
    const hit = /#trace=([0-9a-f]{32})$/.exec(location.hash);
    if (hit) {
      byId('trace-id').value = hit[1];
      showTrace();
    }
  });
})();
