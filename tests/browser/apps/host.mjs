// The host side of crmd's MCP Apps views in a page (bundled by esbuild for the browser):
// the official MCP client (@modelcontextprotocol/client) connects to crmd over OAuth, and
// the official AppBridge (@modelcontextprotocol/ext-apps) renders a tool's view in a
// sandboxed iframe and hands it the tool's input and result. What the view asks of the
// host (tools/call, ui/open-link) goes through this client, under its token.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';

// Holds what the SDK hands it; the browser part of the flow is the test's (it signs in on
// crmd's pages and brings the code back through finishAuth).
class PageOAuthProvider {
  constructor({ clientId, redirectUrl, scope }) {
    this.info = { client_id: clientId };
    this._redirectUrl = redirectUrl;
    this.scope = scope;
    this._tokens = undefined;
    this._verifier = undefined;
    this.authorizationUrl = null;
  }
  get redirectUrl() { return this._redirectUrl; }
  get clientMetadata() {
    return { client_name: 'crmd apps host', redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code'], response_types: ['code'],
      token_endpoint_auth_method: 'none', scope: this.scope };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this._tokens; }
  saveTokens(t) { this._tokens = t; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  redirectToAuthorization(url) { this.authorizationUrl = url.href; }
  saveDiscoveryState(state) { this._discovery = state; }
  discoveryState() { return this._discovery; }
}

// The CSP a host derives from the view's _meta.ui.csp (SEP-1865 "Security"): nothing but
// the listed origins, and the view's own inline script and style.
function hostCsp(csp = {}) {
  const list = (xs) => (xs && xs.length ? xs.join(' ') : "'none'");
  const res = csp.resourceDomains && csp.resourceDomains.length ? ` ${csp.resourceDomains.join(' ')}` : '';
  return [`default-src 'none'`, `script-src 'unsafe-inline'${res}`, `style-src 'unsafe-inline'${res}`,
    `img-src data:${res}`, `font-src${res || " 'none'"}`, `connect-src ${list(csp.connectDomains)}`,
    `frame-src ${list(csp.frameDomains)}`, `base-uri ${list(csp.baseUriDomains)}`].join('; ');
}

export class Host {
  constructor({ mcpUrl, clientId, redirectUrl, scope, version }) {
    this.url = new URL(mcpUrl);
    this.version = version;
    this.provider = new PageOAuthProvider({ clientId, redirectUrl, scope });
    this.openedLinks = [];
    this.viewCalls = [];
    this.sizes = [];
  }

  newClient() {
    const options = { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } };
    if (this.version === '2026-07-28') options.versionNegotiation = { mode: { pin: '2026-07-28' } };
    return new Client({ name: 'crmd-apps-host', version: '1.0.0' }, options);
  }

  // First call: the SDK discovers crmd's authorization server and wants the person;
  // answers the authorization URL for the test's browser.
  async connect() {
    this.client = this.newClient();
    this.transport = new StreamableHTTPClientTransport(this.url, { authProvider: this.provider });
    try {
      await this.client.connect(this.transport);
      return { connected: true };
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      return { connected: false, authorizationUrl: this.provider.authorizationUrl };
    }
  }

  async finishAuth(callbackUrl) {
    const params = new URL(callbackUrl).searchParams;
    await this.transport.finishAuth(params);  // v2 takes the callback and checks iss (RFC 9207)
    this.client = this.newClient();
    this.transport = new StreamableHTTPClientTransport(this.url, { authProvider: this.provider });
    await this.client.connect(this.transport);
    this.tools = (await this.client.listTools()).tools;
    return { capabilities: this.client.getServerCapabilities(), tools: this.tools.length };
  }

  async call(name, args) {
    return this.client.callTool({ name, arguments: args });
  }

  // Calls the tool, reads its view and renders it with the result in `container`.
  async show(name, args, container) {
    const result = await this.call(name, args);
    const tool = this.tools.find((t) => t.name === name);
    const uri = getToolUiResourceUri(tool);
    if (!uri) throw new Error(`${name} points at no view`);
    const read = await this.client.readResource({ uri });
    const content = read.contents[0];
    const meta = (content._meta && content._meta.ui) || {};
    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('title', `${name} view`);
    iframe.style.cssText = 'width:100%;height:300px;border:1px solid #ccc;border-radius:8px;background:#fff';
    container.replaceChildren(iframe);
    const bridge = new AppBridge(this.client, { name: 'crmd-apps-host', version: '1.0.0' },
      { openLinks: {}, serverTools: {}, serverResources: {} },
      { hostContext: { toolInfo: { tool }, theme: 'light', displayMode: 'inline' } });
    bridge.onopenlink = async ({ url }) => { this.openedLinks.push(url); return {}; };
    bridge.onsizechange = ({ height }) => {
      this.sizes.push(height);
      if (height) iframe.style.height = `${Math.min(height, 1400)}px`;
    };
    const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    // After connect, which wires its own forwarding to the client: the same forwarding,
    // recorded, so the test sees each call the view made.
    bridge.oncalltool = async (params) => {
      this.viewCalls.push(params.name);
      return this.client.callTool(params);
    };
    const policy = `<meta http-equiv="Content-Security-Policy" content="${hostCsp(meta.csp)}">`;
    iframe.srcdoc = content.text.replace('<head>', `<head>${policy}`);
    await initialized;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    this.bridge = bridge;
    return { result, uri, mimeType: content.mimeType, csp: meta.csp, bytes: content.text.length };
  }
}

window.CrmdHost = Host;
