// The web console in a real headless Chromium (Debian's chromium through puppeteer-core),
// against a real crmd (run.sh starts it). Each step does what a site owner does with the
// mouse and keyboard, checks the outcome where it shows (REST, /mcp, the webhook receiver),
// and saves a screenshot in $SCREENSHOTS. Exits 1 when any check fails.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const BASE = process.env.CONSOLE_BASE;
const EMAIL = process.env.CONSOLE_EMAIL;
const PASSWORD = process.env.CONSOLE_PASSWORD;
const OUT = process.env.SCREENSHOTS;
const REST = `${BASE}/api/crm/v1`;

let failures = 0;
const fail = (msg) => { failures++; console.log(`  FAIL ${msg}`); };
const ok = (cond, msg, detail = '') => {
  if (cond) console.log(`  ok   ${msg}`);
  else fail(`${msg}${detail ? `: ${detail}` : ''}`);
  return cond;
};

// Waits for a condition (the webhook worker and the browser run on their own time); the
// assertion is the condition, the deadline only bounds the wait.
async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// --- the test's own receiver: outgoing webhooks and the OAuth client's redirect URI.
const hooks = [];
let embedPage = '';  // the page "another site" serves: the form's embed code
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/hook') {
      hooks.push({ headers: req.headers, body });
      res.writeHead(200).end('ok');
    } else if (req.url === '/shop') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        `<!doctype html><html lang="en"><title>Shop</title><h1>Another site</h1>${embedPage}</html>`);
    } else if (req.url.startsWith('/callback')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>callback</title><p>done');
    } else {
      res.writeHead(404).end();
    }
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const RECEIVER = `http://127.0.0.1:${receiver.address().port}`;

async function rest(method, p, key, body) {
  const r = await fetch(`${REST}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* problem bodies are JSON; others are not needed */ }
  return { status: r.status, json, text };
}

// --- MCP over plain fetch (2025-11-25 session), enough for initialize and tools/call.
class Mcp {
  constructor(token) { this.token = token; this.session = null; this.id = 0; }
  async send(method, params, notify = false) {
    const headers = {
      authorization: `Bearer ${this.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (this.session) {
      headers['mcp-session-id'] = this.session;
      headers['mcp-protocol-version'] = '2025-11-25';
    }
    const msg = { jsonrpc: '2.0', method, params };
    if (!notify) msg.id = ++this.id;
    const r = await fetch(`${BASE}/mcp`, { method: 'POST', headers, body: JSON.stringify(msg) });
    const text = await r.text();
    if (r.headers.get('mcp-session-id')) this.session = r.headers.get('mcp-session-id');
    let body = null;
    if ((r.headers.get('content-type') || '').includes('text/event-stream')) {
      const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
      for (const d of data) { try { const j = JSON.parse(d); if (j.id === msg.id) body = j; } catch { /* keep looking */ } }
    } else if (text) {
      try { body = JSON.parse(text); } catch { body = null; }
    }
    return { status: r.status, body, text };
  }
  async initialize() {
    const r = await this.send('initialize', {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' },
    });
    if (r.status === 200) await this.send('notifications/initialized', {}, true);
    return r;
  }
  async tool(name, args) {
    const r = await this.send('tools/call', { name, arguments: args });
    const result = r.body && r.body.result;
    return { status: r.status, result, structured: result && result.structuredContent, text: r.text };
  }
}

// --- the browser
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
await browser.defaultBrowserContext().overridePermissions(BASE, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
const cspViolations = [];
page.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text()); });
page.on('pageerror', (e) => cspViolations.push(`page error: ${e.message}`));

const shot = async (name) => {
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  console.log(`  shot ${name}.png`);
};
const h1 = () => page.$eval('h1', (e) => e.textContent.trim());
const clickAndWait = async (selector) => {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(selector)]);
};

const steps = [];
const step = (name, fn) => steps.push([name, fn]);
const state = {};

step('sign in', async () => {
  await page.goto(`${BASE}/console/api-keys`);
  ok(page.url().startsWith(`${BASE}/console/login?next=`), 'a visitor is sent to sign in', page.url());
  await page.type('#email', EMAIL);
  await page.type('#password', PASSWORD);
  await clickAndWait('main form button[type=submit]');
  ok(page.url() === `${BASE}/console/api-keys`, 'back on the page asked for', page.url());
  await page.goto(`${BASE}/console`);
  ok(await h1() === 'Overview', 'the overview after signing in');
  const nav = await page.$$eval('header nav a', (as) => as.map((a) => a.textContent));
  ok(['Overview', 'Approvals', 'Connected apps', 'Webhook & API', 'Forms', 'Audit'].every((n) => nav.includes(n)),
    'an administrator sees every section', nav.join(', '));
  await shot('01-overview');
});

