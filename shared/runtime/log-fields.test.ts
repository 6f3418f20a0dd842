import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';

import { MAX_LOGGED_ARRAY_ITEMS, MAX_LOGGED_STRING_CHARS, boundLogFields, truncateForLog } from './log-fields.js';

describe('log field bounds (issue 12: "a 1 MB field is logged verbatim")', () => {
  it('cuts a string to MAX_LOGGED_STRING_CHARS and says how much was left out', () => {
    const cut = truncateForLog('x'.repeat(1_000_000));
    expect(cut).toBe(`${'x'.repeat(MAX_LOGGED_STRING_CHARS)}…(+${1_000_000 - MAX_LOGGED_STRING_CHARS} chars)`);
    expect(truncateForLog('short')).toBe('short');
    expect(truncateForLog(42)).toBe(42);
  });

  it('bounds nested strings, long arrays and deep nesting, leaving the input unchanged', () => {
    const input = {
      reason: 'y'.repeat(2000),
      items: Array.from({ length: 40 }, (_, index) => index),
      deep: { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } },
    };
    const frozen = structuredClone(input);
    const bounded = boundLogFields(input);
    expect((bounded['reason'] as string).length).toBeLessThan(MAX_LOGGED_STRING_CHARS + 32);
    expect(bounded['items']).toEqual([...Array.from({ length: MAX_LOGGED_ARRAY_ITEMS }, (_, index) => index), `…(+${40 - MAX_LOGGED_ARRAY_ITEMS} items)`]);
    expect(bounded['deep']).toEqual({ a: { b: { c: { d: { e: '[object]' } } } } });
    expect(input).toEqual(frozen);
  });

  it('hands a line already within bounds (flat strings up to MAX_LOGGED_STRING_CHARS, numbers, booleans) to pino as it is, and copies any other', () => {
    const flat = { uid: 'u-1', operation: 'CREATE', namespace: undefined, allowed: true, issues: 0, durationMs: 0.25, name: 'n'.repeat(MAX_LOGGED_STRING_CHARS), none: null };
    expect(boundLogFields(flat)).toBe(flat);
    const long = { uid: 'u'.repeat(MAX_LOGGED_STRING_CHARS + 1) };
    expect(boundLogFields(long)).not.toBe(long);
    expect(boundLogFields(long)['uid']).toBe(`${'u'.repeat(MAX_LOGGED_STRING_CHARS)}…(+1 chars)`);
    const nested = { fields: { a: 1 } };
    expect(boundLogFields(nested)).not.toBe(nested);
    expect(boundLogFields(nested)).toEqual(nested);
    const proto = JSON.parse('{"__proto__": "p"}') as Record<string, unknown>;
    expect(Object.keys(boundLogFields(proto))).toEqual(['__proto__']);
  });

  it('keeps a "__proto__" key from user input as a plain field, never as a prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "c"}') as Record<string, unknown>;
    const bounded = boundLogFields(input);
    expect(Object.getPrototypeOf(bounded)).toBe(Object.prototype);
    expect(Object.keys(bounded)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('as pino\'s log formatter, bounds every field of a line, errors included (their class kept)', () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done(); } });
    const log = pino({ formatters: { log: boundLogFields } }, sink);
    log.warn({ field: 'f'.repeat(1_000_000), err: new RangeError('e'.repeat(100_000)) }, 'Rejected event');
    const [line = ''] = lines;
    expect(line.length).toBeLessThan(4000);
    const parsed = JSON.parse(line) as { field: string; err: { type: string; message: string } };
    expect(parsed.field).toBe(`${'f'.repeat(MAX_LOGGED_STRING_CHARS)}…(+${1_000_000 - MAX_LOGGED_STRING_CHARS} chars)`);
    expect(parsed.err.type).toBe('RangeError');
    expect(parsed.err.message).toBe(`${'e'.repeat(MAX_LOGGED_STRING_CHARS)}…(+${100_000 - MAX_LOGGED_STRING_CHARS} chars)`);
  });
});
