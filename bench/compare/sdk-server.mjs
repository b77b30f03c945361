// The MCP TypeScript SDK's peer of crmd's `tools/call get_contact`, for bench/compare.sh only.
//
//   node sdk-server.mjs <port>
//
// Listens on 127.0.0.1:<port>, prints one JSON line {"token": "..."} once it listens: an
// ES256 access token minted with a key generated at start. Every POST /mcp checks the bearer
// (jose jwtVerify: signature, issuer, audience, expiry; no cache of verified tokens, which
// crmd has) and is then served the way the SDK documents its stateless mode: a fresh
// McpServer and StreamableHTTPServerTransport per request (sessionIdGenerator: undefined,
// enableJsonResponse: true; the SDK refuses to reuse a stateless transport). One tool,
// get_contact, reads a contact from an in-memory Map. One Node.js process (one core).
// GET /stats answers {"tool_errors": n}: the tool calls answered with isError, which
// bench/compare.sh reads before and after a row (wrk hands no answer to Lua there).
import http from 'node:http';
import { SignJWT, generateKeyPair, jwtVerify } from 'jose';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const audience = `${issuer}/mcp`;
const { publicKey, privateKey } = await generateKeyPair('ES256');

const contacts = new Map();
let toolErrors = 0;
for (let id = 1; id <= 200; ++id) {
  contacts.set(id, {
    id, email: `load${id}@example.com`, first_name: 'Load', last_name: null, phone: null,
    status: 'subscribed', type: 'lead', source: 'mcp', revision: 1, tags: [], lists: [],
    created_at: '2026-11-25T00:00:00Z', updated_at: '2026-11-25T00:00:00Z',
  });
}

function newServer() {
  const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' });
  server.registerTool('get_contact', {
    description: 'One contact by id',
    inputSchema: { id: z.number().int().min(1) },
  }, async ({ id }) => {
    const contact = contacts.get(id);
    if (!contact) {
      toolErrors += 1;
      return { isError: true, content: [{ type: 'text', text: 'not found' }] };
    }
    return { content: [{ type: 'text', text: JSON.stringify(contact) }], structuredContent: { contact } };
  });
  return server;
}

function reply(res, status, obj, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(obj));
}

const httpServer = http.createServer(async (req, res) => {
  try {
    if (req.method === 'GET' && req.url === '/stats') return reply(res, 200, { tool_errors: toolErrors });
    if (req.method !== 'POST' || req.url !== '/mcp') return reply(res, 404, { error: 'not_found' });
    const auth = req.headers.authorization || '';
    if (!auth.startsWith('Bearer ')) {
      return reply(res, 401, { error: 'invalid_token' }, { 'WWW-Authenticate': 'Bearer' });
    }
    try {
      await jwtVerify(auth.slice(7), publicKey, { algorithms: ['ES256'], issuer, audience });
    } catch {
      return reply(res, 401, { error: 'invalid_token' }, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined, enableJsonResponse: true,
    });
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) reply(res, 500, { error: 'internal' });
  }
});
httpServer.keepAliveTimeout = 60_000;
httpServer.listen(port, '127.0.0.1', async () => {
  const token = await new SignJWT({ scope: 'contacts:read', client_id: 'bench' })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
    .setIssuer(issuer).setAudience(audience).setSubject('bench')
    .setIssuedAt().setExpirationTime('1h').sign(privateKey);
  process.stdout.write(JSON.stringify({ token }) + '\n');
});