step('create an API key and use it against the REST API', async () => {
  await page.goto(`${BASE}/console/api-keys`);
  await page.type('#key-name', 'Browser integration');
  await clickAndWait('form:has(#key-name) button[type=submit]');
  ok(await h1() === 'API key created', 'the key page', await h1());
  const key = await page.$eval('#secret', (e) => e.value);
  ok(/^crmd_live_/.test(key), 'the key is shown once', key.slice(0, 12));
  await page.click('button[data-copy=secret]');
  await until('the copy button to answer', async () =>
    (await page.$eval('button[data-copy=secret]', (b) => b.textContent)) === 'Copied', 5000);
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  ok(copied === key, 'the copy button (console.js, allowed by the CSP) copies the key');
  await shot('02-api-key-created');
  const made = await rest('POST', '/contact', key, { email: 'ada@example.com', first_name: 'Ada' });
  ok(made.status === 201, 'the key adds a contact over REST', `${made.status} ${made.text}`);
  state.key = key;
  await page.goto(`${BASE}/console/api-keys`);
  const listed = await page.$eval('#api-keys', (t) => t.textContent);
  ok(!listed.includes(key), 'the list never shows the key again');
  ok(!/never/.test(await page.$eval('#api-keys tbody tr', (r) => r.children[5].textContent)),
    'the list shows when it was last used');
});

step('disable the key and see the API refuse it', async () => {
  await clickAndWait('button[aria-label="Disable key Browser integration"]');
  const status = await page.$eval('#api-keys tbody tr', (r) => r.children[3].textContent.trim());
  ok(status === 'disabled', 'the key shows disabled', status);
  const refused = await rest('GET', '/contact/ada%40example.com', state.key);
  ok(refused.status === 401, 'REST refuses the disabled key with 401', `${refused.status}`);
  await shot('03-api-key-disabled');
  await clickAndWait('button[aria-label="Enable key Browser integration"]');
  const back = await rest('GET', '/contact/ada%40example.com', state.key);
  ok(back.status === 200, 'enabled again, the key works', `${back.status}`);
});

step('create a webhook and see a delivery in the log', async () => {
  await page.goto(`${BASE}/console/webhooks`);
  await page.type('#wh-url', `${RECEIVER}/hook`);
  await page.type('#wh-description', 'Browser test receiver');
  await page.click('input[name=events][value="contact.created"]');
  await clickAndWait('form:has(#wh-url) button[type=submit]');
  ok(await h1() === 'Webhook created', 'the webhook page', await h1());
  const secret = await page.$eval('#secret', (e) => e.value);
  ok(secret.startsWith('whsec_'), 'the signing secret is shown once');
  const made = await rest('POST', '/contact', state.key, { email: 'grace@example.com', first_name: 'Grace' });
  ok(made.status === 201, 'a new contact (contact.created)', `${made.status}`);
  const hook = await until('the webhook to arrive', () => hooks.find((h) => h.body.includes('grace@example.com')));
  const signed = `${hook.headers['webhook-id']}.${hook.headers['webhook-timestamp']}.${hook.body}`;
  const mac = crypto.createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(signed).digest('base64');
  ok(String(hook.headers['webhook-signature']).split(' ').includes(`v1,${mac}`),
    'the receiver verifies the signature with the secret the console showed');
  await page.click('a[href^="/console/webhooks/deliveries?endpoint_id="]');
  await page.waitForSelector('h1');
  await until('the delivery log to show the success', async () => {
    await page.reload({ waitUntil: 'load' });
    return page.$$eval('#deliveries tbody tr', (rows) => rows.some((r) => r.textContent.includes('succeeded')));
  });
  ok(true, 'the delivery log shows the delivery succeeded');
  await shot('04-webhook-delivery-log');
  await clickAndWait('#deliveries tbody tr a');
  const attempts = await page.$$eval('#attempts tbody tr', (rows) => rows.map((r) => r.children[2].textContent));
  ok(attempts.length === 1 && attempts[0] === '200', 'one attempt, answered 200', attempts.join(','));
  const before = hooks.length;
  await clickAndWait('form[action="/console/webhooks/delivery"] button[type=submit]');
  const again = await until('the redelivery', () => hooks.length > before && hooks[hooks.length - 1]);
  ok(again.headers['webhook-id'] === hook.headers['webhook-id'], 'redelivered with the same webhook-id');
  await until('the second attempt in the log', async () => {
    await page.reload({ waitUntil: 'load' });
    return (await page.$$('#attempts tbody tr')).length === 2;
  });
  ok(true, 'the delivery shows two attempts');
});

