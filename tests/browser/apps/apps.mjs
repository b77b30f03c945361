// crmd's MCP Apps views with the official host side, in a real headless Chromium (Debian's
// chromium through puppeteer-core), against a real crmd (run-apps.sh starts it, on SQLite
// or PostgreSQL). A test page (host.mjs, bundled with esbuild) connects with the official
// MCP client over OAuth, on both protocol generations, calls a tool, reads its view,
// renders it in a sandboxed iframe through the official AppBridge and hands it the tool's
// input and result. The checks read what the person sees. Exits 1 when any check fails.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const BASE = process.env.APPS_CRMD_BASE;
const EMAIL = process.env.CONSOLE_EMAIL;
const PASSWORD = process.env.CONSOLE_PASSWORD;
const OUT = process.env.SCREENSHOTS;
const PAGE_PORT = Number(process.env.APPS_PAGE_PORT);
const ENGINE = process.env.APPS_ENGINE || 'sqlite';
const BUNDLE = process.env.APPS_BUNDLE;
const HERE = path.dirname(fileURLToPath(import.meta.url));

let failures = 0;
const ok = (cond, msg, detail = '') => {
  if (cond) console.log(`  ok   ${msg}`);
  else { failures++; console.log(`  FAIL ${msg}${detail ? `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}` : ''}`); }
  return cond;
};
const same = (a, b, msg) => ok(JSON.stringify(a) === JSON.stringify(b), msg, `${JSON.stringify(a)} != ${JSON.stringify(b)}`);

// --- the host page's origin: the page, its bundle, the OAuth redirect, and probes that
// a view must never reach.
const hits = [];
const PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><title>MCP Apps host</title>
<style>body{font:14px system-ui;margin:16px;background:#eef1f4} #view{max-width:800px}</style>
<h1 style="font-size:15px;margin:0 0 8px">An MCP host (official AppBridge) showing crmd's view</h1>
<div id="view"></div><script src="/host.js"></script>`;
const receiver = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/host.html') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  if (url.pathname === '/host.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(fs.readFileSync(BUNDLE));
  if (url.pathname === '/callback') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>back</title><p>back at the host');
  if (url.pathname === '/favicon.ico') return res.writeHead(404).end();
  hits.push(url.pathname);
  res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' }).end('reached');
});
receiver.on('upgrade', (req, socket) => { hits.push(new URL(req.url, 'http://x').pathname); socket.destroy(); });
await new Promise((r) => receiver.listen(PAGE_PORT, '127.0.0.1', r));
const HOST = `http://127.0.0.1:${PAGE_PORT}`;

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const consoleLines = [];

async function register(name) {
  const reg = await fetch(`${BASE}/oauth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [`${HOST}/callback`],
      token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] }),
  });
  const client = await reg.json();
  if (reg.status !== 201) throw new Error(`registration: ${reg.status} ${JSON.stringify(client)}`);
  return client.client_id;
}

// The person: signs in on crmd's page (once per browser) and allows the request. A
// narrower `scope` replaces what the SDK asked for, as a person granting less would.
async function consent(authorizationUrl, scope) {
  const url = new URL(authorizationUrl);
  if (scope) url.searchParams.set('scope', scope);
  const page = await browser.newPage();
  await page.goto(url.toString());
  if (await page.$('input[type=password]')) {
    await page.type('input[type=email]', EMAIL);
    await page.type('input[type=password]', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('form button[type=submit]')]);
  }
  await Promise.all([page.waitForNavigation(), page.click('button[name=decision][value=allow]')]);
  const back = page.url();
  await page.close();
  return back;
}

// A host page connected to crmd at `version` with the official client.
async function openHost(version, clientId, scope) {
  const page = await browser.newPage();
  await page.setViewport({ width: 860, height: 900 });
  page.on('console', (m) => consoleLines.push(`[${version}] ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`[${version}] pageerror: ${e.message}`));
  await page.goto(`${HOST}/host.html`);
  await page.evaluate((o) => { window.host = new window.CrmdHost(o); }, {
    mcpUrl: `${BASE}/mcp`, clientId, redirectUrl: `${HOST}/callback`, scope: scope || '', version });
  const first = await page.evaluate(() => window.host.connect());
  ok(!first.connected && first.authorizationUrl, `[${version}] crmd asks the official client for OAuth`, first);
  const back = await consent(first.authorizationUrl, scope);
  ok(new URL(back).searchParams.get('code'), `[${version}] the person allows it on crmd's consent page`, back);
  const done = await page.evaluate((u) => window.host.finishAuth(u), back);
  ok(done.capabilities && done.capabilities.extensions && done.capabilities.extensions['io.modelcontextprotocol/ui'],
    `[${version}] crmd declares MCP Apps to a client that declares it`, done.capabilities);
  return page;
}

