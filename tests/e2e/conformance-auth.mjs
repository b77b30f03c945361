#!/usr/bin/env node
// Runs the conformance suite's `authorization` command (authorization server scenarios:
// authorization-server-metadata-endpoint, authorization-code-grant) against crmd.
//
// The authorization-code-grant scenario prints an authorization URL and waits for a
// browser to come back to its callback server at http://127.0.0.1:<port>/callback. This
// driver registers a public client with that redirect URI (dynamic client registration),
// runs the suite as a child process, and when the URL appears plays the user (login +
// consent, lib/browser.mjs) and delivers the redirect to the suite's callback server.
//
// Usage: node conformance-auth.mjs <issuer> [output dir]
// Env: E2E_EMAIL, E2E_PASSWORD, E2E_CONFORMANCE (path of the conformance CLI).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { authorizeInBrowser } from './lib/browser.mjs';
import { log } from './lib/oauth.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const issuer = (process.argv[2] ?? '').replace(/\/$/, '');
const outputDir = process.argv[3] ?? mkdtempSync(path.join(os.tmpdir(), 'crmd-conformance-'));
if (!issuer) {
  console.error('usage: conformance-auth.mjs <issuer> [output dir]');
  process.exit(2);
}
const email = process.env.E2E_EMAIL ?? 'e2e@example.com';
const password = process.env.E2E_PASSWORD ?? 'password';
const cli = process.env.E2E_CONFORMANCE ?? path.join(here, 'node_modules/.bin/conformance');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const redirectUri = `http://127.0.0.1:${port}/callback`;

// The registration endpoint comes from the server's own metadata (RFC 8414 3).
const metaRes = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
if (!metaRes.ok) throw new Error(`metadata: HTTP ${metaRes.status}`);
const meta = await metaRes.json();
const regRes = await fetch(meta.registration_endpoint, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
  body: JSON.stringify({
    client_name: 'crmd e2e (conformance authorization)',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    // The suite's authorization request carries no scope; an AS may then fall back to
    // the client's registered scope (RFC 6749 3.3, RFC 7591 2).
    ...(Array.isArray(meta.scopes_supported) ? { scope: meta.scopes_supported.join(' ') } : {}),
  }),
});
const reg = await regRes.json().catch(() => ({}));
if (regRes.status !== 201 || !reg.client_id) throw new Error(`registration: HTTP ${regRes.status} ${JSON.stringify(reg)}`);
log(`registered client ${reg.client_id} with redirect ${redirectUri}`);

const args = ['authorization', '--url', issuer, '--client-id', reg.client_id,
  '--resource', `${issuer}/mcp`, '--port', String(port)];
args.push('--output-dir', outputDir);
log('running:', path.basename(cli), args.join(' '));
const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'inherit'] });

let buffer = '';
let browsed = false;
let browserError;
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buffer += chunk.toString();
  if (browsed) return;
  // The suite prints the URL on its own line after "Access the following URL ...".
  const m = buffer.match(/Access the following URL[^\n]*\n(\S+)\n/);
  if (!m) return;
  browsed = true;
  (async () => {
    const back = await authorizeInBrowser(m[1], { email, password, redirectUri });
    log('browser reached', back.replace(/code=[^&]+/, 'code=<redacted>'));
    // Deliver the authorization response to the suite's callback server (it may still
    // be binding its port: retry briefly).
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(back);
        await res.text();
        break;
      } catch (e) {
        if (attempt >= 20) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  })().catch((e) => {
    browserError = e;
    log('browser failed:', e.message);
    child.kill('SIGTERM');
  });
});

const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
if (!browsed) log('the suite never printed an authorization URL');
// The summary only counts; print every check that did not pass, with its reason.
for (const dir of existsSync(outputDir) ? readdirSync(outputDir) : []) {
  const file = path.join(outputDir, dir, 'checks.json');
  if (!existsSync(file)) continue;
  for (const c of JSON.parse(readFileSync(file, 'utf8'))) {
    if (c.status !== 'SUCCESS') log(`${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
  }
}
if (browserError) process.exit(1);
process.exit(code);
