// Validates the raw JSON-RPC messages crmd sends against the MCP JSON Schema
// (tests/data/mcp/<version>.schema.json, draft 2020-12), independently of the SDK's own
// zod schemas. recordingFetch() wraps fetch for the SDK transport: it remembers the
// method of every request it sends and checks every message of every POST response.
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SCHEMA_PATH = path.resolve(here, '../../data/mcp/2025-11-25.schema.json');
export const schemaPathFor = (revision) => path.resolve(here, `../../data/mcp/${revision}.schema.json`);

// Result definition per request method (the ones the e2e scripts send), per revision.
const RESULT_DEFS = {
  initialize: 'InitializeResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  ping: 'EmptyResult',
};
// 2026-07-28: no initialize or ping; server/discover; a tools/call result is complete
// (CallToolResult) or input_required (InputRequiredResult), told apart by resultType.
const RESULT_DEFS_2026 = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': (result) => (result?.resultType === 'input_required' ? 'InputRequiredResult' : 'CallToolResult'),
};

export class WireValidator {
  // new WireValidator() checks against 2025-11-25; new WireValidator(schemaPathFor('2026-07-28'))
  // against 2026-07-28.
  constructor(schemaPath = process.env.E2E_MCP_SCHEMA ?? SCHEMA_PATH) {
    this.resultDefs = schemaPath.includes('2026-07-28') ? RESULT_DEFS_2026 : RESULT_DEFS;
    this.available = existsSync(schemaPath);
    this.errors = [];
    this.counts = {};
    this.methods = new Map(); // JSON-RPC id -> method
    if (!this.available) return;
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
    // strict:false: the MCP schema uses annotations (e.g. "format" values) ajv doesn't know.
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(schema, 'mcp');
    this.validate = (def, value) => {
      const v = ajv.getSchema(`mcp#/$defs/${def}`);
      if (!v) throw new Error(`schema has no $defs/${def}`);
      return v(value) ? null : ajv.errorsText(v.errors, { dataVar: def });
    };
  }

  noteRequest(body) {
    const msgs = Array.isArray(body) ? body : [body];
    for (const m of msgs) if (m && m.id !== undefined && m.method) this.methods.set(m.id, m.method);
  }

  check(message) {
    if (!this.available) return;
    const err = this.validate('JSONRPCMessage', message);
    if (err) this.errors.push(`message ${JSON.stringify(message).slice(0, 300)}: ${err}`);
    if (message && 'result' in message) {
      const method = this.methods.get(message.id);
      let def = this.resultDefs[method];
      if (typeof def === 'function') def = def(message.result);
      if (def) {
        const e = this.validate(def, message.result);
        this.counts[def] = (this.counts[def] ?? 0) + 1;
        if (e) this.errors.push(`${method} result: ${e}`);
      }
    }
  }

  // A fetch for StreamableHTTPClientTransport({ fetch }). The transport uses it for the
  // OAuth requests too; only POSTs to mcpUrl carry JSON-RPC.
  recordingFetch(mcpUrl) {
    const endpoint = new URL(mcpUrl).toString();
    return async (url, init = {}) => {
      if (new URL(String(url)).toString() !== endpoint) return fetch(url, init);
      if (init.method === 'POST' && typeof init.body === 'string') {
        try { this.noteRequest(JSON.parse(init.body)); } catch { /* not JSON: not ours to check */ }
      }
      const res = await fetch(url, init);
      // Error answers are JSON-RPC too (400 HeaderMismatch, 404 Method not found, ...):
      // checked as well when their body is a JSON-RPC message.
      if (init.method === 'POST' && this.available && res.status !== 202) {
        const type = res.headers.get('content-type') ?? '';
        const copy = res.clone();
        // Read the copy in the background so streaming to the SDK is not delayed.
        this.pending = (this.pending ?? Promise.resolve()).then(async () => {
          const text = await copy.text();
          if (type.includes('application/json')) {
            const parsed = JSON.parse(text);
            for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
              if (res.ok || (m && m.jsonrpc !== undefined)) this.check(m);
            }
          } else if (type.includes('text/event-stream')) {
            for (const block of text.split(/\r?\n\r?\n/)) {
              const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
              if (data) this.check(JSON.parse(data));
            }
          }
        }).catch((e) => this.errors.push(`could not read a response: ${e.message}`));
      }
      return res;
    };
  }

  async finish() {
    await this.pending;
    return { available: this.available, errors: this.errors, counts: this.counts };
  }
}
