import type { EventType } from '../schemas/events.ts';

/**
 * The event a PATCH of an agent's status emits, or null. The specification fires
 * `widget.activated` / `widget.paused` whenever PATCH changes the status to `active` /
 * `paused`, so a draft agent set to either emits too; an unchanged status emits nothing.
 */
export function statusChangeEvent(before: string, after: string): EventType | null {
  if (before === after) return null;
  if (after === 'active') return 'widget.activated';
  if (after === 'paused') return 'widget.paused';
  return null;
}