step('build a form and submit its embed code from a page on another origin', async () => {
  await page.goto(`${BASE}/console/forms`);
  await page.type('#form-name', 'Shop footer');
  // Row 1 is the Email field already and row 2 an empty one; add two more with the
  // builder's button, fill them, move the paragraph up and watch the preview follow.
  await clickAndWait('#add-field');
  await clickAndWait('#add-field');
  ok(await page.$$eval('.field-row', (r) => r.length) === 4, 'Add a field adds rows');
  await page.select('#f1_type', 'Paragraph');
  await page.type('#f1_label', 'We write once a week.');
  await page.select('#f2_type', 'Input');
  await page.type('#f2_name', 'first_name');
  await page.type('#f2_label', 'First name');
  await page.select('#f3_type', 'Dropdown');
  await page.type('#f3_name', 'plan');
  await page.type('#f3_label', 'Plan');
  await page.type('#f3_options', 'free, pro');
  await until('the preview to show the plan', async () =>
    (await page.$eval('#form-preview', (e) => e.textContent)).includes('Plan'), 10000);
  ok((await page.$eval('#form-preview', (e) => e.innerHTML)).includes('<option>pro</option>'), 'the preview shows the form as a visitor sees it, as typed');
  await clickAndWait('button[name=builder][value="down:1"]');
  ok(await page.$eval('#f1_name', (e) => e.value) === 'first_name' && await page.$eval('#f2_label', (e) => e.value) === 'We write once a week.',
    'Down moves the paragraph below the first name');
  await shot('05a-form-builder');
  await page.select('#applies-status', 'subscribed');
  await page.type('#applies-tags', 'shop');
  await page.type('#allowed-origins', RECEIVER);
  await page.type('#honeypot', 'website');
  await clickAndWait('#builder button[name=action][value=create]');
  ok((await h1()).startsWith('Form: Shop footer'), 'the form page', await h1());
  state.formPage = page.url();
  await shot('05-form-embed-code');
  embedPage = await page.$eval('#embed', (t) => t.value);
  ok(embedPage.includes('data-crmd-form') && embedPage.includes('/form/submit/frm_'), 'the embed code posts to the submit endpoint, naming the form by its public id');
  const shop = await browser.newPage();
  await shop.goto(`${RECEIVER}/shop`);
  await shop.type('input[type=email]', 'shopper@example.com');
  await shop.type('input[name=first_name]', 'Sam');
  await shop.select('select[name=plan]', 'pro');
  await shop.click('form[data-crmd-form] button[type=submit]');
  await shop.waitForFunction(() => document.querySelector('[data-crmd-status]').textContent !== '', { timeout: 10000 });
  const said = await shop.$eval('[data-crmd-status]', (e) => e.textContent);
  ok(said === 'Thank you!', 'the other site\'s page submits the form (CORS, allowed origin)', said);
  await shop.screenshot({ path: path.join(OUT, '06-embedded-form-on-another-site.png'), fullPage: true });
  await shop.close();
  const contact = await rest('GET', '/contact/shopper%40example.com', state.key);
  ok(contact.status === 200 && contact.json.contact.first_name === 'Sam' && contact.json.contact.status === 'subscribed',
    'the submission made a subscribed contact', contact.text.slice(0, 300));
  await page.goto(`${BASE}/console/forms`);
  const counts = await page.$$eval('#forms tbody tr', (rs) => rs.map((r) => r.children[2].textContent));
  ok(counts[0] === '1', 'the forms list counts the generated contact', counts.join(','));
});

