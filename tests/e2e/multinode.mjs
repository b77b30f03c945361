#!/usr/bin/env node
// Two crmd nodes on one PostgreSQL behind nginx (multinode.sh starts them). Checks, as an
// assistant and an operator would see them:
//   - the official MCP SDK client registers, authorizes and calls tools through the balancer
//   - an MCP session made on one node serves on the other (sessions are rows), and one
//     ended with DELETE on one node is answered 404 by the other at once
//   - a deletion previewed on node A is confirmed on node B
//   - two concurrent confirms of one preview, one per node: exactly one succeeds
//   - under the person's approval, a preview made stale on the other node is answered
//     stale_preview with a fresh preview, before any approval and after the page refused
//   - 1,000 contact creations spread over both nodes, node B killed with SIGKILL in the
//     middle: every acknowledged write is there, exactly 1,000 contact.created events are
//     in the outbox and every one reaches the webhook receiver (duplicates carry the same
//     webhook-id and body); the surviving node delivers the rest
//   - a token revoked on node A is refused by node B, and a grant revoked by crmctl (no node
//     told) by both nodes, within the documented bound (docs/postgres.md: 3 s)
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { connectWithOAuth, log } from './lib/oauth.mjs';
import { Checks, call } from './lib/assert.mjs';
import { approveInBrowser } from './lib/browser.mjs';

const LB = process.env.LB_URL, A = process.env.NODE_A, B = process.env.NODE_B;
const PID_B = Number(process.env.PID_B), RECEIVER_PORT = Number(process.env.RECEIVER_PORT);
const DATABASE_URL = process.env.DATABASE_URL;
const checks = new Checks('multinode');
// docs/postgres.md: each node re-reads the revoked tokens and grants at most every 2 s; the
// first request after that waits for the read, so a revocation is refused everywhere within
// 3 s of its commit.
const REVOCATION_BOUND_MS = 3000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- the webhook receiver
const deliveries = [];  // {id, type, body}
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    deliveries.push({ id: req.headers['webhook-id'], body });
    res.writeHead(204).end();
  });
});
await new Promise((r) => receiver.listen(RECEIVER_PORT, '127.0.0.1', r));

// --- raw JSON-RPC over Streamable HTTP, to one chosen node
async function rpc(base, token, sessionId, method, params, id = 1) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${token}`, 'MCP-Protocol-Version': '2025-11-25' };
  if (sessionId) headers['Mcp-Session-Id'] = sessionId;
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  const text = await res.text();
  let json; try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, json, text, session: res.headers.get('mcp-session-id') };
}
async function openSession(base, token) {
  const r = await rpc(base, token, null, 'initialize', { protocolVersion: '2025-11-25', capabilities: {},
    clientInfo: { name: 'multinode', version: '1' } });
  if (r.status !== 200 || !r.session) throw new Error(`initialize on ${base}: ${r.status} ${r.text}`);
  await fetch(`${base}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}`,
    'MCP-Protocol-Version': '2025-11-25', 'Mcp-Session-Id': r.session },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  return r.session;
}
function toolResult(r) {
  const result = r.json?.result;
  if (!result) return { error: r.json?.error ?? r.text, isError: true };
  const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  // Errors carry their JSON only in the text, as line 3 of its untrusted-data block.
  let data; try { data = result.structuredContent ?? JSON.parse(text.split('\n')[2]); } catch { data = text; }
  return { isError: !!result.isError, data };
}
const tool = async (base, token, sid, name, args) =>
  toolResult(await rpc(base, token, sid, 'tools/call', { name, arguments: args }));
const psql = (sql) => execFileSync('psql', [DATABASE_URL, '-Atqc', sql]).toString().trim();

// 1. The SDK client through the balancer.
const session = await checks.step('SDK OAuth flow through the load balancer', () =>
  connectWithOAuth(`${LB}/mcp`, { email: process.env.E2E_EMAIL, password: process.env.E2E_PASSWORD,
    verbose: !!process.env.E2E_VERBOSE }));
if (!session) { checks.done(); process.exit(); }
const { client, provider } = session;
const token = provider.tokens().access_token;
await checks.step('SDK tools/list and tool calls through the balancer', async () => {
  const tools = await client.listTools();
  checks.equal(tools.tools.length, 48, 'tools/list through the balancer lists the 48 tools');
  // Several calls on one SDK session: round robin sends them to both nodes.
  for (let i = 0; i < 6; i++) {
    const c = await call(client, 'create_contact', { email: `sdk${i}@multinode.example` });
    checks.ok(Number.isInteger(c.contact?.id ?? c.id), `create_contact #${i} through the balancer`, c);
  }
  const listed = await call(client, 'list_contacts', { limit: 50 });
  checks.ok(JSON.stringify(listed).includes('sdk5@multinode.example'), 'list_contacts sees the SDK writes', listed);
});

