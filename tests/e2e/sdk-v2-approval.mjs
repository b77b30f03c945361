#!/usr/bin/env node
// The v2 TypeScript SDK client (@modelcontextprotocol/client) pinned to MCP 2026-07-28,
// authorised through OAuth (the same discovery, registration, PKCE and "browser" as
// sdk-oauth.mjs), deleting a contact under crmd's default approval policy: confirm_action
// answers an input_required result whose URL-mode elicitation sends the person to the
// approval page; the client's elicitation handler plays the person (signs in on the
// console and presses Approve) and the SDK retries the call, which then completes.
// Usage: node sdk-v2-approval.mjs http://127.0.0.1:<port>/mcp  (env as sdk-oauth.mjs)
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { BrowserOAuthProvider, log } from './lib/oauth.mjs';
import { approveInBrowser } from './lib/browser.mjs';
import { Checks } from './lib/assert.mjs';
import { WireValidator, schemaPathFor } from './lib/schema.mjs';

const serverUrl = process.argv[2] ?? process.env.E2E_MCP_URL;
if (!serverUrl) {
  console.error('usage: sdk-v2-approval.mjs <mcp url>');
  process.exit(2);
}
const checks = new Checks('sdk-v2-approval');
const email = process.env.E2E_EMAIL ?? 'e2e@example.com';
const password = process.env.E2E_PASSWORD ?? 'password';
const verbose = !!process.env.E2E_VERBOSE;
const url = new URL(serverUrl);
// Every message crmd sends is checked against the 2026-07-28 schema, apart from the SDK.
const wire = new WireValidator(schemaPathFor('2026-07-28'));

const elicitations = [];
function newClient() {
  const client = new Client({ name: 'crmd-e2e-v2', version: '1.0.0' }, {
    capabilities: { elicitation: { url: {} } },
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  });
  // The person: opens the URL crmd sent, signs in with their own account, approves.
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params ?? {};
    elicitations.push(params);
    if (params.mode !== 'url') return { action: 'decline' };
    const page = await approveInBrowser(params.url, { email, password, log: verbose ? log : () => {} });
    checks.ok(page.status === 200 && /Approved/.test(page.text), 'the person approved on the page', page.status);
    return { action: 'accept' };
  });
  return client;
}

const provider = new BrowserOAuthProvider({ email, password, verbose });
let client = newClient();
const connected = await checks.step('connect at 2026-07-28 over OAuth', async () => {
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: wire.recordingFetch(serverUrl) });
  try {
    await client.connect(transport);
    await client.listTools();
    throw new Error('crmd accepted an MCP request without a token');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  provider.codeFromCallback({ issuer: url.origin });  // checks state, error and iss first
  // v2 takes the whole callback and checks iss itself (RFC 9207).
  await transport.finishAuth(new URL(provider.callbackUrl).searchParams);
  checks.ok(!!provider.tokens()?.access_token, 'an access token after the OAuth flow');
  client = newClient();
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: wire.recordingFetch(serverUrl) });
  await client.connect(transport);
  return true;
});

if (connected) await checks.step('delete a contact: the person approves through URL elicitation', async () => {
  const tools = (await client.listTools()).tools;
  checks.ok(tools.some((t) => t.name === 'confirm_action'), 'tools/list at 2026-07-28 lists confirm_action');
  const stamp = Date.now().toString(36);
  const created = await client.callTool({ name: 'create_contact', arguments: { email: `v2.${stamp}@example.com` } });
  const id = created.structuredContent?.contact?.id;
  checks.ok(Number.isInteger(id), 'create_contact at 2026-07-28', created);
  const preview = (await client.callTool({ name: 'delete_contacts', arguments: { ids: [id] } })).structuredContent;
  checks.equal(preview?.status, 'confirmation_required', 'the preview changes nothing');
  checks.equal(preview?.approval_required, true, 'the default policy needs the person');
  const done = await client.callTool({ name: 'confirm_action', arguments: { confirmation_token: preview.confirmation_token } });
  checks.ok(!done.isError, 'confirm_action completes after the approval', done);
  checks.equal(done.structuredContent?.status, 'done', 'the action was performed');
  checks.ok(elicitations.length >= 1 && elicitations[0].mode === 'url', 'crmd asked through a URL-mode elicitation', elicitations);
  checks.equal(elicitations[0]?.url, preview.approval_url, 'the elicitation carries the approval URL');
  const gone = await client.callTool({ name: 'get_contact', arguments: { id } });
  checks.ok(gone.isError && /not_found/.test(JSON.stringify(gone.content)), 'the contact is gone', gone);
});

await client.close?.();
const wireResult = await wire.finish();
checks.ok(wireResult.available, 'tests/data/mcp/2026-07-28.schema.json is there');
log('raw results schema-checked at 2026-07-28:', JSON.stringify(wireResult.counts));
checks.ok(wireResult.errors.length === 0, 'every raw server message validates against the MCP 2026-07-28 JSON Schema',
  wireResult.errors.join('\n'));
if (connected) {
  checks.ok((wireResult.counts.ListToolsResult ?? 0) > 0, 'a tools/list result was schema-checked', wireResult.counts);
  checks.ok((wireResult.counts.CallToolResult ?? 0) >= 4, 'the tools/call results were schema-checked', wireResult.counts);
  checks.ok((wireResult.counts.InputRequiredResult ?? 0) >= 1, 'the input_required result was schema-checked', wireResult.counts);
}
checks.done();
