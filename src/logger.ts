import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs on stdout. Anything that could hold a credential is redacted by path,
 * and request logging never includes headers or bodies in the first place.
 */
export function createLogger(level: string, base: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'agent-management-service', ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['*.authorization', '*.Authorization', '*.token', '*.password', '*.secret', '*.token_hash', 'token', 'password', 'secret', 'LLM_API_KEY', '*.LLM_API_KEY', 'apiKey', '*.apiKey'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
