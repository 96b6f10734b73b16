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

  /* A wall time as the x axis writes it: HH:MM:SS, or HH:MM for charts
   * whose points are minutes apart. */
  function clock(ms, minutes) {
    const d = new Date(ms), two = (v) => String(v).padStart(2, '0');
    return two(d.getHours()) + ':' + two(d.getMinutes()) +
      (minutes ? '' : ':' + two(d.getSeconds()));
  }

  /* Lines on a canvas, with axes and a legend: series [{values, color,
   * label}], values null = a gap, the newest value at the right edge.
   * opts.step_s is the time between values (1 s by default), opts.end_ms
   * the wall time of the newest (now by default), opts.points the width
   * of the window in values (at least the values given; 60 by default):
   * the x axis is labelled with clock times, the y axis from 0 to the
   * largest value shown, in fmt's units. */
  function chart(canvas, series, fmt, opts) {
    opts = opts || {};
    const step = opts.step_s || 1, end = opts.end_ms || Date.now();
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
    const left = 54, right = w - 8, top = 20, bottom = h - 18;
    g.font = '10px sans-serif';
    g.lineWidth = 1;
    /* y axis: 0, half and the top, with their gridlines */
    for (const f of [0, 0.5, 1]) {
      const y = Math.round(bottom - f * (bottom - top)) + 0.5;
      g.strokeStyle = f ? '#e6eaf0' : '#9aa6b5';
      g.beginPath(); g.moveTo(left, y); g.lineTo(right, y); g.stroke();
      g.fillStyle = '#5d6b7c';
      g.textAlign = 'right';
      g.fillText(fmt(max * f), left - 4, y + 3);
    }
    g.strokeStyle = '#9aa6b5';
    g.beginPath(); g.moveTo(left + 0.5, top); g.lineTo(left + 0.5, bottom); g.stroke();
    /* x axis: clock times at four ticks across the window */
    const cap = Math.max(n, opts.points || 60, 2);
    const span = (cap - 1) * step * 1000;
    for (let k = 0; k <= 3; k++) {
      const x = left + k * (right - left) / 3;
      g.beginPath(); g.moveTo(Math.round(x) + 0.5, bottom); g.lineTo(Math.round(x) + 0.5, bottom + 3); g.stroke();
      g.textAlign = k === 0 ? 'left' : k === 3 ? 'right' : 'center';
      g.fillText(clock(end - span * (1 - k / 3), step >= 60), x, h - 4);
    }
    /* the legend, top right */
    let lx = right;
    g.textAlign = 'right';
    for (const s of series.slice().reverse()) {
      if (!s.label) continue;
      g.fillStyle = '#1c2430';
      g.fillText(s.label, lx, 11);
      lx -= g.measureText(s.label).width + 4;
      /* a faint swatch: only the lines are drawn in the series' full colour */
      g.globalAlpha = 0.6;
      g.fillStyle = s.color;
      g.fillRect(lx - 10, 5, 10, 6);
      g.globalAlpha = 1;
      lx -= 18;
    }
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

  /* An execution's trace (Chrome trace JSON, GET /v1/traces/{id}) drawn
   * into box as a timeline: the request's span on top, then the server's
   * stages, then one row per thread for the engine's steps; each span a
   * bar placed by its start and sized by its duration, named, with its
   * duration in its tooltip. */
  function timeline(box, doc) {
    const ev = (doc.traceEvents || []).filter((e) => e.ph === 'X');
    box.replaceChildren();
    if (!ev.length) { box.append(el('p', { className: 'note' }, 'The trace has no spans.')); return; }
    const t0 = Math.min(...ev.map((e) => e.ts));
    const total = Math.max(...ev.map((e) => e.ts + e.dur)) - t0 || 1;
    const rows = new Map();
    const rowOf = (e) => e.cat === 'step' ? 'steps, thread ' + e.tid
      : e.cat === 'request' || e.cat === 'command' ? 'request' : 'stages';
    for (const e of ev.slice().sort((a, b) => a.ts - b.ts)) {
      const key = rowOf(e);
      if (!rows.has(key)) rows.set(key, []);
      rows.get(key).push(e);
    }
    const order = [...rows.keys()].sort((a, b) =>
      (a === 'request' ? 0 : a === 'stages' ? 1 : 2) - (b === 'request' ? 0 : b === 'stages' ? 1 : 2) ||
      a.localeCompare(b));
    const od = doc.otherData || {};
    box.append(el('p', { className: 'note', id: 'timeline-summary' },
      ev.length + ' spans over ' + fmtMs(total / 1000) +
      (od.request_id ? ', request ' + od.request_id : '') +
      (od.spans_dropped ? ', ' + od.spans_dropped + ' spans left out (trace-max-spans)' : '')));
    for (const key of order) {
      const track = el('div', { className: 'tl-track' });
      for (const e of rows.get(key)) {
        const bar = el('div', { className: 'tl-span tl-' + (e.cat || 'span'),
                                title: e.name + ': ' + fmtMs(e.dur / 1000) +
                                  (e.args && e.args.op ? ' (' + e.args.op + ', line ' + e.args.line + ')' : '') },
                       e.name);
        bar.style.left = (100 * (e.ts - t0) / total) + '%';
        bar.style.width = Math.max(0.2, 100 * e.dur / total) + '%';
        track.append(bar);
      }
      box.append(el('div', { className: 'tl-row' }, el('span', { className: 'tl-label' }, key), track));
    }
    box.append(el('div', { className: 'tl-row tl-axis' }, el('span', { className: 'tl-label' }, ''),
      el('div', { className: 'tl-track' }, el('span', { className: 'tl-start' }, '0'),
         el('span', { className: 'tl-end' }, fmtMs(total / 1000)))));
    /* the longest spans below the row of bars too short to be read */
    const longest = ev.filter((e) => e.cat !== 'request' && e.cat !== 'command')
      .sort((a, b) => b.dur - a.dur).slice(0, 12);
    box.append(el('table', { className: 'data tl-list' },
      el('tr', {}, el('th', {}, 'span'), el('th', {}, 'kind'), el('th', {}, 'thread'),
         el('th', {}, 'start'), el('th', {}, 'duration')),
      longest.map((e) => el('tr', {}, el('td', { className: 'mono' }, e.name),
        el('td', {}, e.cat), el('td', {}, String(e.tid)),
        el('td', {}, fmtMs((e.ts - t0) / 1000)), el('td', {}, fmtMs(e.dur / 1000))))));
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
           fmtBytes, fmtMs, chart, timeline, clock, base64 };
})();
