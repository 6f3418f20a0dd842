/**
 * A deep copy of JSON-shaped data (plain objects, arrays, strings, numbers, booleans, null,
 * undefined), the hot-path replacement for `structuredClone` in rendering: Node's
 * `structuredClone` serializes through V8's value serializer and costs microseconds even for
 * a two-field env var, which made it most of a render's time (issue 17 item 4, profiled with
 * `node --cpu-prof` on bench/render.ts).
 * @module
 */

/**
 * Deep-copies `value` with the result `structuredClone` gives for JSON-shaped data: the same
 * own enumerable keys in the same order (keys holding `undefined` kept), arrays copied item by
 * item, primitives returned as they are. Anything else (a Date, Map, class instance) is handed
 * to `structuredClone`, so the result never differs from it. Pure.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const length = value.length;
    const out: unknown[] = new Array<unknown>(length);
    for (let index = 0; index < length; index += 1) out[index] = cloneJson(value[index] as unknown);
    return out as T;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = cloneJson((value as Record<string, unknown>)[key]);
    // An own `__proto__` key (JSON.parse makes one) must stay a key, not set the prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out as T;
}
