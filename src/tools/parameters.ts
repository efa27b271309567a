import { Ajv, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import { formatErrors, type FieldError } from '../validation.ts';
import { AGENT_TOOL_LIMITS } from '../schemas/agent-tools.ts';

/**
 * A tool's `parameters`: a JSON Schema the business writes, compiled with ajv when it is saved
 * (so a schema that cannot validate anything is refused at the door, not at the first call) and
 * again before each call, where it checks the model's arguments before anything is sent.
 */

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((formatsModule as unknown as { default?: AddFormats }).default ?? formatsModule) as unknown as AddFormats;

let shared: Ajv | undefined;
/** Strict about the schema itself (an unknown keyword is most likely a typo), lenient on unions. */
function ajv(): Ajv {
  if (!shared) {
    shared = new Ajv({ allErrors: true, strict: true, strictRequired: false, strictTypes: false, strictTuples: false, allowUnionTypes: true, validateSchema: true });
    addFormats(shared);
  }
  return shared;
}

/** The default when a tool declares no parameters. */
export const EMPTY_PARAMETERS = { type: 'object', properties: {} } as const;

/** Compiles a schema without keeping it in ajv's cache (each tool's schema is its own). */
function compile(schema: Record<string, unknown>): ValidateFunction {
  const instance = ajv();
  try {
    return instance.compile(schema);
  } finally {
    instance.removeSchema(schema);
  }
}

/** What is wrong with a `parameters` value, as field errors on `field` (empty when it is a usable schema). */
export function parametersErrors(schema: Record<string, unknown>, field = 'parameters'): FieldError[] {
  const refuse = (code: string, message: string): FieldError[] => [{ field, code, message }];
  if (Buffer.byteLength(JSON.stringify(schema)) > AGENT_TOOL_LIMITS.parametersBytes) {
    return refuse('too_large', `${field} must be at most ${AGENT_TOOL_LIMITS.parametersBytes / 1024} KB of JSON`);
  }
  if (schema.type !== 'object') return refuse('invalid_schema', `${field} must be a JSON Schema of type "object" (the arguments are an object)`);
  const properties = schema.properties ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    return refuse('invalid_schema', `${field}.properties must be an object of property schemas`);
  }
  if (Object.keys(properties).length > AGENT_TOOL_LIMITS.parameterProperties) {
    return refuse('too_many_properties', `${field} may declare at most ${AGENT_TOOL_LIMITS.parameterProperties} properties`);
  }
  try {
    compile(schema);
  } catch (err) {
    const message = err instanceof Error ? err.message.replace(/\s+/g, ' ').slice(0, 300) : 'it does not compile';
    return refuse('invalid_schema', `${field} is not a valid JSON Schema: ${message}`);
  }
  return [];
}

/** The model's arguments checked against the tool's schema: the errors, empty when they fit. */
export function argumentErrors(schema: Record<string, unknown>, args: Record<string, unknown>): FieldError[] {
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch {
    return [{ field: 'arguments', code: 'invalid_schema', message: 'the tool\'s parameters schema does not compile' }];
  }
  return validate(args) ? [] : formatErrors(validate.errors);
}
