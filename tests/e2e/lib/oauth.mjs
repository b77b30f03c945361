// Connects the official MCP TypeScript SDK client to crmd over OAuth: the SDK does its
// own discovery (401 -> WWW-Authenticate resource_metadata -> protected resource
// metadata -> authorization server metadata), dynamic client registration and PKCE;
// this provider only stores what the SDK hands it and plays the browser.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { authorizeInBrowser } from './browser.mjs';

export function log(...args) {
  console.log(`[${new Date().toISOString().slice(11, 23)}]`, ...args);
}

export class BrowserOAuthProvider {
  constructor({ email, password, redirectUrl = 'http://127.0.0.1:53682/callback', verbose = false }) {
    this.email = email;
    this.password = password;
    this._redirectUrl = redirectUrl;
    this.verbose = verbose;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._state = undefined;
    this.callbackUrl = undefined; // where the server sent the "browser" in the end
    this.authorizationUrl = undefined;
  }

  get redirectUrl() { return this._redirectUrl; }

  get clientMetadata() {
    return {
      client_name: 'crmd e2e (MCP TypeScript SDK)',
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this._state = randomBytes(16).toString('base64url');
    return this._state;
  }

  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() {
    if (!this._verifier) throw new Error('no code verifier saved');
    return this._verifier;
  }

  async redirectToAuthorization(url) {
    this.authorizationUrl = new URL(url);
    log('authorization request:', url.toString());
    this.callbackUrl = await authorizeInBrowser(url, {
      email: this.email,
      password: this.password,
      redirectUri: this._redirectUrl,
      log: this.verbose ? (m) => log('  browser:', m) : () => {},
    });
    log('redirected to client:', this.callbackUrl.replace(/code=[^&]+/, 'code=<redacted>'));
  }

  // Checks the authorization response (RFC 6749 4.1.2, RFC 9207) and returns the code.
  codeFromCallback({ issuer } = {}) {
    if (!this.callbackUrl) throw new Error('the browser never reached the redirect_uri');
    const cb = new URL(this.callbackUrl);
    if (cb.searchParams.has('error')) {
      throw new Error(`authorization error: ${cb.searchParams.get('error')} ${cb.searchParams.get('error_description') ?? ''}`);
    }
    if (`${cb.origin}${cb.pathname}` !== this._redirectUrl) throw new Error(`redirected to ${cb.origin}${cb.pathname}, expected ${this._redirectUrl}`);
    if (cb.searchParams.get('state') !== this._state) throw new Error('state mismatch in the authorization response');
    const iss = cb.searchParams.get('iss');
    if (issuer && iss !== null && iss !== issuer) throw new Error(`iss ${iss} != issuer ${issuer}`);
    const code = cb.searchParams.get('code');
    if (!code) throw new Error('no code in the authorization response');
    return code;
  }
}

// Returns { client, transport, provider } with a connected, authorized client.
export async function connectWithOAuth(serverUrl, { email, password, verbose = false, fetch: fetchFn, name = 'crmd-e2e', capabilities = {} } = {}) {
  const provider = new BrowserOAuthProvider({ email, password, verbose });
  const url = new URL(serverUrl);
  const opts = { authProvider: provider, ...(fetchFn ? { fetch: fetchFn } : {}) };
  const client = new Client({ name, version: '1.0.0' }, { capabilities });

  let transport = new StreamableHTTPClientTransport(url, opts);
  try {
    await client.connect(transport);
    throw new Error('crmd accepted an MCP request without a token');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  log('unauthorized as expected; browser flow done, exchanging the code');
  const code = provider.codeFromCallback({ issuer: url.origin });
  await transport.finishAuth(code);
  const tokens = provider.tokens();
  if (!tokens?.access_token) throw new Error('no access token after finishAuth');
  log(`token: type=${tokens.token_type} scope="${tokens.scope ?? ''}" expires_in=${tokens.expires_in} refresh=${tokens.refresh_token ? 'yes' : 'no'}`);

  transport = new StreamableHTTPClientTransport(url, opts);
  await client.connect(transport);
  log('connected:', JSON.stringify(client.getServerVersion()), 'protocol', transport.protocolVersion ?? '(unknown)');
  return { client, transport, provider };
}
