/* SPDX-License-Identifier: Apache-2.0 */
/* Playground: an editor with line numbers, inputs as JSON tensors or .npy
 * files, POST /execute, outputs as tables and 2-D heatmaps, and a parse or
 * verify error marked on its line and column. */
'use strict';

(function () {
  const { el, byId, setText, call, errorText, fmtMs } = Shlo;
  const npyTensors = new WeakMap(); /* input row -> tensor from its .npy */
  const MAX_ROWS = 256, MAX_COLS = 64;

  const EXAMPLES = [
    { name: 'add two matrices', inputs: [
      { dtype: 'f32', shape: [2, 2], data: [1, 2, 3, 4] },
      { dtype: 'f32', shape: [2, 2], data: [10, 20, 30, 40] }],
      program: 'func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {\n' +
        '  %sum = stablehlo.add %a, %b : tensor<2x2xf32>\n' +
        '  return %sum : tensor<2x2xf32>\n}\n' },
    { name: 'matrix product', inputs: [
      { dtype: 'f32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] },
      { dtype: 'f32', shape: [3, 2], data: [1, 0, 0, 1, 1, 1] }],
      program: 'func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {\n' +
        '  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]\n' +
        '      : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n' +
        '  return %c : tensor<2x2xf32>\n}\n' },
    { name: 'a 16×16 heatmap', inputs: [],
      program: 'func.func @main() -> tensor<16x16xf32> {\n' +
        '  %i = stablehlo.iota dim = 0 : tensor<16x16xf32>\n' +
        '  %j = stablehlo.iota dim = 1 : tensor<16x16xf32>\n' +
        '  %p = stablehlo.multiply %i, %j : tensor<16x16xf32>\n' +
        '  return %p : tensor<16x16xf32>\n}\n' }
  ];

  /* ---- the editor ---- */

  const editor = {};

  function lineHeight() {
    return parseFloat(getComputedStyle(editor.text).lineHeight) || 18;
  }

  function charWidth() {
    const g = document.createElement('canvas').getContext('2d');
    g.font = getComputedStyle(editor.text).font;
    return g.measureText('0000000000').width / 10;
  }

  function renderGutter() {
    const n = editor.text.value.split('\n').length;
    const g = editor.gutter;
    while (g.children.length < n) g.append(el('div', {}, String(g.children.length + 1)));
    while (g.children.length > n) g.lastChild.remove();
    syncScroll();
  }

  function syncScroll() {
    editor.gutter.scrollTop = editor.text.scrollTop;
    const m = byId('error-marker');
    if (m) placeMarker(m);
  }

  function clearMarker() {
    const m = byId('error-marker');
    if (m) m.remove();
    for (const d of editor.gutter.querySelectorAll('.error')) d.className = '';
  }

  function placeMarker(m) {
    const pad = parseFloat(getComputedStyle(editor.text).paddingTop) || 0;
    const padLeft = parseFloat(getComputedStyle(editor.text).paddingLeft) || 0;
    m.style.top = (pad + (Number(m.dataset.line) - 1) * lineHeight() - editor.text.scrollTop) + 'px';
    const caret = m.querySelector('.caret');
    caret.style.left = (padLeft + (Math.max(1, Number(m.dataset.column)) - 1) * charWidth() -
                        editor.text.scrollLeft) + 'px';
  }

  /* Mark line (1-based) and column with the message beside them. */
  function showMarker(line, column, message) {
    clearMarker();
    const lines = editor.text.value.split('\n').length;
    line = Math.min(Math.max(1, line), lines);
    const m = el('div', { id: 'error-marker', className: 'error-marker',
                          dataset: { line: String(line), column: String(column || 1) } },
      el('span', { className: 'caret' }), el('span', { className: 'message' }, message));
    editor.markers.append(m);
    const gutterLine = editor.gutter.children[line - 1];
    if (gutterLine) gutterLine.className = 'error';
    /* bring the line into view */
    const top = (line - 1) * lineHeight();
    if (top < editor.text.scrollTop || top > editor.text.scrollTop + editor.text.clientHeight - 40)
      editor.text.scrollTop = Math.max(0, top - 60);
    placeMarker(m);
    syncScroll();
  }

  function setupEditor() {
    editor.text = byId('program');
    editor.gutter = byId('gutter');
    editor.markers = byId('marker-layer');
    editor.text.addEventListener('input', () => { clearMarker(); renderGutter(); });
    editor.text.addEventListener('scroll', syncScroll);
    editor.text.addEventListener('keydown', (ev) => {
      if (ev.key === 'Tab' && !ev.shiftKey && !ev.ctrlKey && !ev.metaKey) {
        ev.preventDefault();
        editor.text.setRangeText('  ', editor.text.selectionStart, editor.text.selectionEnd, 'end');
        renderGutter();
      } else if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
        ev.preventDefault();
        run();
      }
    });
  }

  /* ---- inputs ---- */

  function addInput(tensor) {
    const text = el('textarea', { className: 'input-json', spellcheck: false,
      value: tensor ? JSON.stringify(tensor) : '' });
    const status = el('span', { className: 'note' });
    const file = el('input', { type: 'file', accept: '.npy', className: 'input-npy' });
    const row = el('div', { className: 'input-row' });
    file.addEventListener('change', async () => {
      npyTensors.delete(row);
      text.disabled = false;
      status.textContent = '';
      status.className = 'note';
      const f = file.files[0];
      if (!f) return;
      try {
        const t = Npy.toTensor(await f.arrayBuffer());
        npyTensors.set(row, t);
        text.disabled = true;
        status.textContent = f.name + ': ' + t.dtype + '[' + t.shape.join('×') + ']';
      } catch (e) {
        status.textContent = f.name + ': ' + e.message;
        status.className = 'note bad';
      }
    });
    const remove = el('button', { type: 'button', className: 'small',
      onclick: () => { row.remove(); relabel(); } }, 'Remove');
    row.append(el('div', { className: 'row' }, el('strong', { className: 'input-label' }),
                  el('label', {}, '.npy ', file), status, remove), text);
    byId('inputs').append(row);
    relabel();
  }

  function relabel() {
    byId('inputs').querySelectorAll('.input-label').forEach((l, i) => {
      l.textContent = 'input ' + i;
    });
  }

  /* The inputs as JSON tensors, or throw naming the one that is not. */
  function collectInputs() {
    return [...byId('inputs').children].map((row, i) => {
      const t = npyTensors.get(row);
      if (t) return t;
      const text = row.querySelector('textarea').value.trim();
      if (!text) throw new Error('input ' + i + ' is empty');
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new Error('input ' + i + ' is not JSON: ' + e.message);
      }
    });
  }

  function loadExample(i) {
    const ex = EXAMPLES[i];
    editor.text.value = ex.program;
    byId('inputs').replaceChildren();
    ex.inputs.forEach((t) => addInput(t));
    clearMarker();
    renderGutter();
  }

  /* ---- outputs ---- */

  function cellText(v) {
    if (Array.isArray(v)) { /* complex: [re, im] */
      const im = Number(v[1]);
      return v[0] + (im < 0 || Object.is(im, -0) ? ' − ' + String(v[1]).replace('-', '') : ' + ' + v[1]) + 'i';
    }
    return String(v);
  }

  /* Rows of the last dimension: [label, values] with the leading indices
   * as the label. */
  function tensorTable(t) {
    const shape = t.shape || [];
    const data = t.data || [];
    const cols = shape.length ? shape[shape.length - 1] : 1;
    const rows = cols ? Math.floor(data.length / cols) : 0;
    const table = el('table', { className: 'tensor' });
    const head = el('tr', {}, el('th', {}, ''));
    for (let j = 0; j < Math.min(cols, MAX_COLS); j++) head.append(el('th', {}, String(j)));
    if (shape.length) table.append(head);
    const lead = shape.slice(0, -1);
    for (let r = 0; r < Math.min(rows, MAX_ROWS); r++) {
      let rest = r;
      const idx = lead.map(() => 0);
      for (let d = lead.length - 1; d >= 0; d--) { idx[d] = rest % lead[d]; rest = Math.floor(rest / lead[d]); }
      const tr = el('tr', {}, el('th', {}, shape.length ? (lead.length ? idx.join(',') : '') : 'scalar'));
      for (let j = 0; j < Math.min(cols, MAX_COLS); j++)
        tr.append(el('td', {}, cellText(data[r * cols + j])));
      table.append(tr);
    }
    const cut = rows > MAX_ROWS || cols > MAX_COLS;
    return [table, cut ? el('p', { className: 'note' },
      'showing ' + Math.min(rows, MAX_ROWS) + ' of ' + rows + ' rows, ' +
      Math.min(cols, MAX_COLS) + ' of ' + cols + ' columns') : null];
  }

  function heatColor(x) { /* 0..1: dark blue -> teal -> yellow */
    const stops = [[33, 33, 110], [33, 145, 140], [250, 230, 40]];
    const s = x < 0.5 ? 0 : 1, f = x < 0.5 ? x * 2 : (x - 0.5) * 2;
    return stops[s].map((c, k) => Math.round(c + (stops[s + 1][k] - c) * f));
  }

  function heatmap(t) {
    const [rows, cols] = t.shape;
    const vals = t.data.map((v) => (typeof v === 'boolean' ? Number(v) : Number(v)));
    const finite = vals.filter((v) => isFinite(v));
    if (!rows || !cols || !finite.length) return null;
    let lo = Infinity, hi = -Infinity;
    for (const v of finite) { if (v < lo) lo = v; if (v > hi) hi = v; }
    const cell = Math.max(1, Math.min(16, Math.floor(256 / Math.max(rows, cols))));
    const canvas = el('canvas', { className: 'heatmap', width: cols * cell, height: rows * cell,
                                  title: 'min ' + lo + ', max ' + hi });
    const g = canvas.getContext('2d');
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) {
        const v = vals[r * cols + c];
        const rgb = isFinite(v) ? heatColor(hi > lo ? (v - lo) / (hi - lo) : 0.5) : [160, 160, 160];
        g.fillStyle = 'rgb(' + rgb.join(',') + ')';
        g.fillRect(c * cell, r * cell, cell, cell);
      }
    return [canvas, el('p', { className: 'note' }, 'heatmap: min ' + lo + ', max ' + hi)];
  }

  function renderTensor(t, label) {
    const box = el('div', { className: 'output' });
    if (t.tuple) {
      box.append(el('h3', {}, label + ': tuple of ' + t.tuple.length));
      t.tuple.forEach((u, i) => box.append(renderTensor(u, label + '.' + i)));
      return box;
    }
    if (t.token) return el('div', { className: 'output' }, el('h3', {}, label + ': token'));
    box.append(el('h3', {}, label + ': ' + t.dtype + '[' + (t.shape || []).join('×') + ']'));
    if (t.b64 !== undefined) {
      box.append(el('p', { className: 'note' }, 'raw bytes (b64): ' + t.b64));
      return box;
    }
    box.append(...tensorTable(t).filter(Boolean));
    const numeric = !String(t.dtype).startsWith('complex');
    if (t.shape && t.shape.length === 2 && numeric) box.append(...(heatmap(t) || []));
    return box;
  }

  function renderOutputs(outputs) {
    const box = byId('outputs');
    box.replaceChildren();
    const perProcess = outputs.length && Array.isArray(outputs[0]);
    if (perProcess)
      outputs.forEach((list, p) => list.forEach((t, i) =>
        box.append(renderTensor(t, 'process ' + p + ', output ' + i))));
    else outputs.forEach((t, i) => box.append(renderTensor(t, 'output ' + i)));
    if (!outputs.length) box.append(el('p', { className: 'note' }, 'no outputs'));
  }

  function renderTiming(res, roundTripMs) {
    const t = res.timing || {};
    const rows = [['compile', t.compile_ms], ['execute', t.execute_ms]];
    if (t.queue_ms !== undefined) rows.push(['queue', t.queue_ms]);
    else rows.push(['queue + transfer (round trip − compile − execute)',
      Math.max(0, roundTripMs - (t.compile_ms || 0) - (t.execute_ms || 0))]);
    rows.push(['round trip (browser)', roundTripMs]);
    const table = byId('timing');
    table.replaceChildren(...rows.map(([k, v]) =>
      el('tr', { dataset: { timing: k.split(' ')[0] } }, el('th', {}, k), el('td', {}, fmtMs(v)))));
    table.hidden = false;
  }

  /* ---- run ---- */

  function showError(res) {
    const e = res.json && res.json.error;
    const box = byId('error-box');
    box.hidden = false;
    box.textContent = errorText(res);
    if (e && e.line && (e.kind === 'parse' || e.kind === 'verify'))
      showMarker(e.line, e.column, e.message || e.kind);
  }

  async function run() {
    clearMarker();
    byId('error-box').hidden = true;
    byId('printed').hidden = true;
    byId('outputs').replaceChildren();
    byId('timing').hidden = true;
    let inputs;
    try {
      inputs = collectInputs();
    } catch (e) {
      setText('run-status', e.message, 'result bad');
      return;
    }
    const req = { program: editor.text.value, inputs, print: true };
    if (byId('trace').checked) req.trace = true;
    byId('timeline').hidden = byId('timeline-title').hidden = true;
    const entry = byId('entry').value.trim();
    if (entry) req.entry = entry;
    setText('run-status', 'Running…', 'result');
    const t0 = performance.now();
    let res;
    try {
      res = await call('POST', '/execute', JSON.stringify(req));
    } catch (e) {
      setText('run-status', 'The server does not answer: ' + e, 'result bad');
      return;
    }
    const ms = performance.now() - t0;
    if (!res.ok || !res.json) {
      setText('run-status', 'Failed (HTTP ' + res.status + ')', 'result bad');
      showError(res);
      return;
    }
    setText('run-status', 'Done: module ' + res.json.module +
            (res.json.cached ? ' (cached)' : ' (compiled now)'), 'result good');
    renderTiming(res.json, ms);
    renderOutputs(res.json.outputs || []);
    if (res.json.printed) {
      const p = byId('printed');
      p.textContent = 'printed:\n' + res.json.printed;
      p.hidden = false;
    }
    if (res.json.trace_id) showTrace(res.json.trace_id);
  }

  /* The run's trace as a timeline (GET /v1/traces/{id}). */
  async function showTrace(id) {
    const res = await call('GET', '/v1/traces/' + encodeURIComponent(id));
    const box = byId('timeline');
    setText('timeline-title', 'Trace ' + id);
    const title = byId('timeline-title');
    title.replaceChildren('Trace ', Shlo.el('a', { href: '/console/executions.html#trace=' + id,
                                                  className: 'mono' }, id));
    byId('timeline-title').hidden = box.hidden = false;
    if (!res.ok || !res.json) {
      box.replaceChildren(Shlo.el('p', { className: 'note bad' }, 'Trace: ' + errorText(res)));
      return;
    }
    Shlo.timeline(box, res.json);
  }

  document.addEventListener('DOMContentLoaded', () => {
    setupEditor();
    const select = byId('example');
    EXAMPLES.forEach((ex, i) => select.append(el('option', { value: String(i) }, ex.name)));
    select.addEventListener('change', () => loadExample(Number(select.value)));
    byId('add-input').addEventListener('click', () => addInput(null));
    byId('run').addEventListener('click', run);
    loadExample(0);
  });
})();