step('incoming webhook: the mapping editor previews a pasted sample as you type', async () => {
  await page.goto(`${BASE}/console/hooks`);
  await page.type('#hook-name', 'Shop orders');
  await page.$eval('#m0_path', (e) => { e.value = ''; });
  await page.type('#m0_path', 'data.customer.email');
  await page.type('#m1_target', 'first_name');
  await page.type('#m1_path', 'data.customer.name');
  await page.type('#h-sample', '{"data":{"customer":{"email":"hook@example.com","name":"Hanna"}}}');
  await page.waitForFunction(() => document.querySelector('#preview-body').textContent.includes('hook@example.com'), { timeout: 10000 });
  const shown = await page.$eval('#preview-body', (e) => e.textContent);
  ok(shown.includes('Hanna'), 'the live preview shows what the sample becomes', shown);
  await page.$eval('#m0_path', (e) => { e.value = ''; });
  await page.type('#m0_path', 'data.buyer.email');
  await page.waitForFunction(() => document.querySelector('#preview-body').textContent.includes('data.buyer.email'), { timeout: 10000 });
  ok(true, 'a path the sample lacks is named in the preview');
  await page.$eval('#m0_path', (e) => { e.value = ''; });
  await page.type('#m0_path', 'data.customer.email');
  await page.waitForFunction(() => document.querySelector('#preview-body').textContent.includes('Hanna'), { timeout: 10000 });
  await shot('06b-incoming-webhook-preview');
  await clickAndWait('button[name=action][value=create]');
  const url = await page.$eval('#secret', (e) => e.value);
  ok(/\/hooks\/crmd_hook_/.test(url), 'the hook URL is shown once', url.slice(0, 60));
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { customer: { email: 'hook@example.com', name: 'Hanna' } } }) });
  ok(r.status === 200 || r.status === 201, 'a payload posted to it is accepted', `${r.status}`);
  const contact = await rest('GET', '/contact/hook%40example.com', state.key);
  ok(contact.status === 200 && contact.json.contact.first_name === 'Hanna', 'and makes the contact', contact.text.slice(0, 200));
});

