/**
 * Checking the options objects of eidkit/adserver where they are created, so a mistake in plain JavaScript
 * (`maxDays: -1`, `openrtb: '2.4'`, a number given as a string) fails at once with the field named, rather than
 * doing something else quietly on every ad call.
 */
import { ConfigurationError } from '../../core/config-error.js';

/** An option that is not what the function takes; `field` names it (`maxDays`, `partner.openrtb`). */
export class OptionsError extends ConfigurationError {
  override name = 'OptionsError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field} ${message}`, [{ path: field, message }]);
  }
}

/** What was given, quoted as written: `"3"` for a string, `3` for a number, `undefined`. */
export function given(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value);
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

/** `value` when it is a finite number > 0 (a whole one when `integer`), else an {@link OptionsError} for `field`. */
export function positiveOption(value: unknown, field: string, integer: boolean): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new OptionsError(field, `must be a ${integer ? 'whole ' : ''}number > 0 (got ${given(value)})`);
  }
  return value;
}
