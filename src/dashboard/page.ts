// The live dashboard page: the progress figures, each monitored target's key gauges and verdicts, the hangs
// as they happen, and live charts (latency by round, throughput, gauges), all fed by the server's event
// stream. The charts are drawn by report.html's own chart script; this page's script only routes the
// stream. When the run ends the page replaces itself with the written report.html. Its CSP allows one
// request: its own event stream.
import { chartScripts, chartStyles, cspMeta, esc, type ChartAssets } from '../report/index.js';
import type { DashboardPlan } from './state.js';

const CSS = `
:root{--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--good:#047857;--good-bg:#d1fae5;--warn:#b45309;--warn-bg:#fef3c7;--bad:#b91c1c;--bad-bg:#fee2e2}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:20px 28px 48px}
h1{font-size:24px;margin:0 0 4px;display:flex;align-items:center;gap:12px}
h2{font-size:18px;margin:28px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
.meta{color:var(--muted);margin:0}
.badge{display:inline-block;padding:1px 9px;border-radius:999px;font-size:13px;font-weight:600;background:#e2e8f0;color:#334155}
.badge.good{background:var(--good-bg);color:var(--good)}.badge.warn{background:var(--warn-bg);color:var(--warn)}.badge.bad{background:var(--bad-bg);color:var(--bad)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;margin-top:16px}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:10px 14px}
.card-k{color:var(--muted);font-size:12.5px}.card-v{font-size:21px;font-weight:650;font-variant-numeric:tabular-nums}.card-s{color:var(--muted);font-size:12.5px;min-height:1.2em}
.card.bad{border-left:5px solid var(--bad)}
.targets{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
.target{background:#fff;border:1px solid var(--line);border-radius:10px;padding:10px 14px}
.target h3{margin:0 0 6px;font-size:15px;display:flex;gap:8px;align-items:center}
.target ul{margin:6px 0 0;padding-left:18px}
.target li,.target .labels{overflow-wrap:anywhere}.target .labels{color:var(--muted);font-size:12.5px}
table{border-collapse:collapse;width:100%;font-size:13px;background:#fff;border:1px solid var(--line)}
th,td{padding:5px 10px;text-align:left;border-bottom:1px solid var(--line)}
th{background:#f1f5f9}
.count{font-size:14px;background:var(--bad-bg);color:var(--bad);border-radius:999px;padding:1px 9px}
.empty-note{color:var(--muted);font-style:italic}
#conn.lost{color:var(--bad)}
`;

