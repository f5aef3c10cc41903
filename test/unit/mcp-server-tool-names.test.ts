import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { AppDeps } from '../../src/main/app-deps.js';
import { CallRecord } from '../../src/mcp/call-record.js';
import { createMcpServer } from '../../src/mcp/server.js';

/** Names an object literal inherits: the SDK's tool registry must not find them. */
const PROTOTYPE_NAMES = ['valueOf', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'isPrototypeOf'];

describe('mcp server: tool names', function () {
  let client: Client;

  before(async function () {
    // No tool reaches its deps here: every call below is refused before a handler runs.
    const server = createMcpServer({ deps: {} as AppDeps, record: new CallRecord(), requestId: 'unit' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'unit', version: '0' });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  });

  after(async function () {
    await client.close();
  });

  it('answers "not found" for names an object inherits, like any unknown tool', async function () {
    for (const name of [...PROTOTYPE_NAMES, 'no_such_tool']) {
      const r = await client.callTool({ name, arguments: {} });
      assert.equal(r.isError, true, name);
      const text = (r.content as { text: string }[])[0]!.text;
      assert.equal(text, `MCP error -32602: Tool ${name} not found`, name);
    }
  });

  it('still lists its eight tools', async function () {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 8);
  });
});
