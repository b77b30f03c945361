#!/usr/bin/env node
// A small reverse proxy in front of crmd's /mcp that adds `Authorization: Bearer <token>`
// to every request, so test suites that know no OAuth (the conformance `server`
// scenarios) can talk to the protected endpoint. The token comes from E2E_TOKEN or from
// running the SDK OAuth flow once (lib/oauth.mjs).
//
// Usage: node proxy.mjs <crmd mcp url> ; prints "PROXY_URL http://127.0.0.1:<port>/mcp".
// Everything else passes through unchanged and streamed (SSE included). A Host or Origin
// naming the proxy itself is rewritten to name crmd, as a transparent reverse proxy
// would; any other Host/Origin (e.g. the DNS rebinding probe's evil.example.com) is
// forwarded as it came, so crmd's own Host/Origin checks are what gets tested.
import http from 'node:http';
import { connectWithOAuth, log } from './lib/oauth.mjs';

const target = new URL(process.argv[2] ?? '');
const listenPort = Number(process.env.E2E_PROXY_PORT ?? 0);

let token = process.env.E2E_TOKEN;
if (!token) {
  const { client, provider } = await connectWithOAuth(target.toString(), {
    email: process.env.E2E_EMAIL ?? 'e2e@example.com',
    password: process.env.E2E_PASSWORD ?? 'password',
    name: 'crmd-e2e-proxy',
  });
  token = provider.tokens().access_token;
  await client.close();
}

const server = http.createServer((req, res) => {
  const self = `127.0.0.1:${server.address().port}`;
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  if (headers.host === self || headers.host === `localhost:${server.address().port}`) headers.host = target.host;
  if (headers.origin === `http://${self}`) headers.origin = target.origin;
  const upstream = http.request({
    host: target.hostname,
    port: target.port,
    method: req.method,
    path: req.url,
    headers,
  }, (ures) => {
    res.writeHead(ures.statusCode, ures.statusMessage, ures.rawHeaders);
    ures.pipe(res);
  });
  upstream.on('error', (e) => {
    log('proxy upstream error:', e.message);
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});

server.listen(listenPort, '127.0.0.1', () => {
  console.log(`PROXY_URL http://127.0.0.1:${server.address().port}${target.pathname}`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => { server.close(); process.exit(0); });