/** Plain ES2020 (it runs in the page), kept as a string. */
export const DASHBOARD_SCRIPT = String.raw`
(function () {
  'use strict';
  var charts = window.roundloadCharts;
  var root = document.documentElement;
  var updates = 0;
  var lastAt = 0;
  var hangKeys = {};
  function $(id) { return document.getElementById(id); }
  function text(id, value) { var el = $(id); if (el && el.textContent !== value) el.textContent = value; }
  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    return v.toLocaleString('en-US', { maximumFractionDigits: digits || 0, minimumFractionDigits: digits || 0 });
  }
  function ms(v) { return v === null || v === undefined ? '–' : v >= 10000 ? (v / 1000).toFixed(1) + ' s' : v >= 100 ? Math.round(v) + ' ms' : v.toFixed(1) + ' ms'; }
  function dur(s) {
    if (s === null || s === undefined) return '–';
    if (s < 120) return s.toFixed(s < 10 ? 1 : 0) + ' s';
    var m = Math.floor(s / 60);
    return m < 120 ? m + ' min ' + Math.round(s % 60) + ' s' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function badge(el, label, tone) { el.textContent = label; el.className = 'badge ' + tone; }
  var TONE = { pinned: 'bad', pinned_under_load: 'bad', stale: 'warn', insufficient: 'warn', rotating: 'good', idle: '' };

  function hangRow(h) {
    var key = h.agent + '/' + h.conversation + '/' + h.round + '/' + h.run_s;
    if (hangKeys[key]) return false;
    hangKeys[key] = true;
    var body = $('hang-rows');
    var tr = document.createElement('tr');
    [num(h.run_s, 1), String(h.agent), h.conversation, String(h.round), h.phase, h.deadline, h.path, h.connection_nth === null ? '–' : String(h.connection_nth)].forEach(function (v) {
      var td = document.createElement('td');
      td.textContent = v;
      tr.appendChild(td);
    });
    // The trace id as text; a link only to the http(s) URL the server made from tracing.trace_url.
    var tc = document.createElement('td');
    var code = document.createElement('code');
    code.textContent = h.trace_id || '–';
    if (h.trace_link && /^https?:\/\//.test(h.trace_link)) {
      var a = document.createElement('a');
      a.href = h.trace_link;
      a.rel = 'noopener noreferrer';
      a.target = '_blank';
      a.appendChild(code);
      tc.appendChild(a);
    } else tc.appendChild(code);
    tr.appendChild(tc);
    body.insertBefore(tr, body.firstChild);
    while (body.children.length > 50) body.removeChild(body.lastChild);
    $('no-hangs').hidden = true;
    return true;
  }

  function targets(list) {
    var box = $('targets');
    $('no-targets').hidden = list.length > 0;
    list.forEach(function (t) {
      var id = 'target-' + t.target.replace(/[^A-Za-z0-9_-]/g, '_');
      var card = $(id);
      if (!card) {
        card = document.createElement('div');
        card.className = 'target';
        card.id = id;
        card.innerHTML = '<h3><span class="name"></span><span class="badge"></span></h3><div class="labels"></div><div class="key"></div><ul class="verdicts"></ul>';
        card.querySelector('.name').textContent = t.target;
        box.appendChild(card);
      }
      badge(card.querySelector('.badge'), t.ok ? 'scraped ' + (t.age_s === null ? '–' : t.age_s.toFixed(1) + ' s ago') : 'scrape failed', t.ok ? 'good' : 'bad');
      card.querySelector('.labels').textContent = t.common_labels ? 'every series: ' + t.common_labels : '';
      card.querySelector('.key').textContent = t.key.length === 0 ? (t.ok ? 'no key gauges' : (t.last_error || '')) : t.key.map(function (k) { return k[0] + ' ' + num(k[1], Number.isInteger(k[1]) ? 0 : 2); }).join(' · ');
      var ul = card.querySelector('.verdicts');
      ul.textContent = '';
      t.verdicts.slice(0, 8).forEach(function (v) {
        var li = document.createElement('li');
        var b = document.createElement('span');
        badge(b, v.verdict, TONE[v.verdict] || '');
        li.appendChild(document.createTextNode(v.series + ' '));
        li.appendChild(b);
        ul.appendChild(li);
      });
      if (t.verdicts.length > 8) { var more = document.createElement('li'); more.textContent = (t.verdicts.length - 8) + ' more series'; ul.appendChild(more); }
    });
  }

  function render(s) {
    var p = s.progress;
    badge($('status'), s.status, s.status === 'finished' ? 'good' : 'warn');
    text('p-elapsed', dur(s.elapsed_s));
    text('p-remaining', s.remaining_s === null ? '' : dur(s.remaining_s) + ' left');
    text('p-done', num(p.done));
    text('p-planned', p.planned === null ? '' : 'of ' + num(p.planned) + ' planned');
    text('p-rps', num(p.requests_per_s, 2));
    text('p-tps', num(p.output_tokens_per_s, 1));
    text('p-ttft', ms(p.ttft_p50_ms) + ' / ' + ms(p.ttft_p99_ms));
    text('p-errors', num(p.errors));
    text('p-error-classes', Object.keys(p.errors_by_class).map(function (k) { return k + ' ' + p.errors_by_class[k]; }).join(' · '));
    text('p-hangs', num(p.hangs));
    $('card-hangs').classList.toggle('bad', p.hangs > 0);
    $('card-errors').classList.toggle('bad', p.errors > 0);
    text('p-inflight', num(p.in_flight));
    text('p-oldest', p.oldest_in_flight_s === null ? 'none in flight' : (p.streaming > 0 ? p.streaming + ' streaming · ' : '') + 'oldest ' + dur(p.oldest_in_flight_s));
    var a = s.arrivals;
    $('card-arrivals').hidden = a === null;
    if (a !== null) {
      text('p-arrivals', num(a.started));
      text('p-arrivals-sub', num(a.active) + ' active · start lag p50 ' + ms(a.start_lag_p50_ms) + ' p99 ' + ms(a.start_lag_p99_ms) + (a.delayed > 0 ? ' · ' + num(a.delayed) + ' waited for a slot' : ''));
    }
    text('hang-count', num(s.hangs_total));
    s.hangs.forEach(hangRow);
    targets(s.targets);
    s.charts.forEach(function (c) {
      c.container = c.id.indexOf('live-gauges-') === 0 ? '#charts-gauges' : c.id === 'live-throughput' || c.id === 'live-arrivals' ? '#charts-time' : '#charts-latency';
      charts.upsert(c);
    });
    updates += 1;
    lastAt = Date.now();
    root.setAttribute('data-updates', String(updates));
    text('conn', 'live · updated just now');
  }

  var es = new EventSource('/events');
  es.addEventListener('snapshot', function (e) { render(JSON.parse(e.data)); });
  // A hang shows the moment it is announced; the next snapshot brings the rest of the figures.
  es.addEventListener('hang', function (e) {
    if (!hangRow(JSON.parse(e.data))) return;
    var shown = Number(($('hang-count').textContent || '0').replace(/,/g, '')) + 1;
    text('hang-count', num(shown));
    text('p-hangs', num(Math.max(shown, Number(($('p-hangs').textContent || '0').replace(/[^0-9]/g, '')) || 0)));
    $('card-hangs').classList.add('bad');
  });
  es.addEventListener('dropped', function (e) { text('dropped', JSON.parse(e.data).dropped + ' updates dropped (this page fell behind)'); });
  es.addEventListener('end', function (e) {
    var d = JSON.parse(e.data);
    es.close();
    root.setAttribute('data-ended', d.status);
    if (d.report) { text('conn', 'run ' + d.status + ': opening the report…'); location.replace(d.report); }
    else text('conn', 'run ' + d.status + ': no report was written');
  });
  es.onerror = function () { if (!root.hasAttribute('data-ended')) { $('conn').className = 'meta lost'; text('conn', 'connection lost: retrying…'); } };
  es.onopen = function () { $('conn').className = 'meta'; };
  setInterval(function () {
    if (lastAt > 0 && !root.hasAttribute('data-ended')) text('conn', 'live · updated ' + Math.round((Date.now() - lastAt) / 1000) + ' s ago');
  }, 1000);
})();
`;

