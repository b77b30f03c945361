// ui://crmd/dashboard: get_dashboard, get_contacts_report, get_campaign_report and
// get_automation_report as bar charts (inline SVG drawn here, no library), each with its
// numbers in a table for screen readers. Numbers come only from the tool result.
const { el, words, scalar } = crmd;
const root = document.getElementById('view');
const SVG = 'http://www.w3.org/2000/svg';
const LABEL_KEYS = ['start', 'date', 'day', 'week', 'label', 'name', 'step', 'type', 'kind', 'status', 'position', 'id'];
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// One horizontal bar per [label, value]; data-* carry the numbers drawn.
function barChart(id, title, points) {
  const rowH = 22, labelW = 150, width = 520, barW = width - labelW - 60;
  const max = Math.max(1, ...points.map(([, v]) => v));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${points.length * rowH + 6}`, width: '100%',
    role: 'img', 'aria-label': `${title} (the same numbers are in the table below)`, 'data-chart': id });
  points.forEach(([label, v], i) => {
    const y = i * rowH + 3;
    chart.append(svg('text', { x: labelW - 6, y: y + 14, 'text-anchor': 'end' }, words(label).slice(0, 24)));
    chart.append(svg('rect', { class: 'bar', x: labelW, y: y + 2, height: rowH - 6,
      width: Math.max(v > 0 ? 1 : 0, (v / max) * barW), 'data-label': label, 'data-value': v }));
    chart.append(svg('text', { x: labelW + (v / max) * barW + 4, y: y + 14 }, String(v)));
  });
  chart.append(svg('line', { class: 'axis', x1: labelW, x2: labelW, y1: 0, y2: points.length * rowH + 6 }));
  const table = el('table', { class: 'sr-only', 'data-table': id },
    el('caption', {}, title),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Label'), el('th', { scope: 'col', class: 'num' }, 'Value'))),
    el('tbody', {}, points.map(([label, v]) =>
      el('tr', {}, el('th', { scope: 'row' }, words(label)), el('td', { class: 'num' }, String(v))))));
  return el('section', { class: 'chart' }, el('h2', {}, title), chart, table);
}

// The charts a result holds: every object of two or more numbers, and every series (an
// array of objects with a label) for each of its numeric fields; single numbers become
// figures.
function collect(value, path, out) {
  if (Array.isArray(value)) {
    if (!value.length || typeof value[0] !== 'object' || value[0] === null) return;
    const labelKey = LABEL_KEYS.find((k) => k in value[0]);
    const fields = Object.keys(value[0]).filter((k) => k !== labelKey && k !== 'id' && isNum(value[0][k]));
    for (const f of fields) {
      const points = value.map((x, i) => [labelKey ? scalar(x[labelKey]) : i + 1, isNum(x[f]) ? x[f] : 0]);
      out.charts.push({ id: [...path, f].join('.'), title: [...path.map(words), words(f)].join(' › '), points });
    }
    return;
  }
  if (!value || typeof value !== 'object') return;
  const nums = Object.entries(value).filter(([k, v]) => isNum(v) && k !== 'id' && k !== 'revision');
  // A breakdown (by_status, by_type, ...) is a chart even with one group so far.
  const breakdown = path.length && /^by_/.test(path[path.length - 1]) && nums.length > 0;
  if ((nums.length >= 2 && path.length) || breakdown) {
    out.charts.push({ id: path.join('.'), title: path.map(words).join(' › '), points: nums });
  } else {
    for (const [k, v] of nums) out.figures.push([[...path, k].join('.'), [...path, k].map(words).join(' › '), v]);
  }
  for (const [k, v] of Object.entries(value)) if (v && typeof v === 'object') collect(v, [...path, k], out);
}

function heading(body) {
  const named = body.campaign || body.automation;
  if (named && named.name) return `Report: ${named.name}`;
  if (body.from && body.to) return `Contacts from ${body.from} to ${body.to}`;
  return 'Dashboard';
}

function draw(body) {
  if (!body || body.error) return crmd.showError(root, body);
  const out = { charts: [], figures: [] };
  collect(body, [], out);
  const refresh = el('button', { id: 'refresh', type: 'button', class: 'secondary' }, 'Refresh');
  const status = el('span', { class: 'muted', id: 'refresh-status' });
  refresh.addEventListener('click', async () => {
    const tool = (crmd.host.hostContext && crmd.host.hostContext.toolInfo &&
      crmd.host.hostContext.toolInfo.tool && crmd.host.hostContext.toolInfo.tool.name) || 'get_dashboard';
    status.textContent = 'Asking crmd…';
    try {
      const r = await crmd.callTool(tool, crmd.lastArgs || {});
      if (r.isError) return crmd.showError(root, r.body);
      draw(r.body);
    } catch (e) {
      status.textContent = `Not refreshed: ${e.message || e.code || 'refused'}`;
    }
  });
  crmd.show(root, 
    el('h1', { id: 'title' }, heading(body)),
    body.generated_at ? el('p', { class: 'muted' }, `As of ${body.generated_at}`) : null,
    el('div', { class: 'figures', id: 'figures' }, out.figures.slice(0, 12).map(([id, label, v]) =>
      el('div', { class: 'figure', 'data-figure': id }, el('b', {}, String(v)), el('span', { class: 'muted' }, label)))),
    out.charts.map((c) => barChart(c.id, c.title, c.points)),
    el('p', {}, refresh, ' ', status));
}

crmd.start('crmd-dashboard', {
  input: (args) => { crmd.lastArgs = args; },
  result: draw,
});
