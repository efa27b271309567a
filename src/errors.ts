import type { FieldError } from './validation.ts';

/** Stable error codes with the title every problem document of that code carries. */
export const ERROR_TITLES = {
  invalid_json: 'Request body is not valid JSON',
  validation_error: 'Request is invalid',
  use_assign_endpoint: 'Use the assign endpoint',
  private_network_target: 'Target address is not allowed',
  unauthorized: 'Authentication required',
  insufficient_credits: 'Insufficient credits',
  missing_permission: 'Permission missing',
  invalid_signature: 'Link signature is invalid or expired',
  user_token_required: 'User token required',
  origin_not_allowed: 'Origin not allowed',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  agent_has_active_number: 'Agent already has an active number',
  active_campaign: 'Agent has an active campaign',
  sip_trunk_in_use: 'SIP trunk is in use',
  admin_imported_number: 'Number was imported by an administrator',
  no_active_number: 'Agent has no active number',
  agent_paused: 'Agent is paused',
  not_claimable: 'Conversation cannot be claimed',
  invalid_state: 'Action not allowed in the current state',
  phone_number_exists: 'Phone number already exists',
  phone_number_unavailable: 'Phone number is not available',
  email_address_taken: 'Email address already in use',
  contact_exists: 'Contact already exists',
  idempotency_in_progress: 'A request with this Idempotency-Key is in progress',
  payload_too_large: 'Request body too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency-Key reused with a different request',
  rate_limited: 'Too many requests',
  carrier_error: 'The carrier refused the change',
  carrier_signature_invalid: 'Carrier signature is invalid',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
} as const;
export type ErrorCode = keyof typeof ERROR_TITLES;

/**
 * RFC 9457 extension members a problem of that code carries beyond the contract's common ones,
 * so a client can act without parsing `detail` (the existing contact to update, the permission to grant).
 */
export const ERROR_EXTENSIONS: Partial<Record<ErrorCode, readonly string[]>> = {
  missing_permission: ['required_permission'],
  contact_exists: ['contact_id', 'field'],
  sip_trunk_in_use: ['transfer_rule_count'],
};

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
