/* SPDX-License-Identifier: Apache-2.0 */
/* What every console page shares: building DOM nodes (text only, never
 * markup from data), calls to the server's JSON routes with the bearer
 * token, the token prompt, number formats and the small line charts. */
'use strict';

const Shlo = (function () {
  const TOKEN_KEY = 'shlo-console-token';
  let pendingPrompt = null;

  /* el('td', {className: 'mono', title: t}, 'text', node...): every
   * string child becomes a text node, so data can never become markup. */
  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === 'dataset') Object.assign(node.dataset, v);
      else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node[k] = v;
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined) continue;
      node.append(typeof kid === 'string' || typeof kid === 'number'
        ? document.createTextNode(String(kid)) : kid);
    }
    return node;
  }

  function byId(id) { return document.getElementById(id); }

  function setText(id, text, cls) {
    const node = byId(id);
    node.textContent = text;
    if (cls !== undefined) node.className = cls;
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY); }

  function authHeaders() {
    const t = token();
    return t ? { Authorization: 'Bearer ' + t } : {};
  }

  function showAuthState() {
    const box = byId('auth-state');
    if (!box) return;
    box.replaceChildren();
    if (!token()) return;
    box.append('token set', el('button', {
      type: 'button', className: 'small', id: 'forget-token',
      onclick: () => { sessionStorage.removeItem(TOKEN_KEY); location.reload(); }
    }, 'Forget token'));
  }

  /* One prompt for the whole page, however many calls got a 401. */
  function askToken(reason) {
    if (pendingPrompt) return pendingPrompt;
    pendingPrompt = new Promise((resolve) => {
      const input = el('input', { type: 'password', id: 'token-input',
                                  size: 40, autocomplete: 'off' });
      const form = el('form', { method: 'dialog' },
        el('h2', {}, 'Token needed'),
        el('p', { className: 'note', id: 'token-reason' }, reason),
        el('label', {}, 'Bearer token ', input),
        el('div', { className: 'row' },
          el('button', { type: 'submit', className: 'primary',
                         id: 'token-submit' }, 'Use token')));
      const dialog = el('dialog', { id: 'token-dialog' }, form);
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        if (!input.value.trim()) return;
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        dialog.close();
        dialog.remove();
        pendingPrompt = null;
        showAuthState();
        resolve();
      });
      dialog.addEventListener('cancel', (ev) => ev.preventDefault());
      document.body.append(dialog);
      dialog.showModal();
      input.focus();
    });
    return pendingPrompt;
  }

  /* A call to the server: {status, ok, json, text}.  A 401 asks for a
   * token (once per page, kept in sessionStorage) and tries again. */
  async function call(method, path, body, type) {
    for (;;) {
      const headers = authHeaders();
      if (body !== undefined) headers['Content-Type'] = type || 'application/json';
      const resp = await fetch(path, { method, headers, body, cache: 'no-store',
                                       credentials: 'omit', redirect: 'error' });
      const text = await resp.text();
      if (resp.status === 401) {
        const had = token();
        sessionStorage.removeItem(TOKEN_KEY);
        await askToken(had ? 'The server refused that token; give another.'
                           : 'This server needs a bearer token.');
        continue;
      }
      let json = null;
      if ((resp.headers.get('Content-Type') || '').includes('json')) {
        try { json = JSON.parse(text); } catch (e) { json = null; }
      }
      return { status: resp.status, ok: resp.ok, json, text };
    }
  }

  /* The server's error body as one line: "parse: message (line 3, column 7)". */
  function errorText(res) {
    const e = res.json && res.json.error;
    if (!e) return 'HTTP ' + res.status + (res.text ? ': ' + res.text.trim() : '');
    let s = (e.kind || 'error') + ': ' + (e.message || '');
    if (e.line) s += ' (line ' + e.line + (e.column ? ', column ' + e.column : '') + ')';
    return s;
  }

  function fmtBytes(n) {
    if (!isFinite(n)) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + ' ' + units[i];
  }

  function fmtMs(ms) {
    if (ms === null || ms === undefined || !isFinite(ms)) return '–';
    if (ms < 1) return (ms * 1000).toFixed(0) + ' µs';
    if (ms < 1000) return ms.toFixed(ms < 10 ? 2 : 1) + ' ms';
    return (ms / 1000).toFixed(2) + ' s';
  }

  /* Lines on a canvas: series [{values, color}], values null = a gap.
   * The y axis starts at 0 and ends at the largest value shown. */
  function chart(canvas, series, fmt) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || canvas.width, h = canvas.clientHeight || canvas.height;
    if (canvas.width !== w * ratio) { canvas.width = w * ratio; canvas.height = h * ratio; }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    let max = 0, n = 0;
    for (const s of series) {
      n = Math.max(n, s.values.length);
      for (const v of s.values) if (v !== null && v > max) max = v;
    }
    if (max === 0) max = 1;
    const top = 14, bottom = h - 4, left = 4, right = w - 4;
    g.strokeStyle = '#d5dbe3';
    g.beginPath(); g.moveTo(left, bottom + 0.5); g.lineTo(right, bottom + 0.5); g.stroke();
    g.fillStyle = '#5d6b7c';
    g.font = '11px sans-serif';
    g.fillText('max ' + fmt(max), left, 11);
    const cap = Math.max(n, 60);
    for (const s of series) {
      g.strokeStyle = s.color;
      g.lineWidth = 1.5;
      g.beginPath();
      let pen = false;
      s.values.forEach((v, i) => {
        if (v === null) { pen = false; return; }
        const x = right - (s.values.length - 1 - i) * (right - left) / (cap - 1);
        const y = bottom - (v / max) * (bottom - top);
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      });
      g.stroke();
      /* the newest value as a dot, so that a chart just begun shows too */
      const last = s.values.length - 1;
      if (last >= 0 && s.values[last] !== null) {
        g.fillStyle = s.color;
        g.beginPath();
        g.arc(right, bottom - (s.values[last] / max) * (bottom - top), 2.5, 0, 2 * Math.PI);
        g.fill();
      }
    }
  }

  /* Bytes as base64 (the protocol's "b64" and "artifact"). */
  function base64(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000)
      s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }

  /* The bar above every page: its links, the current one marked. */
  function header() {
    const page = document.body.dataset.page;
    const nav = el('nav', {}, [['overview', 'Overview'], ['modules', 'Modules'],
      ['playground', 'Playground'], ['executions', 'Executions']].map(([name, label]) =>
      el('a', { href: '/console/' + name + '.html', className: name === page ? 'current' : '',
                dataset: { nav: name } }, label)));
    document.body.prepend(el('header', { className: 'top' },
      el('span', { className: 'brand' }, 'shlo'), nav,
      el('span', { className: 'auth', id: 'auth-state' })));
    showAuthState();
  }
  document.addEventListener('DOMContentLoaded', header);

  return { el, byId, setText, call, errorText, authHeaders, askToken,
           fmtBytes, fmtMs, chart, base64 };
})();
