#!/usr/bin/env node
// The official MCP TypeScript SDK client completes crmd's whole OAuth flow with its own
// discovery, dynamic client registration and PKCE, then lists tools and calls
// create_contact / list_contacts. Every raw server message is also checked against the
// MCP JSON Schema. Usage: node sdk-oauth.mjs http://127.0.0.1:<port>/mcp
// Env: E2E_EMAIL, E2E_PASSWORD (the user run.sh created), E2E_VERBOSE=1.
import { connectWithOAuth, log } from './lib/oauth.mjs';
import { Checks, call } from './lib/assert.mjs';
import { WireValidator } from './lib/schema.mjs';
import { approveInBrowser } from './lib/browser.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';

const serverUrl = process.argv[2] ?? process.env.E2E_MCP_URL;
if (!serverUrl) {
  console.error('usage: sdk-oauth.mjs <mcp url>');
  process.exit(2);
}
const email = process.env.E2E_EMAIL ?? 'e2e@example.com';
const password = process.env.E2E_PASSWORD ?? 'password';
const checks = new Checks('sdk-oauth');
const wire = new WireValidator();

// Before any OAuth: the challenge that starts discovery (RFC 9728 5.1, MCP authorization).
await checks.step('unauthenticated request is challenged', async () => {
  const res = await fetch(serverUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  checks.equal(res.status, 401, 'POST /mcp without a token is 401');
  const challenge = res.headers.get('www-authenticate') ?? '';
  checks.ok(/^Bearer\b/i.test(challenge), 'WWW-Authenticate uses the Bearer scheme', challenge);
  checks.ok(/resource_metadata="[^"]+"/.test(challenge), 'WWW-Authenticate names resource_metadata', challenge);
});

const session = await checks.step('SDK OAuth flow (discovery, DCR, PKCE, login, consent, token)', () =>
  connectWithOAuth(serverUrl, { email, password, verbose: !!process.env.E2E_VERBOSE, fetch: wire.recordingFetch(serverUrl) }));

if (session) {
  const { client, provider } = session;
  checks.ok(true, 'SDK client connected with the access token');
  const authUrl = provider.authorizationUrl;
  checks.equal(authUrl?.searchParams.get('code_challenge_method'), 'S256', 'authorization request used PKCE S256');
  checks.equal(authUrl?.searchParams.get('resource'), serverUrl, 'authorization request named the MCP resource (RFC 8707)');
  checks.ok(!!provider.clientInformation()?.client_id, 'client was registered dynamically', provider.clientInformation());

  await checks.step('ping', async () => {
    await client.ping();
    checks.ok(true, 'ping answered');
  });

  const tools = await checks.step('tools/list', async () => {
    const all = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  });
  if (tools) {
    log(`${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);
    const byName = new Map(tools.map((t) => [t.name, t]));
    checks.ok(tools.length > 0, 'tools/list returned tools');
    checks.ok(tools.every((t) => t.inputSchema?.type === 'object'), 'every tool has an object inputSchema');
    checks.ok(tools.every((t) => typeof t.description === 'string' && t.description.length > 20), 'every tool has a description');
    for (const name of ['create_contact', 'list_contacts']) checks.ok(byName.has(name), `tool ${name} is listed`);
    if (byName.has('list_contacts')) checks.equal(byName.get('list_contacts').annotations?.readOnlyHint, true, 'list_contacts is readOnlyHint');
    if (byName.has('delete_contacts')) checks.equal(byName.get('delete_contacts').annotations?.destructiveHint, true, 'delete_contacts is destructiveHint');

    const stamp = Date.now().toString(36);
    const contactEmail = `ada.${stamp}@example.com`;
    if (byName.has('create_contact')) {
      await checks.step('create_contact', async () => {
        const props = byName.get('create_contact').inputSchema.properties ?? {};
        const args = { email: contactEmail };
        if ('first_name' in props) args.first_name = 'Ada';
        if ('last_name' in props) args.last_name = 'Lovelace';
        const created = await call(client, 'create_contact', args);
        const text = JSON.stringify(created);
        checks.ok(text.includes(contactEmail), 'create_contact returns the new contact', created);
        const contact = created.contact ?? created;
        checks.ok(contact.id !== undefined, 'the new contact has an id', created);
      });
    }
    if (byName.has('list_contacts')) {
      await checks.step('list_contacts', async () => {
        const props = byName.get('list_contacts').inputSchema.properties ?? {};
        const args = 'query' in props ? { query: contactEmail } : {};
        const listed = await call(client, 'list_contacts', args);
        checks.ok(JSON.stringify(listed).includes(contactEmail), 'list_contacts finds the new contact', listed);
      });
    }
    if (byName.has('create_contact')) {
      // A business failure must reach the model as a tool error (isError), not as a
      // protocol failure: the SDK validates any structuredContent against outputSchema,
      // error results included.
      await checks.step('tool error through the SDK', async () => {
        const r = await client.callTool({ name: 'create_contact', arguments: { email: contactEmail } });
        checks.ok(r.isError === true, 'a duplicate create_contact comes back as isError', r);
        checks.ok(/already|exists|duplicate/i.test(JSON.stringify(r.content)), 'the error text says why', r.content);
      });
    }
    await checks.step('unknown tool', async () => {
      let err;
      try {
        const r = await client.callTool({ name: 'no_such_tool', arguments: {} });
        err = r.isError ? 'isError' : undefined;
      } catch (e) {
        err = e.message;
      }
      checks.ok(err !== undefined, 'calling an unknown tool fails', err);
    });
  }
  await client.close();
}

// A 2025-11-25 client that declares URL-mode elicitation (capabilities.elicitation.url):
// under the default approval policy confirm_action answers URLElicitationRequiredError
// (-32042) naming the approval page; the person approves there, and the retry completes.
if (session) await checks.step('URL elicitation required at 2025-11-25: the person approves, the retry completes', async () => {
  const client = new Client({ name: 'crmd-e2e-url-elicitation', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl),
    { authProvider: session.provider, fetch: wire.recordingFetch(serverUrl) }));
  const created = await call(client, 'create_contact', { email: `url-elicit.${Date.now().toString(36)}@example.com` });
  const id = created?.contact?.id;
  checks.ok(Number.isInteger(id), 'a contact to delete', created);
  const preview = await call(client, 'delete_contacts', { ids: [id] });
  checks.equal(preview?.approval_required, true, 'the default policy needs the person');
  let thrown;
  try {
    await client.callTool({ name: 'confirm_action', arguments: { confirmation_token: preview.confirmation_token } });
  } catch (e) {
    thrown = e;
  }
  checks.ok(thrown instanceof UrlElicitationRequiredError, 'the SDK raises UrlElicitationRequiredError', String(thrown));
  const elicitation = thrown?.elicitations?.[0];
  checks.equal(elicitation?.mode, 'url', 'a URL-mode elicitation');
  checks.equal(elicitation?.url, preview.approval_url, 'it names the approval page');
  checks.ok(typeof elicitation?.elicitationId === 'string' && elicitation.elicitationId.length > 0, 'with an elicitationId');
  const page = await approveInBrowser(elicitation?.url ?? preview.approval_url,
    { email, password, log: process.env.E2E_VERBOSE ? log : () => {} });
  checks.ok(page.status === 200 && /Approved/.test(page.text), 'the person approved on the page', page.status);
  const done = await call(client, 'confirm_action', { confirmation_token: preview.confirmation_token });
  checks.equal(done?.status, 'done', 'the retried confirm_action performed the deletion');
  await client.close();
});

const wireResult = await wire.finish();
if (!wireResult.available) {
  log(`NOTE: ${'tests/data/mcp/2025-11-25.schema.json'} missing: raw messages not schema-checked`);
} else {
  log('raw results schema-checked:', JSON.stringify(wireResult.counts));
  checks.ok(wireResult.errors.length === 0, 'every raw server message validates against the MCP 2025-11-25 JSON Schema', wireResult.errors.join('\n'));
  checks.ok((wireResult.counts.InitializeResult ?? 0) > 0, 'the initialize result was schema-checked');
  checks.ok((wireResult.counts.ListToolsResult ?? 0) > 0 || !session, 'the tools/list result was schema-checked');
}
checks.done();
