/**
 * Bounds what a log line can carry. Event data, admission objects and API errors hold user
 * input (a 1 MB annotation, a 3 MiB object); logged verbatim it would fill the log pipeline and
 * cost memory per line. Every string is cut to MAX_LOGGED_STRING_CHARS, arrays to
 * MAX_LOGGED_ARRAY_ITEMS, nesting to MAX_LOGGED_DEPTH, each cut saying how much was left out.
 * Installed as pino's `formatters.log` (lifecycle.ts), so it holds for every field of every
 * line. Child bindings are serialised once when the child is made, outside that formatter, so
 * the hosts bound what they bind (event ids, types and names) with {@link truncateForLog}.
 * @module
 */

/** Longest string kept whole in a log field, in characters. */
export const MAX_LOGGED_STRING_CHARS = 512;
/** Most array items kept in a log field. */
export const MAX_LOGGED_ARRAY_ITEMS = 32;
/** Deepest nesting kept in a log field. */
export const MAX_LOGGED_DEPTH = 6;

/**
 * A string cut to `max` characters with a note of the rest, e.g. `abc…(+997 chars)`; any other
 * value unchanged. Pure.
 */
export function truncateForLog(value: string, max?: number): string;
export function truncateForLog<T>(value: T, max?: number): T | string;
export function truncateForLog<T>(value: T, max: number = MAX_LOGGED_STRING_CHARS): T | string {
  if (typeof value !== 'string' || value.length <= max) return value;
  return `${value.slice(0, max)}…(+${value.length - max} chars)`;
}

function bound(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return truncateForLog(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_LOGGED_DEPTH) return Array.isArray(value) ? `[array of ${value.length}]` : '[object]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_LOGGED_ARRAY_ITEMS).map((item) => bound(item, depth + 1));
    if (value.length > MAX_LOGGED_ARRAY_ITEMS) kept.push(`…(+${value.length - MAX_LOGGED_ARRAY_ITEMS} items)`);
    return kept;
  }
  if (value instanceof Error) {
    // pino's err serializer runs after this formatter: hand it an error of the same class
    // (its `type`) with bounded text.
    const copy = Object.create(Object.getPrototypeOf(value) as object) as Error;
    Object.defineProperty(copy, 'message', { value: truncateForLog(value.message), enumerable: false, writable: true, configurable: true });
    if (value.stack !== undefined) Object.defineProperty(copy, 'stack', { value: truncateForLog(value.stack, MAX_LOGGED_STRING_CHARS * 4), enumerable: false, writable: true, configurable: true });
    if (value.cause !== undefined) Object.defineProperty(copy, 'cause', { value: bound(value.cause, depth + 1), enumerable: false, writable: true, configurable: true });
    for (const [key, field] of Object.entries(value)) {
      Object.defineProperty(copy, key, { value: bound(field, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // defineProperty: a `__proto__` key in user input is a field like any other, not a prototype.
    Object.defineProperty(out, key, { value: bound(field, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The fields of one log line with every string, array and nesting bounded (module docs).
 * In: pino's merged object for the line. Out: a new object, or the input itself when every field
 * is already within the bounds (flat strings, numbers, booleans); the input is never changed. Pure.
 */
export function boundLogFields(fields: Record<string, unknown>): Record<string, unknown> {
  return isAlreadyBounded(fields) ? fields : (bound(fields, 0) as Record<string, unknown>);
}

/**
 * Whether a line's fields need no bounding: every own field a number, boolean, null, undefined
 * or a string within {@link MAX_LOGGED_STRING_CHARS} (the common line, e.g. one per answered
 * AdmissionReview). `bound` would copy such an object field for field, changing nothing; the
 * copy cost more than the rest of the line. A prototype other than Object's (an Error, a class
 * instance) is left to `bound`. Pure.
 */
function isAlreadyBounded(fields: Record<string, unknown>): boolean {
  if (Object.getPrototypeOf(fields) !== Object.prototype) return false;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) return false;
    const value = fields[key];
    if (typeof value === 'string') {
      if (value.length > MAX_LOGGED_STRING_CHARS) return false;
    } else if (typeof value === 'object' ? value !== null : typeof value !== 'number' && typeof value !== 'boolean' && value !== undefined) return false;
  }
  return true;
}
