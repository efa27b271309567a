import { describe, expect, it } from 'vitest';
import { createLogger, formatLogLine } from './logger.ts';

/** The JSON lines a logger writes, as pino writes them. */
function capture(level = 'info'): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger(level, { role: 'start' }, { write: (line: string) => { lines.push(line); } }), lines };
}

describe('LOG_FORMAT=pretty (issue 42)', () => {
  it('reads as one line a person reads: time, level, message, then the fields, without the ones every line carries', () => {
    const { log, lines } = capture();
    log.info({ address: '127.0.0.1:7233', ui: 'http://127.0.0.1:8233' }, 'Temporal dev server started');
    const line = formatLogLine(lines[0]!);
    expect(line).toMatch(/^\d\d:\d\d:\d\d INFO {2}Temporal dev server started address=127\.0\.0\.1:7233 ui=http:\/\/127\.0\.0\.1:8233$/);
    expect(line).not.toMatch(/service=|role=|pid=|hostname=|\{/);
  });

  it('quotes a value with spaces, shows an error by its message, and its stack only from level error up', () => {
    const { log, lines } = capture();
    const err = new Error('write CONNECTION_CLOSED 127.0.0.1:5432');
    log.warn({ err, note: 'two words' }, 'database connection lost');
    log.error({ err }, 'service stop failed');
    const [warn, error] = lines.map((l) => formatLogLine(l));
    expect(warn).toMatch(/WARN {2}database connection lost \(write CONNECTION_CLOSED 127\.0\.0\.1:5432\) note="two words"$/);
    expect(warn!.split('\n')).toHaveLength(1);
    expect(error!.split('\n')[0]).toMatch(/ERROR service stop failed \(write CONNECTION_CLOSED/);
    expect(error!.split('\n')[1]).toMatch(/^\s+at /);
  });

  it('keeps redaction (it formats what pino already redacted) and passes a line that is not JSON through', () => {
    const { log, lines } = capture();
    log.info({ token: 'ut_secret_value' }, 'issued');
    expect(formatLogLine(lines[0]!)).not.toContain('ut_secret_value');
    expect(formatLogLine('plain text\n')).toBe('plain text');
  });

  it('colours only the level, and only when asked', () => {
    const { log, lines } = capture();
    log.info('ready');
    expect(formatLogLine(lines[0]!, true)).toContain('\u001b[32mINFO \u001b[0m ready');
    expect(formatLogLine(lines[0]!, false)).not.toContain('\u001b[');
  });
});

describe('personal data in logs (issue 47: always redacted)', () => {
  it('masks e-mail addresses, phone numbers, cards and IBANs in messages, fields and errors; keeps ids', () => {
    const { log, lines } = capture();
    log.info({ to: 'jane.doe@example.com', call: { from: '+1 415 555 0142' }, card: '4111 1111 1111 1111', request_id: 'jane@example.com' },
      'mailed jane.doe@example.com about DE89 3704 0044 0532 0130 00');
    log.error({ err: new Error('rejected +14155550142') }, 'failed');
    const all = lines.join('');
    for (const secret of ['jane.doe@example.com', '415 555 0142', '+14155550142', '4111 1111 1111 1111', 'DE89 3704']) expect(all).not.toContain(secret);
    expect(JSON.parse(lines[0]!)).toMatchObject({ to: '•••@•••', call: { from: '+1 ••• ••• 0142' }, card: '•••• •••• •••• 1111', request_id: 'jane@example.com' });
    expect(JSON.parse(lines[1]!).err.message).toBe('rejected +1 ••• ••• 0142');
  });
});