// 2. Sessions and confirmations across nodes.
await checks.step('an MCP session opened on node A serves on node B', async () => {
  const sid = await openSession(A, token);
  const onA = await rpc(A, token, sid, 'tools/list', {});
  checks.equal(onA.status, 200, 'tools/list on A, which opened the session');
  const r = await rpc(B, token, sid, 'tools/list', {});
  checks.equal(r.status, 200, 'tools/list on B with A\'s session id');
  checks.ok(Array.isArray(r.json?.result?.tools), 'B answered the session', r.text.slice(0, 200));
  const del = await fetch(`${B}/mcp`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}`,
    'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' } });
  checks.equal(del.status, 204, 'DELETE of the session on B');
  // No wait: A served the session a moment ago, and still answers 404 at once.
  const after = await rpc(A, token, sid, 'tools/list', {});
  checks.equal(after.status, 404, 'the session ended on B is gone on A at once');
  const again = await rpc(B, token, sid, 'tools/list', {});
  checks.equal(again.status, 404, 'and on B');
});

const sidA = await openSession(A, token);
const sidB = await openSession(B, token);
async function previewDelete(email) {
  const made = await tool(A, token, sidA, 'create_contact', { email });
  const id = made.data?.contact?.id ?? made.data?.id;
  const preview = await tool(A, token, sidA, 'delete_contacts', { ids: [id] });
  const tokenField = JSON.stringify(preview.data).match(/"confirmation_token":"([^"]+)"/);
  return { id, preview, confirmation: tokenField?.[1] };
}
await checks.step('a deletion previewed on node A is confirmed on node B', async () => {
  const { id, preview, confirmation } = await previewDelete('cross-node@multinode.example');
  checks.ok(!!confirmation, 'preview on A gave a confirmation token', preview);
  const confirmed = await tool(B, token, sidB, 'confirm_action', { confirmation_token: confirmation });
  checks.ok(!confirmed.isError, 'confirm_action on B succeeded', confirmed);
  const gone = await tool(A, token, sidA, 'get_contact', { id });
  checks.ok(gone.isError && JSON.stringify(gone.data).includes('not_found'), 'the contact is gone on A', gone);
});
await checks.step('two concurrent confirms, one per node: exactly one succeeds', async () => {
  for (let round = 0; round < 3; round++) {
    const { confirmation } = await previewDelete(`race${round}@multinode.example`);
    const [x, y] = await Promise.all([
      tool(A, token, sidA, 'confirm_action', { confirmation_token: confirmation }),
      tool(B, token, sidB, 'confirm_action', { confirmation_token: confirmation })]);
    checks.equal([x, y].filter((r) => !r.isError).length, 1, `round ${round}: exactly one confirm succeeded`);
  }
});

// 2b. Human approval across nodes (TOOLS.md "Confirmation" 5, rule 2 first): the operator
// turns the default policy on for this step; a preview made on A and made stale on B is
// stale_preview with a fresh preview and approval page, whether or not the person already
// tried to approve it (through the balancer); the fresh one, approved, is done on B.
const crmctl = (...args) =>
  execFileSync(process.env.CRMCTL, [`--database_url=${DATABASE_URL}`, ...args]).toString();
const person = { email: process.env.E2E_EMAIL, password: process.env.E2E_PASSWORD };
await checks.step('a preview made stale on the other node under approval is stale_preview', async () => {
  crmctl('settings', 'approval-policy', 'reset');
  try {
    for (const pageFirst of [false, true]) {
      const what = pageFirst ? 'after the page refused' : 'before any approval';
      const made = await tool(A, token, sidA, 'create_contact', { email: `stale-${pageFirst}@multinode.example` });
      const id = made.data?.contact?.id;
      const preview = await tool(A, token, sidA, 'delete_contacts', { ids: [id] });
      checks.equal(preview.data?.approval_required, true, `${what}: the preview on A needs the person`);
      const got = await tool(B, token, sidB, 'get_contact', { id });
      const edited = await tool(B, token, sidB, 'update_contact',
        { id, expected_revision: got.data?.contact?.revision, first_name: 'Edited on B' });
      checks.ok(!edited.isError, `${what}: the contact edited on B`, edited);
      if (pageFirst) {
        const refused = await approveInBrowser(preview.data.approval_url, person)
          .then((p) => p.status, (e) => Number(/HTTP (\d{3})/.exec(e.message)?.[1] ?? 0));
        checks.equal(refused, 409, `${what}: the approval page refuses the stale preview`);
      }
      const stale = await tool(A, token, sidA, 'confirm_action',
        { confirmation_token: preview.data?.confirmation_token });
      checks.equal(stale.data?.error?.code, 'stale_preview', `${what}: confirm on A answers stale_preview`);
      const fresh = stale.data?.error?.details ?? {};
      checks.ok(fresh.confirmation_token && fresh.approval_url && fresh.approval_url !== preview.data.approval_url,
        `${what}: with a fresh token and approval page`, fresh);
      const approved = await approveInBrowser(fresh.approval_url, person);
      checks.ok(approved.status === 200 && /Approved/.test(approved.text), `${what}: the person approves the fresh preview`, approved.status);
      const done = await tool(B, token, sidB, 'confirm_action', { confirmation_token: fresh.confirmation_token });
      checks.equal(done.data?.status, 'done', `${what}: confirm on B performs it`);
    }
  } finally {
    crmctl('settings', 'approval-policy', 'set', '{"require_person":[]}');
  }
});

// 3. Revocation seen by the other node, on a second client's token (the first one carries
// on with the load below).
await checks.step('a token revoked on node A is refused on node B within the bound', async () => {
  const second = await connectWithOAuth(`${LB}/mcp`, { email: process.env.E2E_EMAIL,
    password: process.env.E2E_PASSWORD, name: 'multinode-revoke' });
  const token = second.provider.tokens().access_token;
  const sidA = await openSession(A, token);
  const sidB = await openSession(B, token);
  const before = await rpc(A, token, sidA, 'tools/list', {});
  checks.equal(before.status, 200, 'token works before revocation');
  const clientId = second.provider.clientInformation().client_id;
  const rev = await fetch(`${A}/oauth/revoke`, { method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token', client_id: clientId }) });
  checks.equal(rev.status, 200, 'revocation on A answered 200');
  const t0 = Date.now();
  let refusedAfter = -1;
  while (Date.now() - t0 < 8000) {
    const r = await rpc(B, token, sidB, 'tools/list', {});
    if (r.status === 401) { refusedAfter = Date.now() - t0; break; }
    await sleep(100);
  }
  checks.ok(refusedAfter >= 0 && refusedAfter <= REVOCATION_BOUND_MS,
    `node B refuses the revoked token within ${REVOCATION_BOUND_MS} ms (took ${refusedAfter} ms)`);
  const stillA = await rpc(A, token, sidA, 'tools/list', {});
  checks.equal(stillA.status, 401, 'node A refuses it too');
  await second.client.close().catch(() => {});
});

// A grant revoked outside both nodes (crmctl on the database): neither node was told, each
// finds it in its next read of the revoked set.
await checks.step('a grant revoked by crmctl is refused on both nodes within the bound', async () => {
  const third = await connectWithOAuth(`${LB}/mcp`, { email: process.env.E2E_EMAIL,
    password: process.env.E2E_PASSWORD, name: 'multinode-grant' });
  const token = third.provider.tokens().access_token;
  const clientId = third.provider.clientInformation().client_id;
  const sids = { A: await openSession(A, token), B: await openSession(B, token) };
  for (const [name, base] of [['A', A], ['B', B]]) {
    const r = await rpc(base, token, sids[name], 'tools/list', {});
    checks.equal(r.status, 200, `the grant's token works on ${name} before revocation`);
  }
  const grant = crmctl('grant', 'list', '--client', clientId).split('\n')
    .map((line) => line.split('\t')).find((f) => f[1] === clientId && f[5] === 'active');
  checks.ok(grant, 'crmctl grant list shows the active grant', clientId);
  if (!grant) return;
  crmctl('grant', 'revoke', grant[0]);
  const t0 = Date.now();
  const refused = { A: -1, B: -1 };
  while (Date.now() - t0 < 8000 && (refused.A < 0 || refused.B < 0)) {
    for (const [name, base] of [['A', A], ['B', B]]) {
      if (refused[name] >= 0) continue;
      const r = await rpc(base, token, sids[name], 'tools/list', {});
      if (r.status === 401) refused[name] = Date.now() - t0;
    }
    await sleep(100);
  }
  for (const name of ['A', 'B'])
    checks.ok(refused[name] >= 0 && refused[name] <= REVOCATION_BOUND_MS,
      `node ${name} refuses the revoked grant's token within ${REVOCATION_BOUND_MS} ms (took ${refused[name]} ms)`);
  await third.client.close().catch(() => {});
});


