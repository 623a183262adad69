// The script report.html runs in the browser: reads the embedded chart data and draws each chart with
// uPlot into its `data-chart` element, then marks it `data-points="<n>"` (0 and `empty` when it has no
// data) so a browser test can tell a drawn chart from an empty one. Plain ES2020, kept as a string: the
// TypeScript toolchain must not rewrite code that runs in a page.

export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var COLORS = ['#2563eb', '#d97706', '#dc2626', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d', '#9333ea', '#ea580c', '#475569', '#0d9488'];
  var dataEl = document.getElementById('report-data');
  var data = JSON.parse(dataEl ? dataEl.textContent || '{}' : '{}');
  var charts = data.charts || [];
  var plots = [];

  function countPoints(spec) {
    var n = 0;
    (spec.series || []).forEach(function (s) {
      (s.values || []).forEach(function (v) { if (v !== null && isFinite(v)) n += 1; });
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

  function markersPlugin(markers) {
    return {
      hooks: {
        draw: [function (u) {
          if (!markers || markers.length === 0) return;
          var ctx = u.ctx;
          var b = u.bbox;
          ctx.save();
          ctx.strokeStyle = 'rgba(220, 38, 38, 0.8)';
          ctx.lineWidth = Math.max(1, window.devicePixelRatio || 1);
          ctx.setLineDash([5 * (window.devicePixelRatio || 1), 4 * (window.devicePixelRatio || 1)]);
          markers.forEach(function (m) {
            var x = u.valToPos(m.x, 'x', true);
            if (!isFinite(x) || x < b.left - 1 || x > b.left + b.width + 1) return;
            ctx.beginPath();
            ctx.moveTo(x, b.top);
            ctx.lineTo(x, b.top + b.height);
            ctx.stroke();
          });
          ctx.restore();
        }]
      }
    };
  }

  function draw(spec) {
    var el = document.querySelector('[data-chart="' + CSS.escape(spec.id) + '"]');
    if (!el) { console.error('report: no element for chart ' + spec.id); return; }
    var plotEl = el.querySelector('.plot') || el;
    var points = countPoints(spec);
    if (points === 0) {
      el.classList.add('empty');
      el.setAttribute('data-points', '0');
      plotEl.textContent = 'no data';
      return;
    }
    var round = spec.x_kind === 'round';
    var series = [{ label: spec.x_label, value: function (u, v) { return v == null ? '' : round ? 'round ' + v : fmtSeconds(v, 0.1); } }];
    spec.series.forEach(function (s, i) {
      series.push({
        label: s.label,
        scale: s.scale || 'y',
        stroke: COLORS[i % COLORS.length],
        width: 1.6,
        spanGaps: false,
        points: { show: spec.x.length <= 40, size: 5 }
      });
    });
    var axes = [
      { label: spec.x_label, labelSize: 22, values: round ? function (u, vals) { return vals.map(function (v) { return Number.isInteger(v) ? String(v) : ''; }); } : function (u, vals, axisIdx, space, incr) { return vals.map(function (v) { return fmtSeconds(v, incr); }); } },
      { label: spec.y_label, labelSize: 22, scale: 'y', size: 56 }
    ];
    if (spec.y2_label) axes.push({ label: spec.y2_label, labelSize: 22, scale: 'y2', side: 1, grid: { show: false }, size: 56 });
    var scales = { x: { time: false } };
    if (round && spec.x.length === 1) scales.x.range = function (u, min, max) { return [min - 1, max + 1]; };
    var width = Math.max(280, Math.floor(plotEl.clientWidth || el.clientWidth || 600));
    var drawn = false;
    var opts = {
      width: width,
      height: 240,
      series: series,
      axes: axes,
      scales: scales,
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      plugins: [markersPlugin(spec.markers)],
      hooks: {
        draw: [function () {
          if (drawn) return;
          drawn = true;
          el.setAttribute('data-points', String(points));
        }]
      }
    };
    var aligned = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var plot = new uPlot(opts, aligned, plotEl);
    plots.push({ plot: plot, el: plotEl });
  }

  charts.forEach(function (spec) {
    try {
      draw(spec);
    } catch (error) {
      var el = document.querySelector('[data-chart="' + CSS.escape(spec.id) + '"]');
      if (el) { el.setAttribute('data-points', '0'); el.setAttribute('data-error', String(error && error.message || error)); }
      console.error('report: chart ' + spec.id + ' failed: ' + (error && error.message || error));
    }
  });

  var pending = 0;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      plots.forEach(function (p) {
        var w = Math.max(280, Math.floor(p.el.clientWidth || 600));
        p.plot.setSize({ width: w, height: 240 });
      });
    }, 150);
  });
  document.documentElement.setAttribute('data-report-ready', '1');
})();
`;