step('connect an assistant (OAuth in the browser) and approve a pending deletion', async () => {
  const redirect = `${RECEIVER}/callback`;
  const reg = await fetch(`${BASE}/oauth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Browser Assistant', redirect_uris: [redirect],
      token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] }),
  });
  const client = await reg.json();
  ok(reg.status === 201, 'the assistant registers (RFC 7591)', JSON.stringify(client));
  const meta = await (await fetch(`${BASE}/.well-known/oauth-authorization-server`)).json();
  const scope = meta.scopes_supported.join(' ');
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const url = new URL(`${BASE}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: 'S256', state: 'st1', resource: `${BASE}/mcp`, scope })) url.searchParams.set(k, v);
  await page.goto(url.toString());
  if (await page.$('input[type=password]')) {
    await page.type('input[type=email]', EMAIL);
    await page.type('input[type=password]', PASSWORD);
    await clickAndWait('form button[type=submit]');
  }
  await clickAndWait('button[name=decision][value=allow]');
  const back = new URL(page.url());
  ok(back.origin + back.pathname === redirect && back.searchParams.get('code'), 'consent sends the code back', page.url());
  const tok = await fetch(`${BASE}/oauth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code'),
      redirect_uri: redirect, client_id: client.client_id, code_verifier: verifier, resource: `${BASE}/mcp` }),
  });
  const tokens = await tok.json();
  ok(tok.status === 200 && tokens.access_token, 'the code is exchanged for a token', JSON.stringify(tokens));
  state.client = client;
  state.token = tokens.access_token;
  const mcp = new Mcp(state.token);
  const init = await mcp.initialize();
  ok(init.status === 200, 'the token works at /mcp', `${init.status} ${init.text.slice(0, 200)}`);
  const victim = await rest('POST', '/contact', state.key, { email: 'mallory@example.com' });
  const id = victim.json && victim.json.contact && victim.json.contact.id;
  const preview = await mcp.tool('delete_contacts', { ids: [id] });
  const s = preview.structured || {};
  ok(s.status === 'confirmation_required' && typeof s.approval_url === 'string',
    'the deletion waits for the person', preview.text.slice(0, 300));
  const early = await mcp.tool('confirm_action', { confirmation_token: s.confirmation_token });
  ok(early.result && early.result.isError && early.text.includes('approval_pending'),
    'confirm_action alone answers approval_pending', early.text.slice(0, 300));
  await page.goto(s.approval_url);
  ok(await h1() === 'Approve this action?', 'the approval page with its preview', await h1());
  ok((await page.$eval('main', (m) => m.textContent)).includes('mallory@example.com'), 'the preview names the contact');
  await shot('07-approval');
  await clickAndWait('button.approve');
  ok(await h1() === 'Approved', 'approved in the console', await h1());
  const done = await mcp.tool('confirm_action', { confirmation_token: s.confirmation_token });
  ok(done.structured && done.structured.status === 'done', 'the assistant completes the deletion', done.text.slice(0, 300));
  const gone = await rest('GET', '/contact/mallory%40example.com', state.key);
  ok(gone.status === 404, 'the contact is gone', `${gone.status}`);
});

// The message files crmd writes without a relay (run.sh: --mail_dir=$MAIL_DIR), parsed
// just enough: the envelope recipient, the subject and the List-Unsubscribe link.
function mails() {
  const dir = process.env.MAIL_DIR;
  if (!dir || !fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.eml')).map((f) => {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    const head = text.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
    const field = (name) => { const m = head.match(new RegExp(`^${name}: (.*)$`, 'mi')); return m ? m[1].trim() : ''; };
    const unsub = field('List-Unsubscribe').match(/<(https?:[^>]+)>/);
    return { to: field('To'), subject: field('Subject'), unsubscribe: unsub ? unsub[1] : '' };
  });
}

// create_campaign + activate_campaign + confirm_action (approved in the console when the
// approval policy asks for it); waits until the campaign is sent.
async function sendCampaign(mcp, list, subject) {
  const made = await mcp.tool('create_campaign', { name: subject, subject, from_email: 'news@example.com',
    html_body: `<p>${subject}</p><p><a href="{{unsubscribe_url}}">Manage your emails</a></p>`, audience: { lists: [list] } });
  const id = made.structured && made.structured.campaign && made.structured.campaign.id;
  const preview = (await mcp.tool('activate_campaign', { id })).structured || {};
  if (preview.approval_url) {
    await page.goto(preview.approval_url);
    await clickAndWait('button.approve');
  }
  const done = await mcp.tool('confirm_action', { confirmation_token: preview.confirmation_token });
  ok(done.structured && done.structured.status === 'done', `campaign "${subject}" activated`, done.text.slice(0, 300));
  await until(`campaign "${subject}" sent`, async () => {
    const r = await mcp.tool('get_campaign', { id });
    return r.structured && r.structured.campaign && r.structured.campaign.status === 'sent';
  });
}

step('the preference page: leave one list, stay on another, a campaign to each', async () => {
  const mcp = new Mcp(state.token);
  await mcp.initialize();
  const list = async (name, description) => {
    const r = await mcp.tool('create_list', { name, description, public: true });
    ok(r.structured && r.structured.list && r.structured.list.public === true, `public list ${name} created`, r.text.slice(0, 300));
    return r.structured.list.id;
  };
  const weekly = await list('Weekly', 'Our news every Monday');
  const offers = await list('Offers', 'Discounts, now and then');
  state.weeklyId = weekly;
  state.offersId = offers;
  for (const [email, lists] of [['reader@example.com', ['Weekly', 'Offers']], ['other@example.com', ['Weekly']]]) {
    const r = await rest('POST', '/contact', state.key, { email, lists });
    ok(r.status === 200 || r.status === 201, `${email} on ${lists.join(', ')}`, `${r.status} ${r.text.slice(0, 200)}`);
  }
  await sendCampaign(mcp, weekly, 'Weekly 1');
  const first = await until('the message to the reader', async () => mails().find((m) => m.to.includes('reader@example.com')));
  ok(first.unsubscribe.includes('/u/'), 'the message carries its unsubscribe link', first.unsubscribe);

  await page.goto(first.unsubscribe);
  ok(await h1() === 'Your email preferences', 'the link opens the preference page', await h1());
  const body = await page.$eval('body', (b) => b.textContent);
  ok(body.includes('Our news every Monday') && body.includes('Discounts, now and then'), 'both lists with their descriptions');
  ok(await page.$eval(`#list-${weekly}`, (e) => e.checked) && await page.$eval(`#list-${offers}`, (e) => e.checked),
    'both switches on');
  await shot('11-preferences');
  await page.click(`label[for="list-${weekly}"]`);
  await clickAndWait('button[name=action][value=save]');
  ok((await page.$eval('#notice', (e) => e.textContent)).includes('saved'), 'the page says the choice is saved');
  ok(!(await page.$eval(`#list-${weekly}`, (e) => e.checked)) && await page.$eval(`#list-${offers}`, (e) => e.checked),
    'Weekly is off, Offers still on');
  await shot('12-preferences-saved');
  const reader = await rest('GET', '/contact/reader%40example.com', state.key);
  const c = reader.json && (reader.json.contact || reader.json);
  ok(c && c.status === 'subscribed' && c.lists.map((l) => l.name).join() === 'Offers',
    'the reader is still subscribed, on Offers only', reader.text.slice(0, 300));

  const before = mails().length;
  await sendCampaign(mcp, weekly, 'Weekly 2');
  await sendCampaign(mcp, offers, 'Offers 1');
  await until('the two new messages', async () => mails().length >= before + 2);
  const got = mails().filter((m) => m.to.includes('reader@example.com')).map((m) => m.subject).sort();
  ok(JSON.stringify(got) === JSON.stringify(['Offers 1', 'Weekly 1']), 'the reader gets Offers, not Weekly any more', JSON.stringify(got));
  ok(mails().some((m) => m.to.includes('other@example.com') && m.subject === 'Weekly 2'), 'Weekly 2 still reaches its other subscriber');
});

