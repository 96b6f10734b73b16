/* SPDX-License-Identifier: Apache-2.0 */
/* Overview: /healthz, /readyz and /metrics polled each second; rates and
 * latency percentiles come from the differences between snapshots.  The
 * history below comes from the server's rings (GET /v1/console/history):
 * the past hour by second or the past day by minute, there before the
 * page was opened; an admin sees the server and every team, any other
 * token its own team. */
'use strict';

(function () {
  const { el, byId, setText, call, fmtBytes, fmtMs, chart, clock } = Shlo;
  const HISTORY_MS = 2000;
  const count = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
  const TEAM_COLORS = ['#2457c5', '#c58a24', '#1b7f3b', '#7b3fb3', '#b3261e', '#2a8f9e'];
  const POLL_MS = 1000, KEEP = 120, WINDOW = 5; /* percentiles over 5 polls */
  const snapshots = [];  /* {t, m} */
  const rps = [], p50 = [], p90 = [], p99 = [], queue = [], running = [];

  /* Prometheus text -> Map of 'name{labels}' -> number. */
  function parseMetrics(text) {
    const m = new Map();
    for (const line of text.split('\n')) {
      if (!line || line[0] === '#') continue;
      const hit = /^([A-Za-z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
      if (hit) m.set(hit[1] + (hit[2] || ''), Number(hit[3]));
    }
    return m;
  }

  function sum(m, name) {
    let total = 0;
    for (const [k, v] of m) if (k === name || k.startsWith(name + '{')) total += v;
    return total;
  }

  /* [[upper bound, cumulative count]] of a histogram, +Inf last. */
  function buckets(m, name) {
    const out = [];
    for (const [k, v] of m) {
      const hit = new RegExp('^' + name + '_bucket\\{le="([^"]+)"\\}$').exec(k);
      if (hit) out.push([hit[1] === '+Inf' ? Infinity : Number(hit[1]), v]);
    }
    return out.sort((a, b) => a[0] - b[0]);
  }

  /* The q-quantile (seconds) of what fell in the histogram between two
   * snapshots, interpolated within its bucket; null when nothing did. */
  function quantile(now, before, q) {
    const total = now.length ? now[now.length - 1][1] - before[now.length - 1][1] : 0;
    if (total <= 0) return null;
    const want = q * total;
    let prevCum = 0, prevBound = 0;
    for (let i = 0; i < now.length; i++) {
      const cum = now[i][1] - before[i][1];
      if (cum >= want) {
        const bound = now[i][0];
        if (!isFinite(bound)) return prevBound;
        const inBucket = cum - prevCum;
        return prevBound + (bound - prevBound) * (inBucket ? (want - prevCum) / inBucket : 1);
      }
      prevCum = cum;
      prevBound = now[i][0];
    }
    return null;
  }

  function push(list, v) { list.push(v); if (list.length > KEEP) list.shift(); }

  async function health() {
    try {
      const h = await call('GET', '/healthz');
      setText('v-health', h.ok ? 'healthy' : 'HTTP ' + h.status, h.ok ? 'big good' : 'big bad');
      const r = await call('GET', '/readyz');
      const state = r.json && r.json.status ? r.json.status : 'HTTP ' + r.status;
      setText('v-ready', 'readiness: ' + state, r.ok ? 'sub good' : 'sub bad');
    } catch (e) {
      setText('v-health', 'unreachable', 'big bad');
      setText('v-ready', String(e), 'sub bad');
    }
  }

  function show(m, prev) {
    const workers = sum(m, 'shlo_workers'), run = sum(m, 'shlo_executions_running');
    setText('v-workers', run + ' / ' + workers);
    setText('v-uptime', 'up ' + Math.round(sum(m, 'shlo_uptime_seconds')) + ' s');
    setText('v-queue', String(sum(m, 'shlo_queue_depth')));
    setText('v-conns', sum(m, 'shlo_http_connections') + ' HTTP connections');
    setText('v-running', String(run));
    const requests = sum(m, 'shlo_http_requests_total');
    setText('v-requests', requests + ' requests in all');
    const bytes = sum(m, 'shlo_cache_bytes'), limit = sum(m, 'shlo_cache_limit_bytes');
    const hits = sum(m, 'shlo_cache_hits_total'), misses = sum(m, 'shlo_cache_misses_total');
    setText('v-cache', fmtBytes(bytes));
    setText('v-hits', 'of ' + fmtBytes(limit) + ', ' + sum(m, 'shlo_cache_modules') +
            ' modules, hit ratio ' + (hits + misses ? (100 * hits / (hits + misses)).toFixed(1) + ' %' : '–'));
    let refused = 0;
    for (const [k, v] of m) if (k.startsWith('shlo_refused_total')) refused += v;
    setText('v-errors', refused + ' refused (limits)');
    push(queue, sum(m, 'shlo_queue_depth'));
    push(running, run);
    if (prev) {
      const dt = (snapshots[snapshots.length - 1].t - snapshots[snapshots.length - 2].t) / 1000;
      const rate = Math.max(0, requests - sum(prev, 'shlo_http_requests_total')) / dt;
      push(rps, rate);
      setText('v-rps', rate.toFixed(1));
      const old = snapshots[Math.max(0, snapshots.length - 1 - WINDOW)].m;
      const now = buckets(m, 'shlo_execution_seconds');
      const was = buckets(old, 'shlo_execution_seconds');
      const qs = [0.5, 0.9, 0.99].map((q) => (now.length === was.length ? quantile(now, was, q) : null));
      push(p50, qs[0] === null ? null : qs[0] * 1000);
      push(p90, qs[1] === null ? null : qs[1] * 1000);
      push(p99, qs[2] === null ? null : qs[2] * 1000);
      setText('v-p50', qs[0] === null ? 'idle' : 'p50 ' + fmtMs(qs[0] * 1000));
      setText('v-pct', qs[0] === null ? 'no executions in the last ' + WINDOW + ' s'
        : 'p90 ' + fmtMs(qs[1] * 1000) + ', p99 ' + fmtMs(qs[2] * 1000) + ' (last ' + WINDOW + ' s)');
    }
    chart(byId('chart-rps'), [{ values: rps, color: '#2457c5', label: 'requests/s' }],
          (v) => v.toFixed(1) + '/s', { points: KEEP });
    chart(byId('chart-latency'), [{ values: p50, color: '#1b7f3b', label: 'p50' },
      { values: p90, color: '#c58a24', label: 'p90' }, { values: p99, color: '#b3261e', label: 'p99' }],
          fmtMs, { points: KEEP });
    chart(byId('chart-queue'), [{ values: queue, color: '#b3261e', label: 'queued' },
      { values: running, color: '#2457c5', label: 'running' }], count, { points: KEEP });
  }

  async function poll() {
    await health();
    try {
      const res = await call('GET', '/metrics');
      if (!res.ok) {
        setText('overview-note', res.status === 403
          ? 'This token may not read the server\'s metrics; the history below is your team\'s.'
          : 'Metrics: ' + Shlo.errorText(res), 'note bad');
        if (res.status === 403) { /* the server-wide figures are not this token's */
          byId('live-charts').hidden = true;
          for (const card of document.querySelectorAll('#cards .card'))
            if (!card.querySelector('#v-health')) card.hidden = true;
        }
      } else {
        setText('overview-note', 'Live: polled every second from /metrics.', 'note');
        const m = parseMetrics(res.text);
        const prev = snapshots.length ? snapshots[snapshots.length - 1].m : null;
        snapshots.push({ t: performance.now(), m });
        if (snapshots.length > WINDOW + 1) snapshots.shift();
        show(m, prev);
      }
    } catch (e) {
      setText('overview-note', 'The server does not answer: ' + e, 'note bad');
    }
    setTimeout(poll, POLL_MS);
  }

  /* ---- history ---- */

  const perSecond = (list, step) => list.map((v) => (v === null ? null : v / step));
  const sumOf = (list) => list.reduce((a, v) => a + (v || 0), 0);

  function cell(text, cls) { return el('td', cls ? { className: cls } : {}, text); }

  function rate(errors, requests) {
    return requests ? (100 * errors / requests).toFixed(1) + ' %' : '–';
  }

  function showTeams(h, step, opts) {
    const teams = h.teams || [];
    const admin = h.admin;
    setText('hist-team-caption', admin ? 'Requests per second by team'
      : 'Team ' + h.team + ': requests and errors per second');
    const series = admin
      ? teams.map((t, i) => ({ values: perSecond(t.requests, step),
                               color: TEAM_COLORS[i % TEAM_COLORS.length], label: t.team }))
      : teams.flatMap((t) => [
          { values: perSecond(t.requests, step), color: '#2457c5', label: 'requests/s' },
          { values: perSecond(t.errors, step), color: '#b3261e', label: 'errors/s' }]);
    chart(byId('hist-team'), series, (v) => v.toFixed(2) + '/s', opts);
    setText('teams-title', admin ? 'Teams (the window shown)' : 'Your team (the window shown)');
    byId('teams-body').replaceChildren(...teams.map((t) => {
      const req = sumOf(t.requests), err = sumOf(t.errors);
      const means = t.exec_mean_ms.filter((v) => v !== null);
      const mean = means.length ? means.reduce((a, v) => a + v, 0) / means.length : null;
      return el('tr', { dataset: { team: t.team } }, cell(t.team, 'mono'), cell(String(req)),
                cell(String(err)), cell(rate(err, req)), cell(fmtMs(mean)));
    }));
    if (!teams.length)
      byId('teams-body').append(el('tr', {}, el('td', { colSpan: 5, className: 'note' }, 'No requests yet.')));
  }

  function showServer(h, step, opts) {
    const s = h.series;
    chart(byId('hist-requests'), [
      { values: perSecond(s.requests, step), color: '#2457c5', label: 'requests/s' },
      { values: perSecond(s.errors, step), color: '#b3261e', label: 'errors/s' }],
          (v) => v.toFixed(2) + '/s', opts);
    chart(byId('hist-latency'), [
      { values: s.p50_ms, color: '#1b7f3b', label: 'p50' },
      { values: s.p99_ms, color: '#b3261e', label: 'p99' }], fmtMs, opts);
    chart(byId('hist-queue'), [
      { values: s.queue, color: '#b3261e', label: 'queued' },
      { values: s.running, color: '#2457c5', label: 'running' }], count, opts);
    byId('modules-stats-body').replaceChildren(...(h.modules || []).map((m) =>
      el('tr', { dataset: { module: m.module } }, cell(m.module, 'mono'), cell(String(m.requests)),
         cell(String(m.errors)), cell(rate(m.errors, m.requests)), cell(String(m.executions)),
         cell(fmtMs(m.p50_ms)), cell(fmtMs(m.p99_ms)))));
  }

  function showErrors(h) {
    const rows = (h.errors || []).map((e) =>
      el('tr', {}, cell(clock(e.time_ms, false), 'nowrap'), cell(e.request_id, 'mono'),
         cell(e.team || '–'), cell(e.route, 'mono'), cell(e.module ? e.module.slice(0, 19) : '–', 'mono'),
         cell(String(e.status)), cell(e.kind || '–')));
    byId('errors-body').replaceChildren(...rows);
    if (!rows.length)
      byId('errors-body').append(el('tr', {}, el('td', { colSpan: 7, className: 'note' }, 'No errors in memory.')));
  }

  async function pollHistory() {
    const [res, n] = byId('history-window').value.split(':');
    try {
      const r = await call('GET', '/v1/console/history?res=' + res + '&n=' + n);
      if (!r.ok || !r.json) {
        setText('history-note', 'History: ' + Shlo.errorText(r), 'note bad');
      } else {
        const h = r.json, step = h.resolution_s;
        const opts = { step_s: step, end_ms: h.end_ms, points: Number(n) };
        byId('history').className = 'panel' + (h.admin ? '' : ' team-view');
        setText('history-note', (h.admin ? 'The server and every team' : 'Team ' + h.team) +
                ', from the server\'s memory (' + (step === 1 ? 'per second' : 'per minute') + ').', 'note');
        if (h.admin && h.series) showServer(h, step, opts);
        showTeams(h, step, opts);
        showErrors(h);
      }
    } catch (e) {
      setText('history-note', 'The server does not answer: ' + e, 'note bad');
    }
    setTimeout(pollHistory, HISTORY_MS);
  }

  document.addEventListener('DOMContentLoaded', poll);
  document.addEventListener('DOMContentLoaded', pollHistory);
})();
