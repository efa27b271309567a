import { EVENTS, type EventType } from '../schemas/events.ts';
import { compileShapeCheck, SHAPE_CHECKS } from '../validation.ts';

const checks = new Map<EventType, (value: unknown) => string[] | null>();

/**
 * In test mode (SHAPE_CHECKS), holds an event's `data` to the schema its type publishes in the
 * OpenAPI document's `webhooks`: a mismatch throws, so the change that emitted it fails in the test.
 */
export function checkEventShape(type: EventType, data: unknown): void {
  if (!SHAPE_CHECKS) return;
  let check = checks.get(type);
  if (!check) checks.set(type, (check = compileShapeCheck(EVENTS[type].data)));
  // What a receiver gets: the JSON text of the data.
  const errors = check(JSON.parse(JSON.stringify(data)));
  if (!errors) return;
  const message = `event drift: ${type} data off its schema:\n  ${errors.join('\n  ')}\n  data: ${JSON.stringify(data).slice(0, 2000)}`;
  process.stderr.write(`${message}\n`);
  throw new Error(message);
}
