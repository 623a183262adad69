// The chart script of report.html, compare.html and the live dashboard: draws each line chart with uPlot
// into its `data-chart` element, and each forest plot (deltas with their intervals) likewise, then marks it
// `data-points="<n>"` (0 and `empty` when it has no data) so a browser test can tell a drawn chart from
// an empty one. Legends show the last value until a point is hovered. It draws the page's embedded data on
// load and exposes `window.roundloadCharts.upsert(spec)` for a page that receives its data live.
// Plain ES2020, kept as a string: the TypeScript toolchain must not rewrite code that runs in a page.

export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var COLORS = ['#2563eb', '#d97706', '#dc2626', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9333ea', '#ea580c', '#475569', '#0d9488'];
  var VERDICT_COLORS = { better: '#047857', worse: '#b91c1c', equivalent: '#475569', inconclusive: '#b45309', undecided: '#b45309', 'insufficient data': '#b45309' };
  var HEIGHT = 240;
  var plots = {};

  function dpr() { return window.devicePixelRatio || 1; }

  function finite(v) { return v !== null && v !== undefined && isFinite(v); }

  function countPoints(spec) {
    var n = 0;
    (spec.series || []).forEach(function (s) {
      (s.values || []).forEach(function (v) { if (finite(v)) n += 1; });
    });
    return (spec.x || []).length === 0 ? 0 : n;
  }

  function fmtSeconds(v, step) {
    if (v == null) return '';
    if (step !== undefined && step < 1) {
      var d = 1;
      while (d < 3 && Math.abs(Math.round(step * Math.pow(10, d)) - step * Math.pow(10, d)) > 1e-6) d += 1;
      return v.toFixed(d) + 's';
    }
    var s = Math.round(v);
    if (Math.abs(s) < 120) return s + 's';
    var m = Math.floor(s / 60);
    if (m < 120) return m + 'm' + (s % 60 ? String(s % 60).padStart(2, '0') + 's' : '');
    return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0');
  }

  /** A legend value: 3 significant figures or whole numbers, '–' for no value. */
  function fmtValue(v) {
    if (!finite(v)) return '–';
    var a = Math.abs(v);
    var digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
    return v.toLocaleString('en-US', { maximumFractionDigits: digits });
  }

  function lastIndex(values) {
    for (var i = values.length - 1; i >= 0; i -= 1) if (finite(values[i])) return i;
    return -1;
  }

  function colorOf(s, i) { return s.color || COLORS[i % COLORS.length]; }

  /** The element a chart goes in: found by id, or (live pages) made in the container named by the spec. */
  function chartElement(spec) {
    var el = document.querySelector('[data-chart="' + CSS.escape(spec.id) + '"]');
    if (el || !spec.container) return el;
    var parent = document.querySelector(spec.container);
    if (!parent) return null;
    el = document.createElement('figure');
    el.className = 'chart';
    el.setAttribute('data-chart', spec.id);
    var cap = document.createElement('figcaption');
    var plot = document.createElement('div');
    plot.className = 'plot';
    var note = document.createElement('p');
    note.className = 'chart-note';
    el.appendChild(cap);
    el.appendChild(plot);
    el.appendChild(note);
    parent.appendChild(el);
    return el;
  }

  function setCaption(el, spec) {
    var cap = el.querySelector('figcaption');
    if (cap && spec.title !== undefined && cap.textContent !== spec.title) cap.textContent = spec.title;
    var note = el.querySelector('.chart-note');
    if (note && spec.container) note.textContent = spec.note || '';
  }

  function markEmpty(el, plotEl) {
    el.classList.add('empty');
    el.setAttribute('data-points', '0');
    plotEl.textContent = 'no data';
  }

  /** Hang markers (red dashed lines) and the partial last window (a shaded band, the segment to it dashed). */
  function overlayPlugin(spec) {
    return {
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          var b = u.bbox;
          var r = dpr();
          var p = spec.partial;
          if (p) {
            var x0 = Math.max(b.left, u.valToPos(p.from_x, 'x', true));
            var x1 = Math.min(b.left + b.width, u.valToPos(p.to_x, 'x', true));
            ctx.save();
            if (x1 > x0) {
              ctx.fillStyle = 'rgba(100, 116, 139, 0.10)';
              ctx.fillRect(x0, b.top, x1 - x0, b.height);
            }
            ctx.fillStyle = 'rgba(71, 85, 105, 0.9)';
            ctx.font = (11 * r) + 'px system-ui, sans-serif';
            // At the band's top left, or right-aligned to the plot when it would run past it.
            var label = 'partial: ' + p.covered_s + ' s of ' + p.window_s + ' s';
            var fits = x0 + 4 * r + ctx.measureText(label).width <= b.left + b.width;
            ctx.textAlign = fits ? 'left' : 'right';
            ctx.fillText(label, fits ? x0 + 4 * r : b.left + b.width - 4 * r, b.top + 12 * r);
            var n = spec.x.length;
            ctx.setLineDash([4 * r, 3 * r]);
            spec.series.forEach(function (s, i) {
              var us = u.series[i + 1];
              if (!us.show || s.style === 'points') return;
              var v1 = s.values[n - 1];
              if (!finite(v1)) return;
              ctx.strokeStyle = colorOf(s, i);
              ctx.lineWidth = 1.6 * r;
              var sc = s.scale || 'y';
              var px = u.valToPos(spec.x[n - 1], 'x', true);
              var py = u.valToPos(v1, sc, true);
              var prev = n - 2;
              while (prev >= 0 && !finite(s.values[prev])) prev -= 1;
              if (prev >= 0) {
                ctx.beginPath();
                ctx.moveTo(u.valToPos(spec.x[prev], 'x', true), u.valToPos(s.values[prev], sc, true));
                ctx.lineTo(px, py);
                ctx.stroke();
              }
              ctx.beginPath();
              ctx.setLineDash([]);
              ctx.fillStyle = '#fff';
              ctx.arc(px, py, 3.5 * r, 0, 2 * Math.PI);
              ctx.fill();
              ctx.stroke();
              ctx.setLineDash([4 * r, 3 * r]);
            });
            ctx.restore();
          }
          var markers = spec.markers || [];
          if (markers.length === 0) return;
          ctx.save();
          ctx.lineWidth = Math.max(1, r);
          ctx.font = (11 * r) + 'px system-ui, sans-serif';
          var labelled = 0;
          markers.forEach(function (m) {
            var x = u.valToPos(m.x, 'x', true);
            if (!isFinite(x) || x < b.left - 1 || x > b.left + b.width + 1) return;
            ctx.strokeStyle = m.color || 'rgba(220, 38, 38, 0.8)';
            ctx.setLineDash([5 * r, 4 * r]);
            ctx.beginPath();
            ctx.moveTo(x, b.top);
            ctx.lineTo(x, b.top + b.height);
            ctx.stroke();
            // A marker with its own colour (the knee) says what it is, beside its line, inside the plot.
            if (!m.color) return;
            ctx.fillStyle = m.color;
            var w = ctx.measureText(m.label).width;
            var right = x + 4 * r + w <= b.left + b.width;
            ctx.textAlign = right ? 'left' : 'right';
            // One line lower for each labelled marker, so two near each other do not overwrite.
            labelled += 1;
            ctx.fillText(m.label, right ? x + 4 * r : x - 4 * r, b.top + 13 * r * labelled);
          });
          ctx.restore();
        }]
      }
    };
  }

  /** The line up to the point before the partial window: the overlay draws the rest dashed. */
  function pathsBeforePartial(spec) {
    var linear = uPlot.paths.linear();
    return function (u, sidx, i0, i1) {
      var stop = Math.min(i1, spec.x.length - 2);
      return linear(u, sidx, i0, stop < i0 ? i0 : stop);
    };
  }

  function noPath() { return null; }

  function buildLine(spec, el, plotEl, width) {
    var round = spec.x_kind === 'round';
    // A load level (conversations/s, agents): plain numbers on the axis, named in the legend.
    var level = spec.x_kind === 'level';
    var n = spec.x.length;
    // Read from the spec at each use: a live page replaces its data in place.
    var partialIdx = function () { return spec.partial ? spec.x.length - 1 : -1; };
    var tag = function (idx) { return idx === partialIdx() ? ' (partial)' : ''; };
    var series = [{
      label: spec.x_label,
      value: function (u, v, sidx, idx) { return idx == null ? 'last' : v == null ? '' : round || level ? spec.x_label + ' ' + v : fmtSeconds(v, 0.1); }
    }];
    var bridged = false;
    spec.series.forEach(function (s, i) {
      var color = colorOf(s, i);
      var pointsOnly = s.style === 'points';
      if (s.gaps === 'bridge') bridged = true;
      var opt = {
        label: s.label,
        scale: s.scale || 'y',
        stroke: color,
        width: pointsOnly ? 1 : 1.6,
        spanGaps: s.gaps === 'bridge',
        points: pointsOnly ? { show: true, size: 7, width: 1.5, stroke: color, fill: color } : { show: function () { return s.dots === true || spec.x.length <= 40; }, size: s.dots === true ? 4 : 5 },
        // No hover: the series' last value; hovering: the value at the cursor.
        value: function (u, v, sidx, idx) {
          if (idx == null) { var values = spec.series[sidx - 1].values; var li = lastIndex(values); return li < 0 ? '–' : fmtValue(values[li]) + tag(li); }
          return finite(v) ? fmtValue(v) + tag(idx) : '–';
        }
      };
      if (pointsOnly) opt.paths = noPath;
      else if (spec.partial) opt.paths = pathsBeforePartial(spec);
      series.push(opt);
    });
    var axes = [
      { label: spec.x_label, labelSize: 22, values: round ? function (u, vals) { return vals.map(function (v) { return Number.isInteger(v) ? String(v) : ''; }); } : level ? function (u, vals) { return vals.map(function (v) { return fmtValue(v); }); } : function (u, vals, axisIdx, space, incr) { return vals.map(function (v) { return fmtSeconds(v, incr); }); } },
      { label: spec.y_label, labelSize: 22, scale: 'y', size: 56 }
    ];
    if (spec.y2_label) axes.push({ label: spec.y2_label, labelSize: 22, scale: 'y2', side: 1, grid: { show: false }, size: 56 });
    // uPlot's own y range, but a series at zero (a stall's tokens/s, an empty queue) would lie on the plot's bottom
    // edge, half clipped under the axis: zero then sits 3% of the height above it (its tick stays the lowest).
    var yRange = function (u, min, max) {
      if (min == null) return [null, null];
      var r = uPlot.rangeNum(min, max, 0.1, true);
      if (r[0] === 0 && min === 0) r[0] = -0.03 * r[1];
      return r;
    };
    // A log scale (latencies from ms to s): uPlot's own range, whole decades.
    var scales = { x: { time: false }, y: spec.y_log ? { distr: 3, log: 10 } : { range: yRange } };
    if (spec.y2_label) scales.y2 = { range: yRange };
    if (n === 1) scales.x.range = function (u, min, max) { return round ? [min - 1, max + 1] : [Math.max(0, min - 1), max + 1]; };
    // Levels: from 0 (or just below the lowest) to a little past the highest, so the end points are not on the edges.
    else if (level) scales.x.range = function (u, min, max) { var pad = (max - min) * 0.05; return [Math.max(0, min - pad), max + pad]; };
    var opts = {
      width: width,
      height: spec.wide ? 320 : HEIGHT,
      series: series,
      axes: axes,
      scales: scales,
      legend: { live: true },
      // A series with bridged gaps shows its nearest value, not '–', where only another series has a point.
      cursor: { drag: { x: true, y: false }, hover: { skip: bridged ? [null, undefined] : [undefined] } },
      plugins: [overlayPlugin(spec)],
      hooks: { draw: [function () { el.setAttribute('data-points', String(countPoints(spec))); }] }
    };
    var aligned = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    return new uPlot(opts, aligned, plotEl);
  }

  /** Rows top to bottom; each: the interval as a bar with whiskers, the delta as a square, the figures as text. */
  function buildForest(spec, el, plotEl, width) {
    var rows = spec.rows || [];
    var drawn = rows.filter(function (r) { return finite(r.delta); });
    var lo = 0, hi = 0;
    // The axis: given (fit to the decided rows), or spanning every row.
    if (spec.x_range) { lo = spec.x_range[0]; hi = spec.x_range[1]; }
    else drawn.forEach(function (r) {
      [r.delta, r.low, r.high].forEach(function (v) { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    });
    var pad = Math.max(1, (hi - lo) * 0.08);
    // Past these an interval is drawn as an arrow to the edge, its end written beside it.
    var edgeLo = lo - pad * 0.75, edgeHi = hi + pad * 0.75;
    var n = rows.length;
    var yOf = function (i) { return n - 1 - i; };
    var unit = spec.unit || '';
    var signed = function (v) { return finite(v) ? (v >= 0 ? '+' : '−') + Math.abs(v).toFixed(unit === ' pt' ? 2 : 1) + unit : '–'; };
    // The figures as text, right of the plot: delta, interval, verdict (readable without hovering).
    var figures = rows.map(function (r) {
      if (!finite(r.delta)) return 'no delta · ' + r.verdict;
      return signed(r.delta) + (finite(r.low) && finite(r.high) ? '  [' + signed(r.low) + ' … ' + signed(r.high) + ']' : '  (no interval)') + '  ' + r.verdict;
    });
    var rowSplits = function () { return rows.map(function (r, i) { return yOf(i); }); };
    var rowText = function (list) { return function (u, vals) { return vals.map(function (v) { var t = list[n - 1 - v]; return t === undefined ? '' : t; }); }; };
    var measure = document.createElement('canvas').getContext('2d');
    measure.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    var textWidth = function (list) { return list.reduce(function (m, t) { return Math.max(m, measure.measureText(t).width); }, 0); };
    var opts = {
      width: width,
      height: 70 + Math.max(2, n) * (spec.x_range ? 36 : 28),
      legend: { show: false },
      cursor: { show: false },
      series: [{}, { label: 'delta', stroke: 'transparent', paths: noPath, points: { show: false } }],
      scales: { x: { time: false, range: [lo - pad, hi + pad] }, y: { range: [-0.5, n - 0.5] } },
      axes: [
        { label: spec.x_label, labelSize: 22, values: function (u, vals) { return vals.map(function (v) { return (v > 0 ? '+' : '') + v + unit; }); } },
        { scale: 'y', size: Math.ceil(textWidth(rows.map(function (r) { return r.label; }))) + 22, gap: 6, splits: rowSplits, values: rowText(rows.map(function (r) { return r.label; })), grid: { show: false } },
        { scale: 'y', side: 1, size: Math.min(Math.round(width * 0.5), Math.ceil(textWidth(figures)) + 24), gap: 8, splits: rowSplits, values: rowText(figures), grid: { show: false }, ticks: { show: false } }
      ],
      hooks: {
        draw: [function (u) {
          var ctx = u.ctx;
          var b = u.bbox;
          var r = dpr();
          ctx.save();
          var zx = u.valToPos(0, 'x', true);
          ctx.strokeStyle = '#94a3b8';
          ctx.lineWidth = r;
          ctx.setLineDash([4 * r, 3 * r]);
          ctx.beginPath();
          ctx.moveTo(zx, b.top);
          ctx.lineTo(zx, b.top + b.height);
          ctx.stroke();
          ctx.setLineDash([]);
          rows.forEach(function (row, i) {
            var y = u.valToPos(yOf(i), 'y', true);
            var color = VERDICT_COLORS[row.verdict] || '#475569';
            ctx.strokeStyle = color;
            ctx.fillStyle = color;
            if (!finite(row.delta)) return;
            if (finite(row.low) && finite(row.high)) {
              var cutLo = row.low < edgeLo, cutHi = row.high > edgeHi;
              var x0 = u.valToPos(cutLo ? edgeLo : row.low, 'x', true);
              var x1 = u.valToPos(cutHi ? edgeHi : row.high, 'x', true);
              ctx.lineWidth = 2.5 * r;
              ctx.beginPath();
              ctx.moveTo(x0, y); ctx.lineTo(x1, y);
              // A whisker at an end inside the axis, an arrowhead at one cut by it.
              if (cutLo) { ctx.moveTo(x0 + 7 * r, y - 5 * r); ctx.lineTo(x0, y); ctx.lineTo(x0 + 7 * r, y + 5 * r); }
              else { ctx.moveTo(x0, y - 6 * r); ctx.lineTo(x0, y + 6 * r); }
              if (cutHi) { ctx.moveTo(x1 - 7 * r, y - 5 * r); ctx.lineTo(x1, y); ctx.lineTo(x1 - 7 * r, y + 5 * r); }
              else { ctx.moveTo(x1, y - 6 * r); ctx.lineTo(x1, y + 6 * r); }
              ctx.stroke();
              ctx.font = (11 * r) + 'px system-ui, sans-serif';
              ctx.textBaseline = 'bottom';
              if (cutLo) { ctx.textAlign = 'left'; ctx.fillText(signed(row.low), x0 + 2 * r, y - 6 * r); }
              if (cutHi) { ctx.textAlign = 'right'; ctx.fillText(signed(row.high), x1 - 2 * r, y - 6 * r); }
              var inside = row.delta >= edgeLo && row.delta <= edgeHi;
              var dx = u.valToPos(Math.min(edgeHi, Math.max(edgeLo, row.delta)), 'x', true);
              // A delta past the axis: a hollow square at the edge, its value written (the bar says where it went).
              if (inside) ctx.fillRect(dx - 5 * r, y - 5 * r, 10 * r, 10 * r);
              else {
                ctx.lineWidth = 1.5 * r;
                ctx.strokeRect(dx - 5 * r, y - 5 * r, 10 * r, 10 * r);
                ctx.textAlign = row.delta < edgeLo ? 'left' : 'right';
                ctx.textBaseline = 'top';
                ctx.fillText('Δ ' + signed(row.delta), row.delta < edgeLo ? x0 + 2 * r : x1 - 2 * r, y + 6 * r);
              }
            } else {
              // No interval: a hollow square, so it does not read as a precise estimate (at the edge when past it).
              ctx.lineWidth = 1.5 * r;
              ctx.strokeRect(u.valToPos(Math.min(edgeHi, Math.max(edgeLo, row.delta)), 'x', true) - 5 * r, y - 5 * r, 10 * r, 10 * r);
            }
          });
          ctx.restore();
          el.setAttribute('data-points', String(drawn.length));
        }]
      }
    };
    return new uPlot(opts, [[lo - pad, hi + pad * 3], [null, null]], plotEl);
  }

  function draw(spec) {
    var el = chartElement(spec);
    if (!el) { console.error('report: no element for chart ' + spec.id); return; }
    setCaption(el, spec);
    var plotEl = el.querySelector('.plot') || el;
    var forest = spec.rows !== undefined;
    var points = forest ? spec.rows.filter(function (r) { return finite(r.delta); }).length : countPoints(spec);
    var old = plots[spec.id];
    if (old) { old.plot.destroy(); delete plots[spec.id]; }
    if (points === 0) { markEmpty(el, plotEl); return; }
    if (el.classList.contains('empty')) { el.classList.remove('empty'); plotEl.textContent = ''; }
    var width = Math.max(280, Math.floor(plotEl.clientWidth || el.clientWidth || 600));
    var plot = forest ? buildForest(spec, el, plotEl, width) : buildLine(spec, el, plotEl, width);
    plots[spec.id] = { plot: plot, el: plotEl, spec: spec, shape: shapeOf(spec) };
  }

  function shapeOf(spec) {
    if (spec.rows !== undefined) return 'forest';
    return [spec.x_kind, spec.y2_label, spec.y_log ? 1 : 0, spec.partial ? 1 : 0].concat(spec.series.map(function (s) { return s.label + '|' + (s.scale || 'y') + '|' + (s.style || '') + '|' + (s.gaps || ''); })).join('\n');
  }

  /** Draws a chart, or gives an existing one of the same shape its new data (a live page). */
  function upsert(spec) {
    var p = plots[spec.id];
    if (p && p.shape === shapeOf(spec) && spec.rows === undefined && countPoints(spec) > 0) {
      var el = chartElement(spec);
      if (el) setCaption(el, spec);
      // The overlay and the legend read the spec: keep it current before the redraw.
      Object.assign(p.spec, spec);
      p.plot.setData([spec.x].concat(spec.series.map(function (s) { return s.values; })));
      return;
    }
    safeDraw(spec);
  }

  function safeDraw(spec) {
    try {
      draw(spec);
    } catch (error) {
      var el = document.querySelector('[data-chart="' + CSS.escape(spec.id) + '"]');
      if (el) { el.setAttribute('data-points', '0'); el.setAttribute('data-error', String(error && error.message || error)); }
      console.error('report: chart ' + spec.id + ' failed: ' + (error && error.message || error));
    }
  }

  window.roundloadCharts = { upsert: upsert };

  var dataEl = document.getElementById('report-data');
  var data = JSON.parse(dataEl ? dataEl.textContent || '{}' : '{}');
  (data.charts || []).forEach(safeDraw);
  (data.forests || []).forEach(safeDraw);

  var pending = 0;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      Object.keys(plots).forEach(function (id) {
        var p = plots[id];
        var w = Math.max(280, Math.floor(p.el.clientWidth || 600));
        p.plot.setSize({ width: w, height: p.plot.height });
      });
    }, 150);
  });
  document.documentElement.setAttribute('data-report-ready', '1');
})();
`;
