// ui://crmd/confirm: the preview of a confirmable action (deletions, activations). It
// shows what would happen and, when the person's approval is required, opens crmd's own
// approval page through the host. It never approves or confirms anything itself.
const { el, words, scalar } = crmd;
const root = document.getElementById('view');
const TITLES = {
  delete_contacts: 'Permanently delete contacts', delete_list: 'Permanently delete a list',
  delete_tag: 'Permanently delete a tag', delete_campaign: 'Permanently delete a campaign',
  delete_automation: 'Permanently delete an automation',
  activate_campaign: 'Start sending a campaign', activate_automation: 'Activate an automation',
  resend_campaign: 'Resend a campaign',
};
// Drawn on their own below; the generic table skips them.
const OWN = new Set(['action', 'effect', 'count', 'contacts', 'audience_size',
  'suppressed_recipients', 'recipient_sample', 'sample_message']);

// Name, email and, when any has more (its automations, sequences), a column for that.
function people(items, id) {
  const more = (c) => Object.entries(c)
    .filter(([k, v]) => !['id', 'email', 'first_name', 'last_name', 'name'].includes(k) && v)
    .map(([k, v]) => `${words(k)}: ${scalar(v)}`).join(', ');
  const also = items.some((c) => more(c));
  const rows = items.map((c) => el('tr', {},
    el('td', {}, [c.first_name, c.last_name].filter(Boolean).join(' ') || scalar(c.name)),
    el('td', {}, c.email || ''), also ? el('td', {}, more(c)) : null));
  return el('table', { id },
    el('thead', {}, el('tr', {}, el('th', {}, 'Name'), el('th', {}, 'Email'), also ? el('th', {}, 'Also') : null)),
    el('tbody', {}, rows));
}

// Every other fact of the preview, as the approval page lists them.
function facts(preview) {
  const rows = [];
  const add = (label, v) => {
    if (Array.isArray(v)) {
      rows.push(el('tr', {}, el('th', {}, label),
        el('td', {}, v.length ? el('ul', {}, v.map((x) => el('li', {}, scalar(x)))) : 'none')));
    } else if (v && typeof v === 'object' && !('name' in v || 'email' in v)) {
      for (const [k, x] of Object.entries(v)) add(`${label} › ${words(k)}`, x);
    } else {
      rows.push(el('tr', {}, el('th', {}, label), el('td', {}, scalar(v))));
    }
  };
  for (const [k, v] of Object.entries(preview)) if (!OWN.has(k)) add(words(k), v);
  return rows.length ? el('table', { id: 'facts' }, el('tbody', {}, rows)) : null;
}

// The message as one recipient gets it, in a frame of its own: sandboxed without
// scripts, under this view's CSP, so the message can run nothing and load nothing.
function message(m) {
  const frame = el('iframe', { class: 'message', id: 'message', sandbox: '',
    title: `The message as ${m.to && m.to.email} gets it` });
  frame.srcdoc = m.html || `<pre>${(m.text || '').replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</pre>`;
  return [el('h2', {}, 'The message, as one recipient gets it'),
    el('table', {}, el('tbody', {},
      el('tr', {}, el('th', {}, 'Subject'), el('td', { id: 'message-subject' }, m.subject || '')),
      el('tr', {}, el('th', {}, 'From'), el('td', {}, `${m.from.name || ''} <${m.from.email}>`)),
      el('tr', {}, el('th', {}, 'To'), el('td', { id: 'message-to' }, m.to.email)))),
    frame];
}

function approval(body) {
  if (!body.approval_required) {
    return el('p', { class: 'notice', id: 'next' },
      'Nothing has happened yet. The assistant completes this only after you agree.');
  }
  const status = el('p', { class: 'muted', id: 'open-status' });
  const button = el('button', { id: 'open-approval', type: 'button' }, 'Open the approval page');
  button.addEventListener('click', async () => {
    try {
      const r = await crmd.openLink(body.approval_url);
      status.textContent = r && r.isError ? 'The host did not open the page.' : 'Opened in your browser.';
    } catch (e) {
      status.textContent = 'The host did not open the page.';
    }
  });
  return el('div', { class: 'notice', id: 'approval' },
    el('p', {}, 'This needs your approval on crmd\'s own page, signed in with your password. ',
      'Nothing happens until you approve there; the assistant cannot approve it.'),
    el('p', {}, button, ' ', el('span', { class: 'muted' }, body.approval_url)), status);
}

function draw(body) {
  if (!body || body.error) return crmd.showError(root, body);
  const p = body.preview || {};
  const action = body.action || p.action || '';
  const figures = [];
  const figure = (id, label, v) => figures.push(
    el('div', { class: 'figure' }, el('b', { id }, String(v)), el('span', { class: 'muted' }, label)));
  const details = facts(p);
  if (p.count !== undefined) figure('count', 'records', p.count);
  if (p.audience_size !== undefined) figure('audience-size', 'recipients', p.audience_size);
  if (p.suppressed_recipients) figure('suppressed', 'suppressed, skipped', p.suppressed_recipients);
  crmd.show(root, 
    el('h1', {}, TITLES[action] || words(action)),
    p.effect ? el('p', { id: 'effect' }, p.effect) : null,
    figures.length ? el('div', { class: 'figures' }, figures) : null,
    Array.isArray(p.contacts) ? [el('h2', {}, 'Contacts'), people(p.contacts, 'contacts')] : null,
    Array.isArray(p.recipient_sample) && p.recipient_sample.length
      ? [el('h2', {}, `Some of the ${p.audience_size} recipients`),
        people(p.recipient_sample, 'recipients')] : null,
    details ? [el('h2', {}, 'Details'), details] : null,
    p.sample_message ? message(p.sample_message) : null,
    approval(body),
    el('p', { class: 'muted' }, body.expires_at ? `This preview expires at ${body.expires_at}.` : ''));
}

crmd.start('crmd-confirm', { result: draw });