step("the reader's contact page: lists with their states and the timeline", async () => {
  await page.goto(`${BASE}/console/contacts`);
  await page.type('#contact-q', 'reader@example.com');
  await clickAndWait('form.filters button[type=submit]');
  ok((await h1()) === 'Contact reader@example.com', 'an exact address opens the contact page', await h1());
  state.readerPage = page.url();
  const lists = await page.$$eval('#lists tbody tr', (rs) => rs.map((r) => r.textContent));
  ok(lists.some((r) => r.includes('Weekly') && r.includes('unsubscribed')) &&
     lists.some((r) => r.includes('Offers') && r.includes('subscribed')),
  'Weekly left on the preference page, Offers kept', lists.join(' | '));
  const timeline = await page.$$eval('#timeline tbody tr', (rs) => rs.map((r) => r.textContent));
  ok(timeline.some((r) => r.includes('set_list_preferences')) && timeline.some((r) => r.includes('campaign Offers 1')),
    'the timeline shows the preference change and the messages', timeline.slice(0, 8).join(' | '));
  await shot('13-contact');
});

// The tracked links of the messages written to the mail folder (quoted-printable undone).
function trackedLinks() {
  const dir = process.env.MAIL_DIR;
  if (!dir || !fs.existsSync(dir)) return [];
  const out = [];
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.eml'))) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    for (const m of text.matchAll(/https?:\/\/[^"\s<>)]+\/t\/c\/[^"\s<>)]+/g)) out.push(m[0]);
  }
  return out;
}

