import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((formatsModule as unknown as { default?: AddFormats }).default ?? formatsModule) as unknown as AddFormats;

/** One field-level problem, as the `errors[]` of a validation problem document lists it. */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

function createAjv(coerce: boolean, defaults: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: defaults,
    verbose: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
  });
  addFormats(ajv);
  // Our schemas carry a stable error code for a rule (for example `invalid_e164`) and
  // OpenAPI 3.1 keeps `x-` keywords as documentation.
  ajv.addVocabulary(['x-code', 'example']);
  return ajv;
}

const ajvs = new Map<string, Ajv>();
function ajvFor(coerce: boolean, defaults: boolean): Ajv {
  const key = `${coerce}:${defaults}`;
  let ajv = ajvs.get(key);
  if (!ajv) {
    ajv = createAjv(coerce, defaults);
    ajvs.set(key, ajv);
  }
  return ajv;
}

/**
 * Compiles a JSON Schema into a type guard. Query strings use `coerce` (they arrive as text);
 * bodies never do, so `"5"` is not accepted where a number is required.
 */
export function compileValidator<S extends TSchema>(
  schema: S,
  opts: { coerce?: boolean; defaults?: boolean } = {},
): ValidateFunction<Static<S>> {
  return ajvFor(opts.coerce ?? false, opts.defaults ?? false).compile<Static<S>>(schema);
}

/** `/theme/mode` → `theme.mode`, `/domains/2` → `domains[2]`; a property name is never an index. */
export function fieldPath(instancePath: string, property?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const path = parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
  if (property === undefined) return path;
  return path ? `${path}.${property}` : property;
}

function codeFor(error: ErrorObject): string {
  const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-code'];
  if (typeof custom === 'string' && ['pattern', 'format', 'enum', 'const', 'anyOf'].includes(error.keyword)) return custom;
  switch (error.keyword) {
    case 'additionalProperties': return 'unknown_field';
    case 'required': return 'required';
    case 'type': return 'invalid_type';
    case 'enum': case 'const': case 'anyOf': case 'oneOf': return 'invalid_value';
    case 'minimum': case 'maximum': case 'exclusiveMinimum': case 'exclusiveMaximum': return 'out_of_range';
    case 'minLength': return 'too_short';
    case 'maxLength': return 'too_long';
    case 'minItems': return 'too_few_items';
    case 'maxItems': return 'too_many_items';
    case 'uniqueItems': return 'duplicate_items';
    case 'minProperties': return 'too_few_properties';
    case 'maxProperties': return 'too_many_properties';
    case 'format': return error.params.format === 'uri' ? 'invalid_url' : `invalid_${String(error.params.format).replace(/-/g, '_')}`;
    case 'pattern': return 'invalid_format';
    default: return 'invalid_value';
  }
}

function messageFor(error: ErrorObject, field: string): string {
  const name = field || 'body';
  switch (error.keyword) {
    case 'additionalProperties': return `${name} is not a known field`;
    case 'required': return `${name} is required`;
    case 'type': return `${name} must be of type ${String(error.params.type)}`;
    case 'enum': return `${name} must be one of: ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const': return `${name} must be ${JSON.stringify(error.params.allowedValue)}`;
    case 'anyOf': {
      const values = ((error.parentSchema as { anyOf?: { const?: unknown }[] }).anyOf ?? []).map((s) => s.const);
      return values.every((v) => v !== undefined) ? `${name} must be one of: ${values.map(String).join(', ')}` : `${name} has an invalid value`;
    }
    default: return `${name} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * Turns ajv errors into the `errors[]` of a problem document, one entry per field and rule.
 * Union failures report once (the `anyOf` entry), not once per branch.
 */
export function formatErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  if (!errors) return [];
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath));
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword !== 'anyOf' && [...anyOfPaths].some((p) => error.schemaPath.startsWith(p.replace(/\/anyOf$/, '/anyOf/')))) continue;
    const extra = error.keyword === 'additionalProperties' ? String(error.params.additionalProperty)
      : error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    const field = fieldPath(error.instancePath, extra);
    const code = codeFor(error);
    const key = `${field}|${code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, code, message: messageFor(error, field) });
  }
  return out;
}

/**
 * Whether what the service sends is held to its declared schemas: every route's response, every
 * emitted event's payload. On under test (vitest sets NODE_ENV=test), so the whole suite checks
 * the shapes it sees; off in production, where a drift must not turn an answer into an error.
 */
export const SHAPE_CHECKS = process.env.NODE_ENV === 'test';

let shapeAjv: Ajv | undefined;

/**
 * Compiles a check of a value the service produces against its schema: no coercion, no defaults,
 * and `$id`s dropped (a schema nested in several others, `Agent` in `AgentList`, is compiled anew
 * each time). Returns the errors as `field: message` lines, or null when the value conforms.
 */
export function compileShapeCheck(schema: TSchema): (value: unknown) => string[] | null {
  shapeAjv ??= createAjv(false, false);
  const validate = shapeAjv.compile(JSON.parse(JSON.stringify(schema), (key, v) => (key === '$id' ? undefined : v)));
  return (value) => (validate(value) ? null : formatErrors(validate.errors).map((e) => `${e.field || '(root)'}: ${e.message}`));
}