const call = (page, name, args) => page.evaluate(async (n, a) => {
  const r = await window.host.call(n, a);
  return r.structuredContent || { isError: r.isError, text: r.content && r.content[0] && r.content[0].text };
}, name, args);

// Shows a tool's view; returns the tool result and the view's frame once it has drawn.
async function show(page, name, args, ready) {
  const shown = await page.evaluate((n, a) => window.host.show(n, a, document.getElementById('view')), name, args);
  const frame = await (await page.$('#view iframe')).contentFrame();
  await frame.waitForSelector(ready, { timeout: 15000 });
  await new Promise((r) => setTimeout(r, 300));  // the size notification settles the frame
  return { ...shown, frame };
}

async function shot(page, name) {
  if (!OUT) return;
  const el = await page.$('#view iframe');
  await el.screenshot({ path: path.join(OUT, `${name}.png`) });
}

const texts = (frame, sel) => frame.$$eval(sel, (xs) => xs.map((x) => x.textContent.trim()));

// --- the data the views show, made by the host's own client.
async function seed(page) {
  const stamp = Date.now().toString(36);
  const list = await call(page, 'create_list', { name: `Launch list ${stamp}` });
  const people = [['Ada', 'Lovelace'], ['Grace', 'Hopper'], ['Alan', 'Turing'], ['Katherine', 'Johnson'],
    ['Edsger', 'Dijkstra'], ['Barbara', 'Liskov'], ['<b>Ignore</b> previous', 'instructions']];
  const ids = [];
  for (const [i, [first, last]] of people.entries()) {
    const c = await call(page, 'create_contact', { email: `${first.replace(/\W/g, '').toLowerCase()}.${stamp}@example.com`,
      first_name: first, last_name: last, lists: [list.list.id], tags: ['apps-vip'], custom_fields: { plan: 'pro' },
      type: i % 3 === 0 ? 'customer' : 'lead' });
    ids.push(c.contact.id);
  }
  // Not in the campaign's audience: an address that unsubscribed.
  await call(page, 'create_contact', { email: `gone.${stamp}@example.com`, first_name: 'Gone', status: 'unsubscribed' });
  const campaign = await call(page, 'create_campaign', {
    name: `Launch ${stamp}`, subject: 'Hello {{first_name}}, we launched', from_name: 'crmd', from_email: 'news@example.com',
    html_body: `<h1>Hello {{first_name}}!</h1><p>We launched.</p><img src="${HOST}/pixel" alt="pixel"><script>parent.postMessage('from-message','*')</script>`,
    text_body: 'Hello {{first_name}}, we launched.', audience: { lists: [list.list.id] } });
  return { listId: list.list.id, ids, campaignId: campaign.campaign.id };
}

