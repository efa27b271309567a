import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  type CallToolResult, type GetPromptResult, type PromptMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../src/auth/authenticator.ts';
import { problemBody, validationError } from '../../src/errors.ts';
import type { Caller, Reply } from './in-process.ts';
import { requestForCall, type RouteTool } from './tools.ts';

type Json = Record<string, unknown>;

export interface McpServerOptions {
  tools: ReadonlyMap<string, RouteTool>;
  principal: Principal;
  call: Caller;
  requestId: string;
  version: string;
}

const RESOURCE_KINDS = {
  agent: { tool: 'get_agent', arg: 'agent_id', title: 'Agent configuration', description: 'The agent as GET /agents/:id shows it: every writable field under its PATCH name.' },
  conversation: { tool: 'get_conversation', arg: 'conversation_id', title: 'Conversation transcript', description: 'The conversation with its transcript (`messages`), tool calls and evaluation.' },
} as const;
const RESOURCE_URI = /^(agent|conversation):\/\/([^/?#]+)$/;

/** How many evaluated conversations `review_agent` reads, and how far back it looks for them. */
const REVIEW_CONVERSATIONS = 20;
const REVIEW_SCAN_PAGES = 10;
const PAGE = 100;

function describe(tool: RouteTool, principal: Principal): string {
  const needs = tool.permissions.length ? `Needs the permission ${tool.permissions.join(' and ')}.` : 'Needs a valid token only.';
  const missing = tool.permissions.filter((p) => !principal.permissions.has(p as never));
  const lacking = missing.length ? ` This token lacks ${missing.join(' and ')}: a call is refused with 403 missing_permission.` : '';
  return `${tool.description} (${tool.method} ${tool.path}) ${needs}${lacking}`;
}

/**
 * Success: the REST body as structured content and as JSON text, or an image (a screenshot) as an
 * `image` content block, base64. Refusal: the problem body, `isError`.
 */
function toolResult(reply: Reply): CallToolResult {
  if (reply.image) {
    return { content: [{ type: 'image', data: reply.image.data.toString('base64'), mimeType: reply.image.mimeType }] };
  }
  const body = reply.body;
  const structured = body === undefined ? {} : body && typeof body === 'object' && !Array.isArray(body) ? body as Json : { data: body };
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
    ...(reply.status >= 400 ? { isError: true } : {}),
  };
}

/** A refused resource or prompt read: a JSON-RPC error carrying the problem body. */
function refusal(reply: Reply): McpError {
  const problem = reply.body as { detail?: string } | undefined;
  const code = reply.status === 404 ? -32002 : reply.status === 400 ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest;
  return new McpError(code, problem?.detail ?? `refused with status ${reply.status}`, problem);
}

/**
 * One MCP server for one HTTP request (stateless: any replica answers any request). Every tool is a
 * route of the route table and every call, resource read and prompt runs through the REST app.
 */
export function createMcpServer(opts: McpServerOptions): Server {
  const { tools, principal, call, requestId } = opts;
  const server = new Server({ name: 'agent-management-service', version: opts.version }, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: 'Build, test and tune AI agents. Every tool mirrors one REST operation of the Agent Management API with the same '
      + 'permissions and validation; a refused call returns isError with an RFC 9457 problem body. Resources agent://<id> and '
      + 'conversation://<id> read an agent\'s configuration and a transcript; the prompt review_agent proposes changes from recent conversations.',
  });

  const invoke = async (name: string, args: Json, idempotencyKey?: string): Promise<Reply> => {
    const tool = tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
    const request = requestForCall(tool, args);
    if (Array.isArray(request)) return { status: 400, body: problemBody(validationError(request), requestId) };
    return call({ ...request, idempotencyKey });
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()].map((tool) => ({
      name: tool.name, title: tool.summary, description: describe(tool, principal),
      inputSchema: tool.inputSchema as { type: 'object' }, annotations: { title: tool.summary, ...tool.annotations },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const key = request.params._meta?.idempotency_key;
    return toolResult(await invoke(request.params.name, request.params.arguments ?? {}, typeof key === 'string' ? key : undefined));
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: Object.entries(RESOURCE_KINDS).map(([kind, k]) => ({
      uriTemplate: `${kind}://{${k.arg}}`, name: kind, title: k.title, description: k.description, mimeType: 'application/json',
    })),
  }));

  // The agents themselves, a page at a time; conversations are too many to list (their template names them).
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const offset = Number(request.params?.cursor ?? 0) || 0;
    const reply = await invoke('list_agents', { limit: PAGE, offset });
    if (reply.status !== 200) return { resources: [] };
    const page = reply.body as { data: { id: string; name: string }[]; total: number };
    return {
      resources: page.data.map((agent) => ({ uri: `agent://${agent.id}`, name: agent.name, title: agent.name, mimeType: 'application/json' })),
      ...(offset + PAGE < page.total ? { nextCursor: String(offset + PAGE) } : {}),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const match = RESOURCE_URI.exec(uri);
    if (!match) throw new McpError(-32002, `unknown resource ${uri}: use agent://<id> or conversation://<id>`);
    const kind = RESOURCE_KINDS[match[1] as keyof typeof RESOURCE_KINDS];
    let id: string;
    try {
      id = decodeURIComponent(match[2]!);
    } catch {
      throw new McpError(-32002, `${kind.arg} in ${uri} is not a valid id`);
    }
    const reply = await invoke(kind.tool, { [kind.arg]: id });
    if (reply.status !== 200) throw refusal(reply);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(reply.body, null, 2) }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [{
      name: 'review_agent', title: 'Review an agent',
      description: `Reads an agent's configuration and its last ${REVIEW_CONVERSATIONS} evaluated conversations and asks for PATCH changes (update_agent) that would do better.`,
      arguments: [{ name: 'agent_id', description: 'The agent to review', required: true }],
    }],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    if (request.params.name !== 'review_agent') throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${request.params.name}`);
    return reviewAgentPrompt(invoke, request.params.arguments?.agent_id ?? '');
  });
  return server;
}

type Invoke = (name: string, args: Json) => Promise<Reply>;

/** The agent's last evaluated real conversations, newest first, with their transcripts. */
async function lastEvaluated(invoke: Invoke, agentId: string): Promise<Json[]> {
  const ids: string[] = [];
  for (let page = 0; page < REVIEW_SCAN_PAGES && ids.length < REVIEW_CONVERSATIONS; page += 1) {
    const reply = await invoke('list_conversations', { widget_id: agentId, limit: PAGE, offset: page * PAGE });
    if (reply.status !== 200) throw refusal(reply);
    const { data } = reply.body as { data: { id: string; outcome: string | null }[] };
    for (const c of data) if (c.outcome !== null && ids.length < REVIEW_CONVERSATIONS) ids.push(c.id);
    if (data.length < PAGE) break;
  }
  const out: Json[] = [];
  for (const id of ids) {
    const reply = await invoke('get_conversation', { conversation_id: id });
    if (reply.status !== 200) continue; // deleted since it was listed
    const { card_url: _signedLink, ...conversation } = reply.body as Json;
    out.push(conversation);
  }
  return out;
}

async function reviewAgentPrompt(invoke: Invoke, agentId: string): Promise<GetPromptResult> {
  const agent = await invoke('get_agent', { agent_id: agentId });
  if (agent.status !== 200) throw refusal(agent);
  const conversations = await lastEvaluated(invoke, agentId);
  const name = (agent.body as { name?: string }).name ?? agentId;
  const text = [
    `Review the agent "${name}" (agent_id ${agentId}). Its configuration is agent://${agentId}, attached below, followed by its`,
    conversations.length
      ? `last ${conversations.length} evaluated conversations (newest first), each with its transcript, intent, outcome, extracted data and criteria results.`
      : 'evaluated conversations; it has none yet, so judge the configuration alone.',
    'Find where the agent fell short: failed criteria, missed goals, unanswered questions, data it did not capture, transfers that should or should not have happened.',
    'Then propose changes as one PATCH body for the update_agent tool (agent_id and the writable fields of its input schema only),',
    'explaining each change with the conversations that motivate it. Do not call update_agent until the user has agreed.',
  ].join(' ');
  const messages: PromptMessage[] = [
    { role: 'user', content: { type: 'text', text } },
    { role: 'user', content: { type: 'resource', resource: { uri: `agent://${agentId}`, mimeType: 'application/json', text: JSON.stringify(agent.body, null, 2) } } },
    ...conversations.map((c): PromptMessage => ({
      role: 'user',
      content: { type: 'resource', resource: { uri: `conversation://${String(c.id)}`, mimeType: 'application/json', text: JSON.stringify(c, null, 2) } },
    })),
  ];
  return { description: `Review of ${name} from ${conversations.length} evaluated conversations`, messages };
}