step('a campaign in the console: the message, the preview, Confirm, and the report', async () => {
  const mcp = new Mcp(state.token);
  await mcp.initialize();
  const made = await mcp.tool('create_campaign', {
    name: 'Spring news', subject: 'Spring at the shop, {{first_name | "friend"}}', from_email: 'news@example.com',
    html_body: '<h2>Spring is here</h2><p>Hello {{first_name | "friend"}}, the new <a href="https://example.com/spring">spring range</a> is in, and <a href="https://example.com/sale">the sale</a> starts Monday.</p><p><a href="{{unsubscribe_url}}">Manage your emails</a></p>',
    audience: { lists: [state.weeklyId, state.offersId] }, track_clicks: true, track_opens: true, template_id: 1 });
  const id = made.structured && made.structured.campaign && made.structured.campaign.id;
  ok(!!id, 'an assistant made a draft campaign', made.text.slice(0, 200));
  await page.goto(`${BASE}/console/campaigns`);
  ok((await page.$$eval('#campaigns tbody tr', (rs) => rs.map((r) => r.textContent))).some((r) => r.includes('Spring news') && r.includes('draft')),
    'the list shows it as a draft');
  await clickAndWait(`a[href="/console/campaigns/view?id=${id}"]`);
  ok(await h1() === 'Campaign: Spring news', 'its page opens', await h1());
  state.campaignPage = page.url();
  const frame = await page.$eval('#message iframe', (f) => ({ sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') }));
  ok(frame.sandbox === '', 'the message is in a sandboxed frame without scripts', JSON.stringify(frame));
  const inFrame = await until('the message in the frame', async () => {
    const f = page.frames().find((x) => x.url().includes('/console/campaigns/preview'));
    return f && (await f.content()).includes('Spring is here') ? f : null;
  });
  ok(!!inFrame, 'the frame shows the message for a real contact');
  await shot('20-campaign-draft');
  if (process.env.DOCS_SHOTS) {
    await page.screenshot({ path: path.join(process.env.DOCS_SHOTS, 'console-campaign.png'), fullPage: true });
  }
  await clickAndWait('button[name=action][value=activate]');
  ok(await h1() === 'Activate the campaign', 'Activate shows the preview first', await h1());
  const facts = await page.$eval('main table', (t) => t.textContent);
  ok(facts.includes('Recipients') && facts.includes('2'), 'the preview counts the recipients', facts.slice(0, 300));
  await shot('21-campaign-confirm');
  await clickAndWait('button[name=action][value=confirm]');
  ok((await page.$eval('.notice', (e) => e.textContent)).includes('Activated'), 'Confirm sends it');
  await until('the campaign sent', async () => {
    const r = await mcp.tool('get_campaign', { id });
    return r.structured && r.structured.campaign && r.structured.campaign.status === 'sent';
  });
  const links = trackedLinks().filter((l) => l.includes('spring') || l.includes('sale') || l.includes('u='));
  for (const l of links.slice(0, 3)) await fetch(l, { redirect: 'manual' });
  await page.goto(state.campaignPage);
  const report = await page.$eval('#report', (e) => e.textContent);
  ok(report.includes('Over time') && report.includes('Clicks per link'), 'the report has both charts');
  ok(await page.$$eval('#report svg.chart[role=img]', (s) => s.length) === 2, 'two SVG charts');
  const linkRows = await page.$$eval('#report-links tbody tr', (rs) => rs.map((r) => r.textContent));
  ok(linkRows.length >= 1, 'clicks per link in a table', linkRows.join(' | '));
  await shot('22-campaign-report');
  const docs = process.env.DOCS_SHOTS;
  if (docs) {
    await page.goto(state.campaignPage);
    // The charts and their tables (the totals table above them is on the page too).
    const clip = await page.evaluate(() => {
      const top = document.getElementById('over-time').getBoundingClientRect().top + window.scrollY - 16;
      const end = document.getElementById('report').getBoundingClientRect().bottom + window.scrollY + 16;
      return { x: 0, y: top, width: 1280, height: Math.min(end - top, 1600) };
    });
    await page.screenshot({ path: path.join(docs, 'console-campaign-report.png'), clip, captureBeyondViewport: true });
    console.log('  docs screenshots written');
  }
});

step('the template editor: make a template, its live preview follows typing, save', async () => {
  await page.goto(`${BASE}/console/templates`);
  await page.type('#tpl-name', 'Plain frame');
  await page.$eval('#tpl-html', (e) => { e.value = ''; });
  await page.type('#tpl-html', '<div class="frame">{{content}}</div>');
  await clickAndWait('#template-new button[type=submit]');
  ok((await h1()) === 'Template: Plain frame', 'the editor opens on the new template', await h1());
  state.templatePage = page.url();
  await page.focus('#tpl-html');
  await page.keyboard.press('End');
  await page.type('#tpl-html', '<p>Typed footer line</p>');
  const followed = await until('the preview to follow typing', async () => {
    for (const f of page.frames().filter((x) => x.url().includes('/console/templates/preview'))) {
      if ((await f.content().catch(() => '')).includes('Typed footer line')) return true;
    }
    return false;
  }, 15000).catch(() => false);
  ok(!!followed, 'the live preview shows what is typed, before saving');
  await clickAndWait('button[name=action][value=save]');
  ok((await page.$eval('button[name=action][value=save]', (b) => b.textContent)).includes('revision 2'), 'saved at revision 2');
  await shot('23-template-editor');
});

step('lists, tags, automations and the contact page change as the tools do', async () => {
  await page.goto(`${BASE}/console/lists`);
  await page.type('#group-name', 'Browser list');
  await clickAndWait('button[name=action][value=create]');
  ok((await page.$eval('#groups', (t) => t.textContent)).includes('Browser list'), 'a list made in the console');
  await shot('24-lists');
  await page.goto(state.readerPage);
  await page.type('#add-tag-name', 'from-console');
  await clickAndWait('#add-tag button[type=submit]');
  ok((await page.$eval('#tags', (e) => e.textContent)).includes('from-console'), 'a tag added on the contact page');
  await page.goto(`${BASE}/console/automations`);
  ok(await h1() === 'Automations and sequences', 'the automations page opens', await h1());
});

step('revoke the connected app and see its token refused at /mcp', async () => {
  await page.goto(`${BASE}/console/apps`);
  const rows = await page.$$eval('#grants tbody tr', (rs) => rs.map((r) => r.textContent));
  ok(rows.some((r) => r.includes('Browser Assistant')), 'the app is listed with its scopes', rows.join(' | '));
  await shot('08-connected-apps');
  await clickAndWait('button[aria-label="Revoke Browser Assistant"]');
  const after = await page.$$eval('#grants tbody tr', (rs) => rs.length).catch(() => 0);
  ok(after === 0, 'no live connection is left', `${after}`);
  const refused = await new Mcp(state.token).initialize();
  ok(refused.status === 401, 'the revoked token is refused at /mcp at once', `${refused.status}`);
});

step('the audit log, filtered', async () => {
  await page.goto(`${BASE}/console/audit`);
  await page.type('#f-action', 'delete_contacts');
  await clickAndWait('form.filters button[type=submit]');
  const rows = await page.$$eval('#audit tbody tr', (rs) => rs.map((r) => r.textContent));
  ok(rows.length >= 1 && rows.every((r) => r.includes('delete_contacts')), 'only delete_contacts rows', rows.join(' | '));
  await shot('09-audit');
});

step('axe-core: no serious or critical violation on any console page', async () => {
  const axeSource = fs.readFileSync(new URL('./node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
  const pages = ['/console', '/console/approvals', '/console/apps', '/console/contacts/transfer',
    '/console/api-keys', '/console/webhooks', '/console/hooks', '/console/forms', '/console/campaigns',
    '/console/lists', '/console/tags', '/console/automations', '/console/templates', '/console/contacts',
    '/console/suppressions', '/console/people', '/console/audit', '/console/mail-receivers',
    state.formPage, state.readerPage, state.campaignPage, state.templatePage]
    .filter(Boolean).map((p) => (p.startsWith(BASE) ? p.slice(BASE.length) : p));
  for (const p of pages) {
    await page.goto(`${BASE}${p}`);
    // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
    await page.evaluate(axeSource);
    const found = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    });
    ok(found.length === 0, `axe: ${p}`, found.join(' | '));
  }
});

step('readable at 360 px and usable with the keyboard', async () => {
  await page.setViewport({ width: 360, height: 740 });
  for (const p of ['/console', '/console/api-keys', '/console/webhooks', '/console/hooks', '/console/forms', '/console/apps', '/console/audit',
    '/console/contacts', '/console/campaigns', '/console/lists', '/console/automations', '/console/templates',
    state.readerPage.slice(BASE.length), state.formPage.slice(BASE.length),
    state.campaignPage.slice(BASE.length), state.templatePage.slice(BASE.length)]) {
    await page.goto(`${BASE}${p}`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    ok(width <= 360, `${p} fits 360 px without sideways scrolling`, `${width}px`);
  }
  await page.goto(`${BASE}/console/api-keys`);
  await shot('10-narrow-api-keys');
  await page.keyboard.press('Tab');
  ok(await page.evaluate(() => document.activeElement.textContent) === 'Skip to content', 'Tab reaches the skip link first');
  const unlabeled = await page.$$eval('main input:not([type=hidden]), main select, main textarea',
    (els) => els.filter((e) => !(e.id && document.querySelector(`label[for="${e.id}"]`)) && !e.getAttribute('aria-label')).length);
  ok(unlabeled === 0, 'every input has a label', `${unlabeled}`);
  await page.setViewport({ width: 1280, height: 900 });
});

step('sign out, with one click on the header\'s Sign out', async () => {
  await clickAndWait('header.top button[form=signout]');
  ok(page.url().startsWith(`${BASE}/console/login`), 'signed out, at the sign-in page', page.url());
  await page.goto(`${BASE}/console/apps`);
  ok(page.url().startsWith(`${BASE}/console/login`), 'the console asks to sign in again');
});

for (const [name, fn] of steps) {
  console.log(`=== ${name}`);
  try {
    await fn();
  } catch (e) {
    fail(`${name}: ${e.stack || e}`);
    await shot(`failed-${name.replace(/[^a-z0-9]+/gi, '-')}`).catch(() => {});
  }
}
ok(cspViolations.length === 0, 'no Content-Security-Policy violation or script error', cspViolations.join(' | '));
await browser.close();
receiver.close();
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