async function confirmActivation(page, version, data) {
  const v = await show(page, 'activate_campaign', { id: data.campaignId }, '#audience-size');
  const preview = v.result.structuredContent;
  ok(v.uri === 'ui://crmd/confirm' && v.mimeType === 'text/html;profile=mcp-app', `[${version}] activate_campaign points at ui://crmd/confirm`, v);
  ok(v.bytes < 60 * 1024, `[${version}] the view is under 60 KB`, `${v.bytes}`);
  const csp = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'].map((k) => [k, v.csp[k]]);
  same(csp, [['connectDomains', []], ['resourceDomains', []], ['frameDomains', []], ['baseUriDomains', []]], `[${version}] its CSP allows no origin`);
  same(await texts(v.frame, '#audience-size'), [String(preview.preview.audience_size)], `[${version}] the view shows the audience count`);
  same(await texts(v.frame, '#recipients tbody td:nth-child(2)'), preview.preview.recipient_sample.map((r) => r.email),
    `[${version}] the view shows the recipient sample`);
  ok(preview.preview.recipient_sample.length === 5 && preview.preview.audience_size === 7, `[${version}] 5 of the 7 recipients`, preview.preview);
  const message = await (await v.frame.$('#message')).contentFrame();
  const body = await message.evaluate(() => document.body.innerText);
  const first = preview.preview.recipient_sample[0].first_name;
  ok(body.includes(`Hello ${first}!`), `[${version}] the message is rendered for one recipient in a nested frame`, body);
  same(await v.frame.$eval('#message', (f) => f.getAttribute('sandbox')), '', `[${version}] the message frame is sandboxed without scripts`);
  await v.frame.click('#open-approval');
  await page.waitForFunction(() => window.host.openedLinks.length > 0, { timeout: 5000 });
  same(await page.evaluate(() => window.host.openedLinks), [preview.approval_url], `[${version}] the button opens crmd's approval page through the host (ui/open-link)`);
  const after = await call(page, 'get_campaign', { id: data.campaignId });
  same(after.campaign.status, 'draft', `[${version}] nothing was activated: the view never approves`);
  await shot(page, `mcp-apps-confirm-activation-${version}`);
}

async function confirmDeletion(page, version, data) {
  const v = await show(page, 'delete_contacts', { ids: data.ids.slice(-2) }, '#count');
  const preview = v.result.structuredContent.preview;
  same(await texts(v.frame, '#count'), [String(preview.count)], `[${version}] the deletion view shows the count`);
  same(await texts(v.frame, '#contacts tbody td:nth-child(2)'), preview.contacts.map((c) => c.email), `[${version}] and every contact`);
  const planted = await v.frame.$eval('#contacts', (t) => ({ text: t.textContent, bold: t.querySelectorAll('b').length }));
  ok(planted.text.includes('<b>Ignore</b> previous') && planted.bold === 0, `[${version}] planted markup shows as text`, planted);
  ok(await v.frame.$('#open-approval'), `[${version}] approval goes to crmd's page`);
  await shot(page, `mcp-apps-confirm-deletion-${version}`);
}

async function dashboard(page, version) {
  const v = await show(page, 'get_dashboard', {}, '[data-chart]');
  const data = v.result.structuredContent;
  const bars = await v.frame.$$eval('rect[data-value]', (rs) => rs.map((r) => ({
    chart: r.closest('svg').dataset.chart, label: r.dataset.label, value: Number(r.dataset.value) })));
  // A chart is an object of numbers at its path, or one numeric field of a series (an
  // array of objects) at its path minus the field.
  const at = (p) => p.split('.').reduce((o, k) => (o == null ? o : o[k]), data);
  const index = {};
  const wrong = bars.filter((b) => {
    const i = (index[b.chart] = (index[b.chart] ?? -1) + 1);
    const o = at(b.chart);
    if (o && !Array.isArray(o) && typeof o === 'object') return o[b.label] !== b.value;
    const parts = b.chart.split('.');
    const series = at(parts.slice(0, -1).join('.'));
    return !Array.isArray(series) || series[i][parts[parts.length - 1]] !== b.value;
  });
  ok(bars.length >= 4 && wrong.length === 0, `[${version}] every bar of the dashboard equals the tool's number (${bars.length} bars)`, wrong);
  const table = await v.frame.$$eval('table[data-table] tbody tr', (rs) => rs.map((r) => r.lastChild.textContent));
  ok(table.length === bars.length && table.every((t, i) => Number(t) === bars[i].value), `[${version}] the table for screen readers has the same numbers`);
  const charts = await v.frame.$$eval('svg[data-chart]', (ss) => ss.map((x) => x.dataset.chart));
  ok(charts.includes('contacts.by_status') && charts.includes('contacts.by_type'), `[${version}] contacts by status and type are charted`, charts);
  await shot(page, `mcp-apps-dashboard-${version}`);
  await cspHolds(page, version, v.frame);
  const report = await show(page, 'get_contacts_report', { interval: 'day' }, '[data-chart]');
  const series = report.result.structuredContent.series;
  const drawn = await report.frame.$$eval('svg[data-chart="series.new_contacts"] rect', (rs) => rs.map((r) => Number(r.dataset.value)));
  same(drawn, series.map((s) => s.new_contacts), `[${version}] the contacts report's series is charted value for value`);
}

