import type { FieldError } from './validation.ts';

/**
 * The one table of error codes: for each stable code, the title every problem document of that
 * code carries, and what the page at its `type` URL (`/errors/<code>`, api/routes/error-pages.ts)
 * tells a reader: what it means and what to do.
 */
export const ERRORS = {
  invalid_json: { status: 400, title: 'Request body is not valid JSON', means: 'The body could not be parsed as JSON.', todo: 'Send a well-formed JSON body with `Content-Type: application/json`.' },
  validation_error: { status: 400, title: 'Request is invalid', means: 'A field has the wrong type, is missing, is unknown, or is out of range. `errors[]` names each field, with a code and a message.', todo: 'Fix the fields listed in `errors[]` and send the request again; the OpenAPI document (`/api/v1/openapi.json`) describes every body.' },
  use_assign_endpoint: { status: 400, title: 'Use the assign endpoint', means: 'A phone number changes agent through its own endpoint, not through PATCH.', todo: 'Call `POST /phone-numbers/:id/assign` with the `widget_id`.' },
  private_network_target: { status: 400, title: 'Target address is not allowed', means: 'The URL resolves to a loopback, link-local or private address, which the service does not call by default.', todo: 'Use a public URL. To reach a site or receiver on your own machine or network (development), start the service with `ALLOW_PRIVATE_NETWORK_TARGETS=true`.' },
  unauthorized: { status: 401, title: 'Authentication required', means: 'The request has no bearer token, or the token is unknown or revoked.', todo: 'Send `Authorization: Bearer <token>` with an `sk_` API key or a `ut_` user token (`POST /api-keys` makes one; `npm run cli -- org create NAME` prints a first key).' },
  insufficient_credits: { status: 402, title: 'Insufficient credits', means: 'The organization\'s credit balance cannot pay for this action. Nothing was charged or created.', todo: 'Add credits (`POST /credits/adjustments`) and try again.' },
  missing_permission: { status: 403, title: 'Permission missing', means: 'The token is valid but lacks the permission this operation needs; `required_permission` names it.', todo: 'Use a key that holds `required_permission`, or create one that does (`POST /api-keys`).' },
  invalid_signature: { status: 403, title: 'Link signature is invalid or expired', means: 'A signed download link was changed or is older than 15 minutes.', todo: 'Read the run again (`GET /reports/:id/runs/:run_id`) for a fresh `download_url`.' },
  user_token_required: { status: 403, title: 'User token required', means: 'Advisor actions are taken by a person, so they need a user-scoped token (`ut_`), not an organization key.', todo: 'Create a user token with `POST /api-keys` and `user_email`, and use it.' },
  origin_not_allowed: { status: 403, title: 'Origin not allowed', means: 'The page\'s origin is not in the agent\'s `domains` list.', todo: 'Add the site\'s host to the agent\'s `domains`, or embed the widget on a listed site.' },
  not_found: { status: 404, title: 'Not found', means: 'The resource or route does not exist, or belongs to another organization.', todo: 'Check the id and the path; list the resources (`GET` on the collection) to find the right id.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', means: 'The route exists but not with this HTTP method; the `Allow` header lists the ones it takes.', todo: 'Use one of the methods in `Allow`.' },
  agent_has_active_number: { status: 409, title: 'Agent already has an active number', means: 'The agent already has an active phone number.', todo: 'Release or reassign the current number first, or buy with `force: true` to replace it.' },
  active_campaign: { status: 409, title: 'Agent has an active campaign', means: 'The agent (or the number\'s agent) is running or pausing a campaign: its number cannot be reassigned, unassigned or released, and the agent cannot be deleted, while the campaign may still dial.', todo: 'Wait for the campaign to finish, or cancel it (`POST /campaigns/:id/cancel`), then try again.' },
  sip_trunk_in_use: { status: 409, title: 'SIP trunk is in use', means: 'Transfer rules still point at this SIP trunk; `transfer_rule_count` says how many.', todo: 'Change or delete those transfer rules, then delete the trunk.' },
  llm_provider_in_use: { status: 409, title: 'LLM provider is in use', means: 'Agents\' model settings (live or in a pending draft) name this LLM provider; `agent_count` says how many.', todo: 'Point those agents\' `model.provider_id` at another provider (or null), then delete the provider.' },
  admin_imported_number: { status: 409, title: 'Number was imported by an administrator', means: 'A number imported from elsewhere cannot be released here.', todo: 'Release it with the carrier account it came from.' },
  no_active_number: { status: 409, title: 'Agent has no active number', means: 'A campaign dials from its agent\'s active phone number, and the agent has none.', todo: 'Buy or assign a phone number to the agent, then start the campaign.' },
  agent_paused: { status: 409, title: 'Agent is paused', means: 'The agent is paused, so it takes no new conversations.', todo: 'Resume the agent (`PATCH` its status) and try again.' },
  not_claimable: { status: 409, title: 'Conversation cannot be claimed', means: 'The visitor has left, or the conversation is a voice call, which an advisor cannot take over in the inbox.', todo: 'Pick a live web conversation.' },
  invalid_state: { status: 409, title: 'Action not allowed in the current state', means: 'The resource\'s current state forbids this action (for example stepping a completed simulation, or hanging up an ended call).', todo: 'Read the resource again and act on its current state.' },
  phone_number_exists: { status: 409, title: 'Phone number already exists', means: 'The organization already holds this number.', todo: 'Use the existing number (`GET /phone-numbers`).' },
  phone_number_unavailable: { status: 409, title: 'Phone number is not available', means: 'The number is held by another account of this service, or the carrier no longer offers it.', todo: 'Search again (`GET /phone-numbers/search`) and pick another.' },
  email_address_taken: { status: 409, title: 'Email address already in use', means: 'Another inbox already receives at this address.', todo: 'Choose another address, or change the other inbox first.' },
  member_exists: { status: 409, title: 'Member already exists', means: 'The organization already has a member with this e-mail; `member_id` names it.', todo: 'Change that member (`PATCH /members/:member_id`) instead of creating one.' },
  name_taken: { status: 409, title: 'Name already in use', means: 'Another resource of this kind in the organization already has this name or short code.', todo: 'Choose another name, or change the existing one.' },
  contact_exists: { status: 409, title: 'Contact already exists', means: 'A contact with this email or phone exists; `contact_id` and `field` name it.', todo: 'Update that contact (`PATCH /contacts/:contact_id`) instead of creating one.' },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is in progress', means: 'The first request with this key has not finished yet.', todo: 'Retry after a moment with the same key and body: you will get the first request\'s response.' },
  payload_too_large: { status: 413, title: 'Request body too large', means: 'The body is over the 1 MiB limit.', todo: 'Send a smaller body (split large imports into several requests).' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', means: 'The body is not in a format this endpoint takes.', todo: 'Send JSON with `Content-Type: application/json` (or the type the endpoint documents, such as `text/csv`).' },
  file_too_large: { status: 413, title: 'File too large', means: 'The uploaded file is over a limit of knowledge files: its size, its pages (PDF) or its rows (CSV). Nothing was stored.', todo: 'Split the file, or upload a smaller one; `detail` names the limit.' },
  unsupported_file_type: { status: 415, title: 'Unsupported file type', means: 'The uploaded bytes are not a PDF, DOCX, Markdown, plain text, HTML or CSV file (the kind is read from the content, not the name). Nothing was stored.', todo: 'Upload one of the accepted kinds.' },
  encrypted_file: { status: 422, title: 'File is encrypted', means: 'The file is password-protected or encrypted, so its text cannot be read. Nothing was stored.', todo: 'Remove the protection and upload it again.' },
  unreadable_file: { status: 422, title: 'File cannot be read', means: 'The file is damaged or not what its content first says it is (a truncated PDF, a DOCX without its document). Nothing was stored.', todo: 'Export or save the file again and upload it.' },
  unsafe_file: { status: 422, title: 'File unpacks too far', means: 'The DOCX unpacks to far more than its size (a zip bomb) or past the unpacked limit. Nothing was stored.', todo: 'Save the document again from a word processor and upload it.' },
  too_many_files: { status: 409, title: 'Too many files', means: 'The knowledge base already holds the most files it may.', todo: 'Delete files it no longer needs, or use another knowledge base.' },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused with a different request', means: 'This key was used in the last 24 hours with another body or route.', todo: 'Use a new key for a new request.' },
  rate_limited: { status: 429, title: 'Too many requests', means: 'The token used up its requests for the current window.', todo: 'Wait the seconds in `Retry-After`, then retry; the `RateLimit` header shows what is left.' },
  carrier_error: { status: 502, title: 'The carrier refused the change', means: 'The telephony carrier refused the change; nothing was changed here.', todo: 'Read `detail`, and try again later or with other settings.' },
  recording_download_failed: { status: 502, title: 'The call recording could not be downloaded', means: 'The carrier said a call\'s recording was ready, but its audio could not be fetched (an error answer, not a WAV file, too large, or an address the outbound guard refuses); nothing was stored.', todo: 'The carrier may post the callback again; check that the recording URL is reachable from the service.' },
  carrier_signature_invalid: { status: 403, title: 'Carrier signature is invalid', means: 'A carrier webhook arrived without a valid signature for its URL.', todo: 'Point the carrier at the exact public URL the service signs for, with the account\'s auth token.' },
  internal_error: { status: 500, title: 'Internal server error', means: 'Something unexpected failed on the service. No internals are shown.', todo: 'Retry; if it persists, report the `request_id` to the operator, who finds it in the logs.' },
  service_unavailable: { status: 503, title: 'Service unavailable', means: 'The database this service depends on (PostgreSQL) is unreachable; nothing was changed.', todo: 'Retry after a moment; `GET /readyz` says which dependency is down.' },
  temporal_unavailable: { status: 503, title: 'Workflow service unavailable', means: 'Temporal, which runs the service\'s long-running work (crawls, calls, simulations, reports, their Schedules, webhook retries), could not take the work; nothing was changed.', todo: 'Retry after the seconds in `Retry-After`; `GET /readyz` says whether Temporal is reachable again.' },
} as const satisfies Record<string, { status: number; title: string; means: string; todo: string }>;

