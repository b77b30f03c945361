// ui://crmd/contact: get_contact's contact with its lists, tags and, when the result has
// it (include ["history"]), its timeline. "Show the timeline" asks crmd for it through the
// host, under the host's token: without contacts:read the host's call is refused.
const { el, words, scalar } = crmd;
const root = document.getElementById('view');

function fields(c) {
  const rows = [['Email', c.email], ['Status', c.status], ['Type', c.type], ['Phone', c.phone],
    ['Source', c.source], ['Created', c.created_at], ['Updated', c.updated_at], ['Revision', c.revision]];
  for (const [k, v] of Object.entries(c.custom_fields || {})) rows.push([words(k), scalar(v)]);
  return el('table', { id: 'fields' }, el('tbody', {}, rows.filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, String(v))))));
}

const badges = (id, items) => el('p', { id },
  items.length ? items.map((x) => el('span', { class: 'badge' }, x.name)) : el('span', { class: 'muted' }, 'none'));

function timeline(history) {
  const items = (history && history.items) || [];
  if (!items.length) return el('p', { class: 'muted', id: 'timeline' }, 'Nothing on the timeline yet.');
  return el('table', { id: 'timeline' }, el('tbody', {}, items.map((x) => el('tr', {},
    el('td', {}, x.at), el('td', {}, words(x.kind)),
    el('td', {}, Object.entries(x).filter(([k]) => k !== 'at' && k !== 'kind')
      .map(([k, v]) => `${words(k)}: ${scalar(v)}`).join(', '))))));
}

function draw(body) {
  if (!body || body.error) return crmd.showError(root, body);
  const c = body.contact;
  const name = [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email;
  const section = el('section', { id: 'history' });
  if (body.history) {
    section.append(el('h2', {}, 'Timeline'), timeline(body.history));
  } else {
    const button = el('button', { type: 'button', class: 'secondary', id: 'load-history' }, 'Show the timeline');
    const status = el('span', { class: 'muted', id: 'history-status' });
    button.addEventListener('click', async () => {
      status.textContent = 'Asking crmd…';
      try {
        const r = await crmd.callTool('get_contact', { id: c.id, include: ['history'] });
        if (r.isError) { status.textContent = `Not shown: ${r.body.error.message}`; return; }
        draw(r.body);
      } catch (e) {
        status.textContent = `Not shown: ${e.message || 'refused'}`;
      }
    });
    section.append(el('p', {}, button, ' ', status));
  }
  crmd.show(root, 
    el('h1', { id: 'name' }, name),
    body.suppression ? el('p', { class: 'error' },
      `Suppressed (${words(body.suppression.reason)}): crmd sends this address nothing.`) : null,
    fields(c),
    el('h2', {}, 'Lists'), badges('lists', c.lists || []),
    el('h2', {}, 'Tags'), badges('tags', c.tags || []),
    section);
}

crmd.start('crmd-contact', { result: draw });
