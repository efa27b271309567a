/**
 * `npm run mcp -- --token sk_...`: an MCP server on stdin/stdout for desktop assistants that speak
 * only stdio, forwarding every request to a running service's `POST /mcp` (`AMS_URL`, default
 * http://localhost:8080) with the token. It has no tools of its own: it lists and calls whatever
 * the service offers. Diagnostics go to stderr; stdout carries the protocol alone.
 */
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema, CallToolResultSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const USAGE = 'usage: npm run mcp -- --token sk_... (AMS_URL names the service, default http://localhost:8080)';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({ options: { token: { type: 'string' }, url: { type: 'string' } }, strict: true });
const token = values.token ?? process.env.AMS_TOKEN;
if (!token) fail(USAGE);
const base = values.url ?? process.env.AMS_URL ?? 'http://localhost:8080';
let endpoint: URL;
try {
  endpoint = new URL('/mcp', base);
} catch {
  fail(`AMS_URL is not a URL: ${base}`);
}

const upstream = new Client({ name: 'ams-stdio-bridge', version: '1.0.0' });
try {
  await upstream.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
} catch (err) {
  fail(`cannot reach ${endpoint.href}: ${(err as Error).message}`);
}

const server = new Server(upstream.getServerVersion() ?? { name: 'agent-management-service', version: '0' }, {
  capabilities: upstream.getServerCapabilities() ?? {},
  instructions: upstream.getInstructions(),
});
// Each request is handed on as it came; an upstream JSON-RPC error comes back as the same error.
server.setRequestHandler(ListToolsRequestSchema, (req) => upstream.listTools(req.params));
server.setRequestHandler(CallToolRequestSchema, (req) => upstream.request({ method: 'tools/call', params: req.params }, CallToolResultSchema));
server.setRequestHandler(ListResourcesRequestSchema, (req) => upstream.listResources(req.params));
server.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => upstream.listResourceTemplates(req.params));
server.setRequestHandler(ReadResourceRequestSchema, (req) => upstream.readResource(req.params));
server.setRequestHandler(ListPromptsRequestSchema, (req) => upstream.listPrompts(req.params));
server.setRequestHandler(GetPromptRequestSchema, (req) => upstream.getPrompt(req.params));

const stdio = new StdioServerTransport();
// The assistant closing our stdin is the end of the session.
process.stdin.once('end', () => void server.close().finally(() => upstream.close()).finally(() => process.exit(0)));
await server.connect(stdio);