function card(id: string, label: string, sub: string, hidden = false): string {
  return `<div class="card" id="card-${id}"${hidden ? ' hidden' : ''}><div class="card-k">${esc(label)}</div><div class="card-v" id="p-${id}">–</div><div class="card-s" id="${sub}"></div></div>`;
}

/** The page as served while the run goes on. */
export function dashboardPage(plan: DashboardPlan, assets: ChartAssets): string {
  return `<!doctype html>
<html lang="en" data-live="1">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${cspMeta({ connectSelf: true })}
<title>roundload · ${esc(plan.name)} · live</title>
${chartStyles(assets)}
<style>${CSS}</style>
</head>
<body>
<main>
<header>
<h1>${esc(plan.name)} <span class="badge warn" id="status">starting</span></h1>
<p class="meta">live dashboard · target <code>${esc(plan.target)}</code> · the page becomes the run's report.html when it ends</p>
<p class="meta" id="conn">connecting…</p>
<p class="meta" id="dropped"></p>
</header>
<section class="cards" id="progress">
${card('elapsed', 'elapsed', 'p-remaining')}
${card('done', 'requests done', 'p-planned')}
${card('rps', 'requests/s (last 10 s)', 'p-rps-sub')}
${card('tps', 'output tokens/s (last 10 s)', 'p-tps-sub')}
${card('ttft', 'TTFT p50 / p99 so far', 'p-ttft-sub')}
${card('errors', 'errors', 'p-error-classes')}
${card('hangs', 'hangs', 'p-hangs-sub')}
${card('inflight', 'in flight', 'p-oldest')}
${card('arrivals', 'conversations started', 'p-arrivals-sub', true)}
</section>
<section id="gauges"><h2>Gauges by target</h2><p class="empty-note" id="no-targets">no scrape yet (the monitor scrapes every monitor.interval_ms; off without targets)</p><div class="targets" id="targets"></div></section>
<section id="hangs"><h2>Hangs <span class="count" id="hang-count">0</span></h2><p class="empty-note" id="no-hangs">none so far</p>
<table><thead><tr><th>s</th><th>agent</th><th>conversation</th><th>round</th><th>phase</th><th>deadline</th><th>path</th><th>nth on socket</th><th>trace id</th></tr></thead><tbody id="hang-rows"></tbody></table></section>
<section><h2>Latency by round</h2><div class="charts" id="charts-latency"></div></section>
<section><h2>Throughput and arrivals</h2><div class="charts" id="charts-time"></div></section>
<section><h2>Gauges over time</h2><div class="charts" id="charts-gauges"></div></section>
</main>
${chartScripts({ charts: [] }, assets, DASHBOARD_SCRIPT)}
</body>
</html>
`;
}
