import { pino, type DestinationStream, type Logger } from 'pino';
import { LOG_POLICY, redactText, redactValue } from './domain/redaction.ts';
import { logPolicyOf } from './db/redaction-cache.ts';

/** Fields that are ids, times or levels: never personal data, and scanning them costs time. */
const UNREDACTED_FIELDS = new Set(['time', 'level', 'pid', 'hostname', 'service', 'role', 'request_id', 'org_id', 'agent_id', 'workflow_id', 'run_id', 'conversation_id', 'method', 'path', 'status', 'duration_ms']);

/**
 * Structured JSON logs on stdout. Anything that could hold a credential is redacted by path,
 * and request logging never includes headers or bodies in the first place. Personal data (e-mail
 * addresses, phone numbers, card numbers, IBANs) is masked in every message and field, whatever
 * the agent's redaction settings (issue 47): ids and times are left as they are. A line naming an
 * agent (`agent_id`) also hides that agent's own kinds (national ids, patterns) whatever its targets.
 */
export function createLogger(level: string, base: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'agent-management-service', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['*.authorization', '*.Authorization', '*.token', '*.password', '*.secret', '*.token_hash', 'token', 'password', 'secret', 'LLM_API_KEY', '*.LLM_API_KEY', 'VOICE_TTS_API_KEY', '*.VOICE_TTS_API_KEY', 'VOICE_STT_API_KEY', '*.VOICE_STT_API_KEY', 'apiKey', '*.apiKey', 'S3_SECRET_ACCESS_KEY', '*.S3_SECRET_ACCESS_KEY'],
      censor: '[redacted]',
    },
    serializers: { err: (err: Error) => redactValue({ ...pino.stdSerializers.err(err) }, LOG_POLICY) },
    formatters: {
      log: (fields: Record<string, unknown>) => {
        const policy = logPolicyOf(fields['agent_id']);
        // Errors are serialized after this formatter: serialized here, so the agent's kinds reach their messages too.
        const plain = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? { ...pino.stdSerializers.err(v) } : v]));
        return redactValue(plain, policy, UNREDACTED_FIELDS);
      },
    },
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void) {
        const first: unknown = args[0];
        const policy = first && typeof first === 'object' ? logPolicyOf((first as Record<string, unknown>)['agent_id']) : LOG_POLICY;
        method.apply(this, args.map((a) => (typeof a === 'string' ? redactText(a, policy) : a)));
      },
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
/** Fields every line carries (or pino adds) that a person at a terminal does not need to read each time. */
const QUIET_FIELDS = new Set(['time', 'level', 'msg', 'service', 'role', 'pid', 'hostname', 'err']);

/**
 * One of pino's JSON lines as a line a person reads (`LOG_FORMAT=pretty`): time, level, message,
 * then the other fields as `key=value`; an error's message follows, and its stack only from level
 * error up. Redaction happened before (the JSON is pino's own), so nothing secret reaches it.
 * A line that is not a JSON object is returned as it is.
 */
export function formatLogLine(json: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return json.trimEnd();
    entry = parsed as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const level = typeof entry['level'] === 'number' ? entry['level'] : 30;
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 19) : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !QUIET_FIELDS.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  const err = entry['err'] as { message?: unknown; stack?: unknown } | undefined;
  const parts = [time, colour ? `\u001b[${COLOURS[level] ?? '0'}m${name}\u001b[0m` : name, String(entry['msg'] ?? '')];
  if (err && typeof err === 'object' && err.message) parts.push(`(${String(err.message)})`);
  let line = [...parts, ...fields].filter(Boolean).join(' ');
  if (level >= 50 && err && typeof err.stack === 'string') line += `\n${err.stack.split('\n').slice(1).join('\n')}`;
  return line;
}

/** A pino destination writing {@link formatLogLine}'s lines to `out` (coloured when it is a terminal and NO_COLOR is unset). */
export function createPrettyDestination(out: NodeJS.WriteStream): DestinationStream {
  const colour = Boolean(out.isTTY) && !process.env['NO_COLOR'];
  return { write: (json: string) => void out.write(`${formatLogLine(json, colour)}\n`) };
}