/** Stable error codes with the title every problem document of that code carries. */
export const ERROR_TITLES = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.title])) as { [C in keyof typeof ERRORS]: (typeof ERRORS)[C]['title'] };
export type ErrorCode = keyof typeof ERRORS;

/**
 * RFC 9457 extension members a problem of that code carries beyond the contract's common ones,
 * so a client can act without parsing `detail` (the existing contact to update, the permission to grant).
 */
export const ERROR_EXTENSIONS: Partial<Record<ErrorCode, readonly string[]>> = {
  missing_permission: ['required_permission'],
  contact_exists: ['contact_id', 'field'],
  member_exists: ['member_id'],
  sip_trunk_in_use: ['transfer_rule_count'],
  llm_provider_in_use: ['agent_count'],
};

/**
 * The base of every problem's `type` (contract.md). The service serves the page of each code at
 * `/errors/<code>`: a documentation host for this base proxies there.
 */
export const ERROR_TYPE_BASE = 'https://docs.agents.dev/errors/';

/** An error meant for the client: the error middleware renders it as RFC 9457 problem details. */
export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(status: number, code: ErrorCode, detail: string, opts: {
    errors?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown>;
  } = {}) {
    super(detail);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.errors = opts.errors;
    this.headers = opts.headers ?? {};
    this.extra = opts.extra ?? {};
  }
}

/** 400 `validation_error` listing each offending field. */
export function validationError(errors: FieldError[], detail?: string): AppError {
  const first = errors[0];
  return new AppError(400, 'validation_error', detail ?? (first ? first.message : 'request is invalid'), { errors });
}

/** 400 `validation_error` for one field: for rules beyond what a schema can say. */
export function fieldError(field: string, code: string, message: string): AppError {
  return validationError([{ field, code, message }]);
}

export function notFound(what = 'resource'): AppError {
  return new AppError(404, 'not_found', `${what} not found`);
}

export function missingPermission(permission: string): AppError {
  return new AppError(403, 'missing_permission', `this token lacks the permission ${permission}`, {
    extra: { required_permission: permission },
  });
}

/** The problem document for an error; `requestId` is always included. */
export function problemBody(error: AppError, requestId: string): Record<string, unknown> {
  return {
    type: ERROR_TYPE_BASE + error.code,
    title: ERROR_TITLES[error.code],
    status: error.status,
    code: error.code,
    detail: error.message,
    ...(error.errors ? { errors: error.errors } : {}),
    ...error.extra,
    request_id: requestId,
  };
}