// 3b. One campaign sent by both nodes from one queue (PostgreSQL, SKIP LOCKED leases):
// every recipient gets exactly one message, and both nodes did part of the sending.
await checks.step('a 300-recipient campaign is sent by both nodes, once per recipient', async () => {
  const sid = await openSession(LB, token);
  const list = await tool(LB, token, sid, 'create_list', { name: 'Multinode news' });
  const listId = list.data?.list?.id;
  checks.ok(Number.isInteger(listId), 'list created', list);
  const items = Array.from({ length: 300 }, (_, i) => ({
    email: `mail${i}@multinode.example`, first_name: `M${i}`, status: 'subscribed', lists: [listId] }));
  const bulk = await tool(LB, token, sid, 'upsert_contacts_bulk', { contacts: items });
  checks.ok(!bulk.isError, 'contacts imported', bulk.isError ? bulk : '');
  const made = await tool(LB, token, sid, 'create_campaign', {
    name: 'Multinode', subject: 'Hello {{first_name}}', from_email: 'news@example.com',
    text_body: 'Hi {{first_name}}. Unsubscribe: {{unsubscribe_url}}', audience: { lists: [listId] } });
  const id = made.data?.campaign?.id;
  const preview = await tool(LB, token, sid, 'activate_campaign', { id });
  checks.equal(preview.data?.preview?.audience_size, 300, 'the preview counts 300 recipients');
  const done = await tool(LB, token, sid, 'confirm_action', { confirmation_token: preview.data?.confirmation_token });
  checks.ok(!done.isError, 'activation confirmed', done);
  let status = '';
  for (let i = 0; i < 120 && status !== 'sent'; i++) {
    await sleep(500);
    status = psql(`SELECT status FROM campaigns WHERE id = ${Number(id)}`);
  }
  checks.equal(status, 'sent', 'the campaign is sent');
  const perRecipient = new Map();
  const helos = new Map();
  for (const f of readdirSync(process.env.MAIL_DIR).filter((n) => n.endsWith('.json'))) {
    const meta = JSON.parse(readFileSync(`${process.env.MAIL_DIR}/${f}`, 'utf8'));
    for (const r of meta.rcpt_tos) if (r.startsWith('mail')) perRecipient.set(r, (perRecipient.get(r) ?? 0) + 1);
    helos.set(meta.helo, (helos.get(meta.helo) ?? 0) + 1);
  }
  checks.equal(perRecipient.size, 300, 'all 300 recipients got the message');
  checks.equal([...perRecipient.values()].filter((n) => n !== 1).length, 0, 'nobody got it twice');
  checks.ok((helos.get('node-a') ?? 0) > 0 && (helos.get('node-b') ?? 0) > 0, 'both nodes sent part of it', Object.fromEntries(helos));
  log(`messages per node: ${JSON.stringify(Object.fromEntries(helos))}`);
});

