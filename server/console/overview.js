/* SPDX-License-Identifier: Apache-2.0 */
/* Overview: /healthz, /readyz and /metrics polled each second; rates and
 * latency percentiles come from the differences between snapshots. */
'use strict';

(function () {
  const { byId, setText, call, fmtBytes, fmtMs, chart } = Shlo;
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
    chart(byId('chart-rps'), [{ values: rps, color: '#2457c5' }], (v) => v.toFixed(1) + '/s');
    chart(byId('chart-latency'), [{ values: p50, color: '#1b7f3b' },
      { values: p90, color: '#c58a24' }, { values: p99, color: '#b3261e' }], fmtMs);
    chart(byId('chart-queue'), [{ values: queue, color: '#b3261e' },
      { values: running, color: '#2457c5' }], (v) => String(Math.round(v)));
  }

  async function poll() {
    await health();
    try {
      const res = await call('GET', '/metrics');
      if (!res.ok) {
        setText('overview-note', res.status === 403
          ? 'This token may not read the server\'s metrics.'
          : 'Metrics: ' + Shlo.errorText(res), 'note bad');
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

  document.addEventListener('DOMContentLoaded', poll);
})();
