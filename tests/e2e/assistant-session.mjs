#!/usr/bin/env node
// A realistic assistant session, end to end over OAuth with the MCP TypeScript SDK:
// set up a list and tags, import contacts in bulk, create a campaign and activate it
// through the confirmation flow, read the dashboard and reports, and delete a contact
// through preview + confirm_action, and finally find the campaign's message in the SMTP
// server the suite started (E2E_MAIL_DIR). Every step is asserted.
// Usage: node assistant-session.mjs http://127.0.0.1:<port>/mcp  (env as sdk-oauth.mjs)
import { connectWithOAuth, log } from './lib/oauth.mjs';
import { approveInBrowser } from './lib/browser.mjs';
import { readdirSync, readFileSync } from 'node:fs';
import { Checks, call, callExpectingError } from './lib/assert.mjs';
import { WireValidator } from './lib/schema.mjs';

const serverUrl = process.argv[2] ?? process.env.E2E_MCP_URL;
if (!serverUrl) {
  console.error('usage: assistant-session.mjs <mcp url>');
  process.exit(2);
}
const checks = new Checks('assistant-session');
const wire = new WireValidator();  // every raw message against the 2025-11-25 schema
const NEEDED = ['create_list', 'create_tag', 'upsert_contacts_bulk', 'get_contact', 'create_campaign',
  'get_campaign', 'activate_campaign', 'confirm_action', 'get_dashboard', 'get_contacts_report',
  'get_campaign_report', 'delete_contacts'];

// Under crmd's default approval policy a preview may need the person: the assistant
// alone is refused (approval_pending with the URL), then the person signs in on the
// approval page in a "browser" and approves; only then does confirm_action go through.
async function personApprovesIfAsked(preview, tokenName) {
  if (!preview.approval_required) return;
  checks.ok(typeof preview.approval_url === 'string' && preview.approval_url.includes('/console/approvals/'),
    'the preview carries the approval URL', preview.approval_url);
  const pending = await callExpectingError(client, 'confirm_action', { [tokenName]: preview.confirmation_token });
  checks.ok(/approval_pending/.test(pending.text + JSON.stringify(pending.structured ?? {})),
    'confirm_action alone answers approval_pending', pending.text);
  const page = await approveInBrowser(preview.approval_url, {
    email: process.env.E2E_EMAIL ?? 'e2e@example.com',
    password: process.env.E2E_PASSWORD ?? 'password',
    log: process.env.E2E_VERBOSE ? log : () => {},
  });
  checks.ok(page.status === 200 && /Approved/.test(page.text), 'the person approved on the page', page.status);
}

// The record inside a tool result: {list: {...}} / {tag: {...}} / the object itself.
const record = (res, key) => res?.[key] ?? res;
// The name of the one array-valued property of a tool's input schema (bulk items, ids).
// The name of confirm_action's token argument.
const tokenArg = (tool) => Object.keys(tool.inputSchema.properties ?? {}).find((k) => /token/.test(k)) ?? 'confirmation_token';
function arrayProp(tool, hint) {
  const props = tool.inputSchema.properties ?? {};
  const arrays = Object.keys(props).filter((k) => props[k].type === 'array');
  return arrays.find((k) => hint.test(k)) ?? arrays[0];
}

const session = await checks.step('connect over OAuth', () => connectWithOAuth(serverUrl, {
  email: process.env.E2E_EMAIL ?? 'e2e@example.com',
  password: process.env.E2E_PASSWORD ?? 'password',
  verbose: !!process.env.E2E_VERBOSE,
  name: 'crmd-e2e-assistant',
  fetch: wire.recordingFetch(serverUrl),
}));
if (!session) {
  checks.done();
  process.exit();
}
const { client } = session;
const tools = (await client.listTools()).tools;
const byName = new Map(tools.map((t) => [t.name, t]));
for (const name of NEEDED) checks.ok(byName.has(name), `tool ${name} is served`);
// A step whose tools are missing is not run (the missing tools already failed above).
const has = (...names) => names.every((n) => byName.has(n));

const stamp = Date.now().toString(36);
const state = {};

if (has('create_list', 'create_tag')) await checks.step('create a list and two tags', async () => {
  const list = record(await call(client, 'create_list', { name: `Newsletter ${stamp}` }), 'list');
  checks.ok(Number.isInteger(list.id), 'create_list returns the list with an id', list);
  state.listId = list.id;
  const vip = record(await call(client, 'create_tag', { name: `vip-${stamp}` }), 'tag');
  const trial = record(await call(client, 'create_tag', { name: `trial-${stamp}` }), 'tag');
  checks.ok(Number.isInteger(vip.id) && Number.isInteger(trial.id) && vip.id !== trial.id, 'create_tag returns distinct ids', [vip, trial]);
  state.vipId = vip.id;
  state.trialId = trial.id;
});