// 4b. The standby (database_read_url): the dashboard is read there, a tool that follows a
// write reads the primary, and a standby that is gone moves reads to the primary.
const psqlOn = (url, sql) => execFileSync('psql', [url, '-qAtc', sql]).toString().trim();
// What get_dashboard's contacts.total sums, read on the primary.
const primaryTotal = () => Number(psql("SELECT COALESCE(SUM(n), 0) FROM contact_totals WHERE dim = 'status'"));
const dashboardTotal = async () => (await call(client, 'get_dashboard', {})).contacts.total;
async function waitForTotal(want, ms) {
  const t0 = Date.now();
  let total = await dashboardTotal();
  while (total !== want && Date.now() - t0 < ms) { await sleep(100); total = await dashboardTotal(); }
  return total;
}
await checks.step('reads that tolerate lag come from the standby, the rest from the primary', async () => {
  const before = primaryTotal();
  checks.equal(await waitForTotal(before, 10_000), before, 'the dashboard counts what the primary holds once the standby caught up');
  psqlOn(process.env.STANDBY_URL, 'SELECT pg_wal_replay_pause()');
  try {
    const made = await call(client, 'create_contact', { email: 'standby@multinode.example' });
    const id = made.contact?.id ?? made.id;
    const got = await call(client, 'get_contact', { id });
    checks.equal(got.contact?.email ?? got.email, 'standby@multinode.example', 'get_contact after create_contact reads the primary');
    await sleep(300);
    checks.equal(await dashboardTotal(), before, 'the dashboard, read on the paused standby, does not count it yet');
  } finally {
    psqlOn(process.env.STANDBY_URL, 'SELECT pg_wal_replay_resume()');
  }
  checks.equal(await waitForTotal(before + 1, 10_000), before + 1, 'once replay resumes, the dashboard counts it');
});
await checks.step('a standby that is gone: reads move to the primary, counted in /metrics', async () => {
  execFileSync(process.env.PG_SH, ['stop', process.env.STANDBY_DIR]);
  const want = primaryTotal();
  for (let i = 0; i < 4; i++)  // both nodes, through the balancer
    checks.equal(await dashboardTotal(), want, `get_dashboard answers from the primary (${i + 1})`);
  let fallbacks = 0;
  for (const base of [A, B]) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const m = text.match(/^crmd_db_read_replica_fallbacks_total(?:\{[^}]*\})? (\d+)/m);
    fallbacks += m ? Number(m[1]) : 0;
  }
  checks.ok(fallbacks >= 4, `crmd_db_read_replica_fallbacks_total counts the moved reads (${fallbacks})`);
});