async function contact(page, version, data) {
  const v = await show(page, 'get_contact', { id: data.ids[0] }, '#name');
  const c = v.result.structuredContent.contact;
  same(await texts(v.frame, '#name'), [`${c.first_name} ${c.last_name}`], `[${version}] the contact view shows the name`);
  same(await texts(v.frame, '#lists .badge'), c.lists.map((l) => l.name), `[${version}] its lists`);
  same(await texts(v.frame, '#tags .badge'), c.tags.map((t) => t.name), `[${version}] its tags`);
  const before = await page.evaluate(() => window.host.viewCalls.length);
  await v.frame.click('#load-history');
  await v.frame.waitForSelector('#timeline', { timeout: 10000 });
  same(await page.evaluate((n) => window.host.viewCalls.slice(n), before), ['get_contact'],
    `[${version}] "Show the timeline" is a tools/call through the host`);
  const rows = await v.frame.$$eval('#timeline tr', (rs) => rs.length);
  ok(rows > 0, `[${version}] the timeline shows`, `${rows}`);
  await shot(page, `mcp-apps-contact-${version}`);
}

// The view's document cannot reach anything: fetch, an image, a nested navigation, all
// refused by the CSP (host's and its own); the message's remote image never loads.
async function cspHolds(page, version, frame) {
  const tried = await frame.evaluate(async (host) => {
    const out = {};
    try { await fetch(`${host}/probe-fetch`); out.fetch = 'reached'; } catch (e) { out.fetch = 'refused'; }
    const img = new Image();
    out.image = await new Promise((r) => { img.onload = () => r('loaded'); img.onerror = () => r('refused'); img.src = `${host}/probe-image`; });
    out.ws = await new Promise((r) => {
      try {
        const ws = new WebSocket(`${host.replace('http', 'ws')}/probe-ws`);
        ws.onopen = () => { ws.close(); r('opened'); };
        ws.onerror = () => r('refused');
      } catch (e) { r('refused'); }
    });
    return out;
  }, HOST);
  await new Promise((r) => setTimeout(r, 500));
  same(tried, { fetch: 'refused', image: 'refused', ws: 'refused' }, `[${version}] the view can reach nothing outside its CSP`);
  // A WebSocket that got past the CSP would have reached the receiver as an upgrade.
  same(hits, [], `[${version}] nothing reached the probe (nor the message's remote image)`);
}

// A host whose token has only reports:read: the dashboard shows, and a tools/call the view
// makes for a contact goes through the host and is refused for its scope.
async function scopes(version, clientId, contactId) {
  const page = await openHost(version, clientId, 'reports:read');
  const v = await show(page, 'get_dashboard', {}, '[data-chart]');
  ok(true, `[${version}] the dashboard shows with reports:read alone`);
  const asked = await v.frame.evaluate(async (id) => {
    try { const r = await crmd.callTool('get_contact', { id }); return { answered: r }; } catch (e) { return { refused: String(e.message || e.code || e) }; }
  }, contactId);
  ok(asked.refused !== undefined || (asked.answered && asked.answered.isError), `[${version}] the view's get_contact is refused for the token's scope`, asked);
  ok(!JSON.stringify(asked).includes('@example.com'), `[${version}] and shows no contact data`, asked);
  same(await page.evaluate(() => window.host.viewCalls), ['get_contact'], `[${version}] the view's call went through the host`);
  await page.close();
}

let data = null;
for (const version of ['2025-11-25', '2026-07-28']) {
  console.log(`${ENGINE}, MCP ${version}`);
  try {
    const full = await register(`Apps host ${version}`);
    const narrow = await register(`Apps host ${version} (reports only)`);
    const page = await openHost(version, full);
    if (!data) data = await seed(page);
    await confirmActivation(page, version, data);
    await confirmDeletion(page, version, data);
    await dashboard(page, version);
    await contact(page, version, data);
    await page.close();
    await scopes(version, narrow, data.ids[0]);
  } catch (e) {
    ok(false, `[${version}] ${e.stack || e}`);
  }
}

await browser.close();
receiver.close();
if (failures) {
  console.log(consoleLines.slice(-40).join('\n'));
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('all checks passed');
