// Tiny helpers shared by the e2e scripts: named checks that count passes and failures,
// and a tool-call helper that fails loudly on isError.
import { log } from './oauth.mjs';

export class Checks {
  constructor(name) {
    this.name = name;
    this.passed = 0;
    this.failed = 0;
  }

  ok(cond, what, detail) {
    if (cond) {
      this.passed++;
      log(`  ok   ${what}`);
    } else {
      this.failed++;
      log(`  FAIL ${what}${detail !== undefined ? `: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 800)}` : ''}`);
    }
    return cond;
  }

  equal(actual, expected, what) {
    return this.ok(actual === expected, what, `got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }

  // Runs fn; an exception counts as one failure (and is not rethrown).
  async step(what, fn) {
    try {
      return await fn();
    } catch (e) {
      this.ok(false, what, e?.stack ?? String(e));
      return undefined;
    }
  }

  // Prints the closing line and sets the exit code.
  done() {
    console.log(`${this.name}: ${this.passed} passed, ${this.failed} failed`);
    process.exitCode = this.failed === 0 && this.passed > 0 ? 0 : 1;
  }
}

export function resultText(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// The JSON of a tool result's text: crmd writes it as line 3 of an untrusted-data block
// (docs/mcp.md "Tool results as text"). Throws when the text is not one.
export function resultData(result) {
  const lines = resultText(result).split('\n');
  if (lines.length !== 4 || lines[1] !== '```untrusted-data' || lines[3] !== '```') {
    throw new Error(`not an untrusted-data block: ${lines[0]?.slice(0, 80)}`);
  }
  return JSON.parse(lines[2]);
}

// Calls a tool; returns structuredContent (or the parsed text block). Throws with the
// tool's own error text when isError is set, so a failing step says why.
export async function call(client, name, args = {}) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} returned isError: ${resultText(result).slice(0, 800)}`);
  if (result.structuredContent !== undefined) return result.structuredContent;
  try { return resultData(result); } catch { return result; }
}

// Calls a tool expecting isError; returns the error text and structuredContent.
export async function callExpectingError(client, name, args = {}) {
  const result = await client.callTool({ name, arguments: args });
  if (!result.isError) throw new Error(`${name} succeeded but an error was expected: ${resultText(result).slice(0, 400)}`);
  return { text: resultText(result), structured: result.structuredContent };
}
