// npuprof HTML report: draws the charts from the inlined option JSON and
// makes tables sortable and filterable. No network, no eval: "fn:<name>"
// strings in formatter/renderItem keys name functions defined here.
(function () {
  'use strict';

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  // dur formats a duration in µs like npuprof's text output.
  // Trailing zeros are dropped (axis labels read "30ms", not "30.00ms").
  function dur(us) {
    if (us === null || us === undefined || us === '-' || isNaN(us)) { return '–'; }
    var a = Math.abs(us);
    if (a === 0) { return '0'; }
    if (a < 1000) { return String(parseFloat((+us).toFixed(a < 10 ? 2 : 1))) + 'µs'; }
    if (a < 1e6) { return String(parseFloat((us / 1000).toFixed(2))) + 'ms'; }
    return String(parseFloat((us / 1e6).toFixed(3))) + 's';
  }

  // inUnit is an axis tick in µs as a plain number of the axis's unit
  // (its title names it): four significant digits at most.
  function inUnit(us, scale) {
    if (us === null || us === undefined || isNaN(us)) { return ''; }
    return String(parseFloat((us / scale).toPrecision(4)));
  }

  // zh: the page is Chinese (--lang zh): the tooltips and the table and
  // button texts drawn here follow it.
  var zh = /^zh/i.test(document.documentElement.lang || '');

  function makeFns(p) {
    return {
      dur: function (v) { return dur(typeof v === 'object' && v !== null ? v.value : v); },
      us: function (v) { return inUnit(v, 1); },
      ms: function (v) { return inUnit(v, 1e3); },
      s: function (v) { return inUnit(v, 1e6); },
      ratio: function (v) { return (+v).toFixed(2) + '×'; },
      heatDur: function (params) {
        var v = params.value || [];
        var opt = p.option;
        var x = opt.xAxis[0].data[v[0]], y = opt.yAxis[0].data[v[1]];
        if (zh) { return esc(y) + '，第 ' + esc(x) + ' 层<br><b>' + dur(v[2]) + '</b> 路由 + Cumsum（均值）'; }
        return esc(y) + ', layer ' + esc(x) + '<br><b>' + dur(v[2]) + '</b> routing + Cumsum (mean)';
      },
      heatSkew: function (params) {
        var v = params.value || [];
        var opt = p.option;
        var x = opt.xAxis[0].data[v[0]], y = opt.yAxis[0].data[v[1]];
        return esc(y) + ' · ' + esc(x) + '<br><b>' + dur(v[3]) + '</b> = ' + (zh ? '中位 rank 的 ' + (+v[2]).toFixed(2) + ' 倍' : (+v[2]).toFixed(2) + '× the median rank');
      },
      boxItem: function (params, api) { return renderBox(p, params, api); },
      boxTip: function (a) {
        var v = a.value || [];
        return '<b>' + esc(p.names[v[4]] || '') + '</b><br>' + esc(p.classes[v[3]] || '') +
          ' · ' + dur(v[2] - v[1]) + '<br><span style="color:#64748b">' + (zh ? '开始于 ' : 'at ') + dur(v[1]) + '</span>';
      }
    };
  }

  function renderBox(p, params, api) {
    var lane = api.value(0);
    var s = api.coord([api.value(1), lane]);
    var e = api.coord([api.value(2), lane]);
    var h = api.size([0, 1])[1] * 0.62;
    var cs = params.coordSys;
    var rect = echarts.graphic.clipRectByRect(
      { x: s[0], y: s[1] - h / 2, width: Math.max(e[0] - s[0], 0.8), height: h },
      { x: cs.x, y: cs.y, width: cs.width, height: cs.height });
    if (!rect) { return null; }
    return { type: 'rect', transition: [], shape: rect, style: { fill: p.colors[api.value(3)] || '#94a3b8' } };
  }

  var FN_KEYS = { formatter: 1, valueFormatter: 1, labelFormatter: 1, renderItem: 1 };
  function revive(node, fns) {
    if (Array.isArray(node)) { node.forEach(function (x) { revive(x, fns); }); return; }
    if (!node || typeof node !== 'object') { return; }
    Object.keys(node).forEach(function (k) {
      var v = node[k];
      if (FN_KEYS[k] && typeof v === 'string' && v.indexOf('fn:') === 0) {
        var f = fns[v.slice(3)];
        if (f) { node[k] = f; } else { delete node[k]; }
      } else if (typeof v === 'object') {
        revive(v, fns);
      }
    });
  }

  var charts = [];
  var byId = {};
  var data = document.getElementById('npuprof-charts');
  var payloads = data ? JSON.parse(data.textContent) : [];
  payloads.forEach(function (p) {
    var el = document.getElementById(p.id);
    if (!el || typeof echarts === 'undefined') { return; }
    var fns = makeFns(p);
    revive(p.option, fns);
    var c = echarts.init(el, null, { renderer: 'canvas' });
    c.setOption(p.option);
    charts.push(c);
    byId[p.id] = { chart: c, payload: p };
  });
  window.npuprofCharts = charts;

  document.querySelectorAll('select[data-variants]').forEach(function (sel) {
    sel.addEventListener('change', function () {
      var e = byId[sel.getAttribute('data-variants')];
      if (!e) { return; }
      var v = e.payload.variants[+sel.value];
      if (v) { e.chart.setOption(v); }
    });
  });

  var resizeTimer;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { charts.forEach(function (c) { c.resize(); }); }, 100);
  });

  // Sortable tables: numeric cells sort by data-v.
  function key(td) {
    if (!td) { return ''; }
    var v = td.getAttribute('data-v');
    if (v !== null && v !== '') { return parseFloat(v); }
    return td.textContent.trim().toLowerCase();
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var ths = table.querySelectorAll('thead th');
    ths.forEach(function (th, col) {
      th.setAttribute('tabindex', '0');
      function sort() {
        var desc = th.getAttribute('aria-sort') !== 'descending';
        ths.forEach(function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        var tbody = table.tBodies[0];
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var r;
          if (typeof x === 'number' && typeof y === 'number') { r = x - y; }
          else if (typeof x === 'number') { r = -1; }
          else if (typeof y === 'number') { r = 1; }
          else { r = x < y ? -1 : x > y ? 1 : 0; }
          return desc ? -r : r;
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter') { sort(); } });
    });
  });

  // Filters: free text over the row, and an exact rank on column 0.
  function applyFilter(id) {
    var table = document.getElementById(id);
    if (!table) { return; }
    var input = document.querySelector('input[data-filter="' + id + '"]');
    var sel = document.querySelector('select[data-rank-filter="' + id + '"]');
    var q = input ? input.value.trim().toLowerCase() : '';
    var rank = sel ? sel.value : '';
    var shown = 0, total = 0;
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      total++;
      var ok = (!q || r.textContent.toLowerCase().indexOf(q) >= 0) && (!rank || r.cells[0].textContent.trim() === rank);
      r.style.display = ok ? '' : 'none';
      if (ok) { shown++; }
    });
    var out = document.querySelector('[data-shown="' + id + '"]');
    if (out) { out.textContent = zh ? '显示 ' + shown + ' / ' + total + ' 行' : shown + ' of ' + total + ' rows'; }
  }
  document.querySelectorAll('input[data-filter]').forEach(function (i) {
    var id = i.getAttribute('data-filter');
    i.addEventListener('input', function () { applyFilter(id); });
    applyFilter(id);
  });
  document.querySelectorAll('select[data-rank-filter]').forEach(function (s) {
    s.addEventListener('change', function () { applyFilter(s.getAttribute('data-rank-filter')); });
  });

  // In-page links (a finding's "docs", a rule's findings) open the
  // <details> they point at, so the browser scrolls to its content.
  function openTarget(hash) {
    if (!hash || hash.charAt(0) !== '#') { return; }
    var el = document.getElementById(decodeURIComponent(hash.slice(1)));
    if (el && el.tagName === 'DETAILS') { el.open = true; }
  }
  document.querySelectorAll('a[href^="#"]').forEach(function (a) {
    a.addEventListener('click', function () { openTarget(a.getAttribute('href')); });
  });
  window.addEventListener('hashchange', function () { openTarget(location.hash); });
  openTarget(location.hash);

  // Copy buttons for fixes and diffs. They copy data-copy-text (the JSON
  // document's string, JSON-encoded), not the <pre>'s text: that one is
  // cleaned for display, and HTML turns a CR into a newline, so a diff
  // against a CRLF script would no longer apply.
  document.querySelectorAll('button.copy').forEach(function (b) {
    b.addEventListener('click', function () {
      var pre = document.getElementById(b.getAttribute('data-copy'));
      if (!pre) { return; }
      var text = pre.textContent;
      var exact = b.getAttribute('data-copy-text');
      if (exact) {
        try { text = JSON.parse(exact); } catch (e) { /* keep the displayed text */ }
      }
      var done = function () { b.textContent = zh ? '已复制' : 'Copied'; b.classList.add('done'); setTimeout(function () { b.textContent = zh ? '复制' : 'Copy'; b.classList.remove('done'); }, 1500); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { fallback(text, pre); done(); });
      } else { fallback(text, pre); done(); }
    });
  });
  // fallback copies text through a copy event (exact bytes: a textarea
  // would turn CRLF into LF); when that fails the <pre> stays selected for
  // a manual copy.
  function fallback(text, pre) {
    var set = function (e) { e.clipboardData.setData('text/plain', text); e.preventDefault(); };
    var ok = false;
    document.addEventListener('copy', set);
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.removeEventListener('copy', set);
    if (ok) { return; }
    var r = document.createRange();
    r.selectNodeContents(pre);
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }
}());
