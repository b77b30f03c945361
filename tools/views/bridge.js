// crmd's side of the MCP Apps postMessage protocol (SEP-1865): JSON-RPC 2.0 with the host
// (window.parent). The view asks ui/initialize, then receives the tool's input and result
// as notifications; it calls tools and opens links only through the host, so every call
// is the host's MCP client's, under its token and scopes. No network access of its own.
'use strict';
const crmd = (() => {
  let nextId = 1;
  const pending = new Map();
  const handlers = {};
  const send = (msg) => window.parent.postMessage(msg, '*');
  const answer = (id, result) => send({ jsonrpc: '2.0', id, result });
  function request(method, params) {
    const id = nextId++;
    send({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  const notify = (method, params) => send({ jsonrpc: '2.0', method, params });
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.method === undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(m.error); else p.resolve(m.result);
      return;
    }
    if (m.id !== undefined) {
      if (m.method === 'ui/resource-teardown' || m.method === 'ping') answer(m.id, {});
      else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    if (handlers[m.method]) handlers[m.method](m.params || {});
  });

  // The JSON of a crmd tool result: structuredContent, or for a tool error the
  // untrusted-data block of its text (line 3).
  function data(result) {
    if (result && result.structuredContent) return result.structuredContent;
    const text = result && result.content && result.content[0] && result.content[0].text;
    if (typeof text !== 'string') return null;
    try { return JSON.parse(text.split('\n')[2]); } catch { return null; }
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // Replaces what `root` shows; arrays are flattened and empty parts dropped.
  function show(root, ...parts) {
    root.replaceChildren(...parts.flat(2).filter((x) => x !== null && x !== undefined && x !== false));
  }

  const words = (key) => String(key).replace(/_/g, ' ');
  function scalar(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v !== 'object') return String(v);
    if (v.name && v.email) return `${v.name} <${v.email}>`;
    for (const k of ['name', 'email', 'title', 'subject']) if (typeof v[k] === 'string') return v[k];
    return JSON.stringify(v);
  }

  function showError(root, body) {
    const e = (body && body.error) || {};
    show(root, el('p', { class: 'error', role: 'alert' },
      `crmd answered ${e.code || 'an error'}: ${e.message || ''}`));
  }

  function watchSize() {
    let last = '';
    const report = () => {
      const r = document.documentElement.getBoundingClientRect();
      const size = { width: Math.ceil(r.width), height: Math.ceil(r.height) };
      const key = `${size.width}x${size.height}`;
      if (key !== last) { last = key; notify('ui/notifications/size-changed', size); }
    };
    new ResizeObserver(report).observe(document.documentElement);
    report();
  }

  // Connects to the host; `view.result(structured, result)` draws a tool result,
  // `view.input(arguments)` sees the call's arguments.
  async function start(name, view) {
    handlers['ui/notifications/tool-input'] = (p) => view.input && view.input(p.arguments || {});
    handlers['ui/notifications/tool-result'] = (p) => view.result(data(p), p);
    handlers['ui/notifications/host-context-changed'] = (p) => theme(p);
    const init = await request('ui/initialize', {
      appInfo: { name, version: '1.0.0' },
      appCapabilities: {},
      protocolVersion: '2026-01-26',
    });
    crmd.host = init || {};
    theme(crmd.host.hostContext || {});
    notify('ui/notifications/initialized', {});
    watchSize();
  }
  function theme(ctx) {
    if (ctx.theme) document.documentElement.dataset.theme = ctx.theme;
  }

  // tools/call through the host; resolves to the tool's JSON, rejects with the JSON-RPC
  // error (for a scope the token lacks, the host's client reports 403).
  async function callTool(name, args) {
    const result = await request('tools/call', { name, arguments: args });
    return { body: data(result), isError: !!(result && result.isError) };
  }
  const openLink = (url) => request('ui/open-link', { url });

  return { start, callTool, openLink, el, show, words, scalar, showError, data, host: {} };
})();