if (has('upsert_contacts_bulk', 'get_contact') && state.listId) await checks.step('upsert_contacts_bulk', async () => {
  const tool = byName.get('upsert_contacts_bulk');
  const key = arrayProp(tool, /item|contact/);
  const people = [['grace', 'Grace'], ['alan', 'Alan'], ['katherine', 'Katherine']];
  const items = people.map(([local, first], i) => ({
    email: `${local}.${stamp}@example.com`,
    first_name: first,
    status: 'subscribed',
    lists: [state.listId],
    tags: i === 0 ? [state.vipId] : [state.trialId],
  }));
  items.push({ email: 'not an email' });
  const res = await call(client, 'upsert_contacts_bulk', { [key]: items });
  const results = Object.values(res).find(Array.isArray) ?? [];
  const outcomes = results.map((r) => r.outcome ?? r.status ?? r.result);
  checks.equal(results.length, 4, 'one result per item');
  checks.ok(outcomes.slice(0, 3).every((o) => o === 'created'), 'the three valid contacts are created', results);
  checks.equal(outcomes[3], 'failed', 'the invalid email fails on its own, with a reason');
  checks.ok(JSON.stringify(results[3]).match(/email|valid/i) !== null, 'the failure names the problem', results[3]);
  state.contactIds = results.slice(0, 3).map((r) => r.id ?? r.contact?.id);
  checks.ok(state.contactIds.every(Number.isInteger), 'created items carry their ids', results);

  const again = await call(client, 'upsert_contacts_bulk', { [key]: items.slice(0, 3) });
  const againOutcomes = (Object.values(again).find(Array.isArray) ?? []).map((r) => r.outcome ?? r.status);
  checks.ok(againOutcomes.length === 3 && againOutcomes.every((o) => o === 'updated' || o === 'unchanged'),
    'the same batch again creates nothing new', againOutcomes);

  const grace = record(await call(client, 'get_contact', { id: state.contactIds[0] }), 'contact');
  checks.equal(grace.email, items[0].email, 'get_contact returns the imported contact');
  checks.ok(JSON.stringify(grace.tags ?? []).includes(`vip-${stamp}`), 'the contact carries its tag', grace.tags);
  checks.ok(JSON.stringify(grace.lists ?? []).includes(`Newsletter ${stamp}`), 'the contact is in its list', grace.lists);
});

if (has('create_campaign') && state.listId) await checks.step('create_campaign', async () => {
  const campaign = record(await call(client, 'create_campaign', {
    name: `Launch ${stamp}`,
    subject: 'Our launch, {{first_name | "friend"}}',
    from_name: 'crmd e2e',
    from_email: 'news@example.com',
    text_body: 'Hello! We launched. Unsubscribe: {{unsubscribe_url}}',
    html_body: '<p>Hello! We launched.</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
    audience: { lists: [state.listId], exclude_tags: [state.trialId] },
  }), 'campaign');
  checks.equal(campaign.status, 'draft', 'a new campaign is a draft');
  state.campaignId = campaign.id;
});

if (has('activate_campaign', 'get_campaign', 'confirm_action') && state.campaignId) await checks.step('activate_campaign -> confirm_action', async () => {
  const preview = await call(client, 'activate_campaign', { id: state.campaignId });
  checks.equal(preview.status, 'confirmation_required', 'activation needs confirmation');
  checks.ok(typeof preview.confirmation_token === 'string' && preview.confirmation_token.length >= 16, 'a confirmation token is issued');
  // Audience: the list's three contacts minus the two tagged trial.
  const size = JSON.stringify(preview.preview).match(/"audience_size":(\d+)/);
  if (size) checks.equal(Number(size[1]), 1, 'the preview resolves the audience (list minus excluded tag)');
  const before = record(await call(client, 'get_campaign', { id: state.campaignId }), 'campaign');
  checks.equal(before.status, 'draft', 'nothing changed before confirmation');

  await personApprovesIfAsked(preview, tokenArg(byName.get('confirm_action')));
  const done = await call(client, 'confirm_action', { [tokenArg(byName.get('confirm_action'))]: preview.confirmation_token });
  checks.equal(done.status, 'done', 'confirm_action performs the action');
  const after = record(await call(client, 'get_campaign', { id: state.campaignId }), 'campaign');
  checks.ok(['sending', 'sent', 'scheduled'].includes(after.status), 'the campaign is sending after confirmation', after.status);
  checks.equal(preview.preview.audience_size, 1, 'the preview counts the audience: the list minus the trial tag');
  checks.ok(preview.preview.sample_message?.subject === 'Our launch, Grace', 'the preview shows the message for a real recipient', preview.preview.sample_message);
  const replay = await callExpectingError(client, 'confirm_action', { [tokenArg(byName.get('confirm_action'))]: preview.confirmation_token });
  checks.ok(/confirmation_invalid|already|used/i.test(replay.text + JSON.stringify(replay.structured ?? {})), 'a used token is refused', replay.text);
});

