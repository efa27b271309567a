import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, InitializeRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, PingRequestSchema, ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { FieldError } from '../../src/validation.ts';
import type { RateLimit } from '../middleware/rate-limit.ts';

/**
 * The most JSON-RPC messages one `POST /mcp` may carry. MCP 2025-06-18 dropped batches, but clients
 * of 2025-03-26 (which the SDK still speaks) may send them; each message counts against the rate
 * limit as one request (issue 40, D17).
 */
export const MCP_MAX_BATCH = 20;

/** JSON-RPC's implementation-defined server errors are -32000..-32099: this one is "429". */
export const RATE_LIMITED_CODE = -32029;

type Id = string | number;
export interface JsonRpcError { jsonrpc: '2.0'; id: Id | null; error: { code: number; message: string; data?: unknown } }

/** What the SDK's transport gets, and the answers given here instead of running a message. */
export interface Screened {
  /** The messages handed to the SDK, in their order. */
  forward: unknown[];
  /** Answers to the requests that are not handed on (over the rate limit, or malformed params). */
  answered: JsonRpcError[];
}

interface Issue { code: string; path: PropertyKey[]; expected?: string }
interface ParamsSchema { safeParse(value: unknown): { success: true } | { success: false; error: { issues: Issue[] } } }

/** The SDK's own schema of each request this server handles; other methods are the SDK's to refuse (-32601). */
const REQUEST_SCHEMAS: Record<string, ParamsSchema> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  'prompts/list': ListPromptsRequestSchema,
  'prompts/get': GetPromptRequestSchema,
};

const TYPE_NAMES: Record<string, string> = {
  object: 'an object', record: 'an object', string: 'a string', number: 'a number', int: 'an integer',
  boolean: 'a boolean', array: 'an array',
};

function at(value: unknown, path: PropertyKey[]): unknown {
  let here = value;
  for (const key of path) here = here && typeof here === 'object' ? (here as Record<PropertyKey, unknown>)[key] : undefined;
  return here;
}

/** One schema issue as a field error: the field is the path below `params` (`arguments.agent_id`). */
function fieldError(message: Record<string, unknown>, issue: Issue): FieldError {
  const below = issue.path[0] === 'params' && issue.path.length > 1 ? issue.path.slice(1) : issue.path;
  const field = below.map(String).join('.') || 'params';
  if (issue.code === 'invalid_type' && at(message, issue.path) === undefined) return { field, code: 'required', message: `${field} is required` };
  if (issue.code === 'invalid_type') {
    return { field, code: 'invalid_type', message: `${field} must be ${TYPE_NAMES[issue.expected ?? ''] ?? `of type ${issue.expected}`}` };
  }
  if (issue.code === 'invalid_value' || issue.code === 'invalid_union') return { field, code: 'invalid_value', message: `${field} is not an accepted value` };
  return { field, code: 'invalid', message: `${field} is not valid` };
}

/**
 * The params errors of one request, as REST names fields (`errors[].field`), or null. MCP params
 * are objects; the request's own schema (the SDK's) says the rest. Unknown members of `params` are
 * let through, as the protocol adds members over its versions; a tool's `arguments` are the route's to
 * judge (a tool execution error, `isError`, naming the argument).
 */
function paramsErrors(message: Record<string, unknown>): FieldError[] | null {
  if ('params' in message && (message.params === null || typeof message.params !== 'object' || Array.isArray(message.params))) {
    return [{ field: 'params', code: 'invalid_type', message: 'params must be an object' }];
  }
  const schema = REQUEST_SCHEMAS[message.method as string];
  const parsed = schema?.safeParse({ method: message.method, params: message.params });
  if (!parsed || parsed.success) return null;
  const errors: FieldError[] = [];
  for (const issue of parsed.error.issues) {
    const error = fieldError(message, issue);
    if (!errors.some((e) => e.field === error.field)) errors.push(error);
  }
  return errors;
}

const isRequest = (m: unknown): m is Record<string, unknown> & { id: Id; method: string } => {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return false;
  const { jsonrpc, id, method } = m as Record<string, unknown>;
  return jsonrpc === '2.0' && typeof method === 'string' && (typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)));
};

/** An HTTP 400 with a JSON-RPC error without id: what the Streamable HTTP transport answers a body it will not take. */
export function batchRefusal(body: unknown): JsonRpcError | null {
  if (!Array.isArray(body)) return null;
  if (body.length === 0) return { jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request: the batch is empty' } };
  if (body.length <= MCP_MAX_BATCH) return null;
  return {
    jsonrpc: '2.0', id: null,
    error: {
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: a batch holds at most ${MCP_MAX_BATCH} messages and this one has ${body.length}; none was run`,
      data: { code: 'batch_too_large', max_batch: MCP_MAX_BATCH },
    },
  };
}

/**
 * Sorts the messages of one `POST /mcp` (a batch, or one message) before the SDK sees them. The
 * first message rides on the HTTP request, which `authenticate` counted; each further one takes one
 * more unit of the token's budget (`admit`), the one REST requests take too. A request past the
 * budget is not run and answers a rate-limit error with `retry_after`; a notification past it is
 * dropped. A request whose params are malformed answers -32602 naming the field.
 */
export function screenMessages(body: unknown, admit: () => RateLimit): Screened {
  const messages = Array.isArray(body) ? body : [body];
  const forward: unknown[] = [];
  const answered: JsonRpcError[] = [];
  messages.forEach((message, index) => {
    const rate = index === 0 ? null : admit();
    if (rate && !rate.allowed) {
      if (isRequest(message)) {
        answered.push({
          jsonrpc: '2.0', id: message.id,
          error: {
            code: RATE_LIMITED_CODE,
            message: `rate limit of ${rate.limit} requests a minute exceeded: this message was not run; retry after ${rate.resetSeconds} s`,
            data: { status: 429, code: 'rate_limited', retry_after: rate.resetSeconds },
          },
        });
      }
      return;
    }
    const errors = isRequest(message) ? paramsErrors(message) : null;
    if (!errors) {
      forward.push(message);
      return;
    }
    answered.push({
      jsonrpc: '2.0', id: (message as { id: Id }).id,
      error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${errors.map((e) => e.message).join('; ')}`, data: { errors } },
    });
  });
  return { forward, answered };
}

/**
 * The answers in the order of the messages they answer (JSON-RPC lets a batch's answers come in any
 * order; keeping the request's order is kinder to read).
 */
export function inRequestOrder(body: unknown, answers: { id?: unknown }[]): { id?: unknown }[] {
  const order = new Map<string, number>();
  (Array.isArray(body) ? body : [body]).forEach((m, i) => {
    if (isRequest(m) && !order.has(JSON.stringify(m.id))) order.set(JSON.stringify(m.id), i);
  });
  const rank = (a: { id?: unknown }) => order.get(JSON.stringify(a.id ?? null)) ?? Number.MAX_SAFE_INTEGER;
  return [...answers].sort((a, b) => rank(a) - rank(b));
}