// 4. 1,000 creations over both nodes, node B killed in the middle.
const N = 1000;
const acknowledged = new Map();  // email -> contact id
let killedAt = -1;
await checks.step(`${N} contact creations over both nodes, SIGKILL of node B in the middle`, async () => {
  const sidLB = await openSession(LB, token);
  let next = 0, started = 0;
  async function worker() {
    while (next < N) {
      const i = next++;
      started++;
      if (started === Math.floor(N * 0.4) && killedAt < 0) {
        killedAt = i;
        process.kill(PID_B, 'SIGKILL');
        log(`killed node B (pid ${PID_B}) at request ${i}`);
      }
      const email = `load${i}@multinode.example`;
      // A request that failed without an answer is retried with the same idempotency key,
      // as an assistant would: it takes effect once.
      for (let attempt = 0; attempt < 20; attempt++) {
        let r;
        try {
          r = await tool(LB, token, sidLB, 'create_contact', { email, idempotency_key: `load-${i}` });
        } catch (e) { r = { isError: true, data: String(e) }; }
        const id = r.data?.contact?.id ?? r.data?.id;
        if (!r.isError && Number.isInteger(id)) { acknowledged.set(email, id); break; }
        await sleep(100);
      }
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker));
  checks.equal(acknowledged.size, N, `all ${N} creations acknowledged (retried through the balancer)`);
  checks.ok(killedAt > 0, 'node B was killed during the load', killedAt);
  const ids = [...acknowledged.values()];
  checks.equal(new Set(ids).size, N, 'every acknowledged creation has its own contact id');
  const inDb = Number(psql(`SELECT COUNT(*) FROM contacts WHERE email LIKE 'load%@multinode.example'`));
  checks.equal(inDb, N, `exactly ${N} load contacts in the database (no acknowledged write lost, none doubled)`);
  const events = Number(psql(`SELECT COUNT(*) FROM outbox_events WHERE event_type = 'contact.created' AND data LIKE '%@multinode.example%' AND data LIKE '%"load%'`));
  checks.equal(events, N, `exactly ${N} contact.created outbox events for them`);
});

await checks.step('the surviving node delivers every event to the webhook receiver', async () => {
  const want = new Set([...acknowledged.keys()]);
  const deadline = Date.now() + 90_000;
  let got = new Map();
  while (Date.now() < deadline) {
    got = new Map();
    for (const d of deliveries) {
      let b; try { b = JSON.parse(d.body); } catch { continue; }
      if (b.type !== 'contact.created') continue;
      const email = b.data?.email ?? b.data?.contact?.email;
      if (want.has(email)) got.set(email, (got.get(email) ?? new Set()).add(d.id));
    }
    if (got.size === want.size) break;
    await sleep(500);
  }
  checks.equal(got.size, want.size, `all ${want.size} contact.created events delivered`);
  const multiIds = [...got.values()].filter((s) => s.size !== 1).length;
  checks.equal(multiIds, 0, 'each event arrived under exactly one webhook-id (duplicates reuse it)');
  const byId = new Map();
  let mismatched = 0;
  for (const d of deliveries) {
    if (byId.has(d.id) && byId.get(d.id) !== d.body) mismatched++;
    byId.set(d.id, d.body);
  }
  checks.equal(mismatched, 0, 'a redelivery carries the same body as the first delivery');
  log(`deliveries received: ${deliveries.length}, distinct webhook-ids: ${byId.size}`);
});

receiver.close();
await client.close().catch(() => {});
checks.done();
process.exit();