if (has('get_dashboard')) await checks.step('get_dashboard', async () => {
  const dash = await call(client, 'get_dashboard', {});
  checks.ok(dash.contacts && dash.campaigns && dash.growth, 'the dashboard has contacts, growth and campaigns', Object.keys(dash));
  checks.ok(/\b[3-9]\d*\b|\b\d{2,}\b/.test(JSON.stringify(dash.contacts)), 'the dashboard counts the imported contacts', dash.contacts);
});

if (has('get_contacts_report')) await checks.step('get_contacts_report', async () => {
  const report = await call(client, 'get_contacts_report', { interval: 'day' });
  checks.ok(Array.isArray(report.series), 'the report has a series', report);
  checks.ok(report.new_contacts >= 3, 'the report counts today\'s new contacts', report.new_contacts);
});

if (has('get_campaign_report') && state.campaignId) await checks.step('get_campaign_report', async () => {
  const report = await call(client, 'get_campaign_report', { id: state.campaignId });
  checks.ok(report.campaign && report.audience && report.outcomes, 'the campaign report has campaign, audience and outcomes', Object.keys(report));
});

if (has('delete_contacts', 'confirm_action', 'get_contact') && state.contactIds) await checks.step('delete_contacts preview -> confirm_action', async () => {
  const tool = byName.get('delete_contacts');
  const key = arrayProp(tool, /id|contact/);
  const victim = state.contactIds[2];
  const preview = await call(client, 'delete_contacts', { [key]: [victim] });
  checks.equal(preview.status, 'confirmation_required', 'deletion needs confirmation');
  checks.ok(JSON.stringify(preview.preview).includes(`katherine.${stamp}@example.com`), 'the preview names the contact', preview.preview);
  const still = record(await call(client, 'get_contact', { id: victim }), 'contact');
  checks.equal(still.id, victim, 'the contact still exists before confirmation');
  await personApprovesIfAsked(preview, tokenArg(byName.get('confirm_action')));
  const done = await call(client, 'confirm_action', { [tokenArg(byName.get('confirm_action'))]: preview.confirmation_token });
  checks.equal(done.status, 'done', 'confirm_action deletes');
  const gone = await callExpectingError(client, 'get_contact', { id: victim });
  checks.ok(/not_found/.test(gone.text + JSON.stringify(gone.structured ?? {})), 'the contact is gone', gone.text);
});

const mailDir = process.env.E2E_MAIL_DIR;
if (mailDir && has('get_campaign', 'get_campaign_report') && state.campaignId) await checks.step('the campaign is delivered to the SMTP server', async () => {
  let campaign;
  for (let i = 0; i < 100; i++) {
    campaign = record(await call(client, 'get_campaign', { id: state.campaignId }), 'campaign');
    if (campaign.status === 'sent') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  checks.equal(campaign.status, 'sent', 'the campaign is sent once every recipient has a final state');
  const metas = readdirSync(mailDir).filter((f) => f.endsWith('.json'));
  const mine = metas.map((f) => ({ meta: JSON.parse(readFileSync(`${mailDir}/${f}`, 'utf8')), eml: readFileSync(`${mailDir}/${f.replace('.json', '.eml')}`, 'latin1') }))
    .filter((m) => m.meta.rcpt_tos.some((r) => r.endsWith(`.${stamp}@example.com`)));
  checks.equal(mine.length, 1, 'exactly one message: to the one recipient of the audience');
  checks.equal(mine[0]?.meta.rcpt_tos[0], `grace.${stamp}@example.com`, 'it went to Grace');
  checks.ok(/^Subject: Our launch, Grace\r?$/m.test(mine[0]?.eml ?? ''), 'the merge tag is filled in', mine[0]?.eml.slice(0, 600));
  checks.ok(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m.test(mine[0]?.eml ?? ''), 'it carries the one-click unsubscribe header');
  const report = await call(client, 'get_campaign_report', { id: state.campaignId });
  checks.equal(report.outcomes.sent, 1, 'the report counts the message sent');
});

await client.close();
const wireResult = await wire.finish();
checks.ok(wireResult.available, 'tests/data/mcp/2025-11-25.schema.json is there');
log('raw results schema-checked:', JSON.stringify(wireResult.counts));
checks.ok(wireResult.errors.length === 0, 'every raw server message of the session validates against the MCP 2025-11-25 JSON Schema',
  wireResult.errors.join('\n'));
checks.ok((wireResult.counts.CallToolResult ?? 0) >= 10, 'the session\'s tools/call results were schema-checked', wireResult.counts);
log('session over');
checks.done();
