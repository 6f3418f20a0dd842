/**
 * The quiet-DGD decision (issue 17 item 3: "an event for a quiet DGD should cost about one
 * read"): a record answers only for the same stored DGD (uid and resourceVersion), not under
 * deletion, within its age bound; any changed input, a child's event, an adapter's event or a
 * resync tick means the full pass. The wired route is tested in functions/reconcile/quiet.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { QUIET_PASS_MAX_AGE_MS, createQuietPassRecords, isQuietDgdEvent, quietPassRecordOf, type QuietPassParent, type QuietPassRecord } from './quiet-pass.js';

const T0 = Date.parse('2026-12-02T12:00:00Z');
const RECORD: QuietPassRecord = { uid: 'u-1', resourceVersion: '41', recordedAtMs: T0 };

function aParent(overrides: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> } = {}): QuietPassParent {
  return deepFreeze({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'g', namespace: 'n', uid: 'u-1', resourceVersion: '41', generation: 3, ...overrides.metadata },
    spec: { components: [{ name: 'frontend', type: 'frontend' }], ...overrides.spec },
  });
}

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly record: QuietPassRecord | undefined;
  readonly parent: QuietPassParent;
  readonly nowMs: number;
  readonly want: boolean;
}

const rows: Row[] = [
  { name: 'the same stored DGD, seen quiet a moment ago: no pass', reason: 'same uid and resourceVersion: the same stored object, and no child event since', record: RECORD, parent: aParent(), nowMs: T0 + 1_000, want: true },
  { name: 'at exactly the age bound: no pass', reason: `a record answers for ${QUIET_PASS_MAX_AGE_MS} ms`, record: RECORD, parent: aParent(), nowMs: T0 + QUIET_PASS_MAX_AGE_MS, want: true },
  { name: 'no record: the full pass', reason: 'a miss is always the full pass (a new instance after scale-to-zero starts empty)', record: undefined, parent: aParent(), nowMs: T0, want: false },
  { name: 'a new resourceVersion (spec, annotations, labels or status written): the full pass', reason: 'every write to the DGD moves its resourceVersion', record: RECORD, parent: aParent({ metadata: { resourceVersion: '42' } }), nowMs: T0 + 1_000, want: false },
  { name: 'a new generation comes with a new resourceVersion: the full pass', reason: 'a spec change', record: RECORD, parent: aParent({ metadata: { resourceVersion: '43', generation: 4 } }), nowMs: T0 + 1_000, want: false },
  { name: 'another uid (deleted and created again under the same name): the full pass', reason: 'a record is of one object', record: RECORD, parent: aParent({ metadata: { uid: 'u-2' } }), nowMs: T0 + 1_000, want: false },
  { name: 'under deletion: the full pass', reason: 'a deletionTimestamp is a change the pass must see', record: RECORD, parent: aParent({ metadata: { deletionTimestamp: '2026-12-02T12:00:01Z' } }), nowMs: T0 + 1_000, want: false },
  { name: 'older than the age bound: the full pass', reason: 'changes with no event of their own (discovery identity, claims) are caught by a full pass at least that often', record: RECORD, parent: aParent(), nowMs: T0 + QUIET_PASS_MAX_AGE_MS + 1, want: false },
  { name: 'a clock that went back: the full pass', reason: 'an age below zero is not trusted', record: RECORD, parent: aParent(), nowMs: T0 - 1, want: false },
  { name: 'a DGD without a resourceVersion: the full pass', reason: 'nothing to compare', record: RECORD, parent: aParent({ metadata: { resourceVersion: undefined } }), nowMs: T0, want: false },
];

describe('isQuietDgdEvent: "an event for a quiet DGD should cost about one read" (issue 17 item 3)', () => {
  it.each(rows)('$name', ({ record, parent, nowMs, want }) => {
    expect(isQuietDgdEvent(record, parent, nowMs)).toBe(want);
  });

  it('gives the same answer for the same input', () => {
    for (const row of rows) expect(isQuietDgdEvent(row.record, row.parent, row.nowMs)).toBe(isQuietDgdEvent(row.record, row.parent, row.nowMs));
  });
});

describe('quietPassRecordOf: what a pass that wrote nothing may leave', () => {
  it.each([
    { name: 'an ordinary DGD: its uid and resourceVersion, at the time given', parent: aParent(), want: { uid: 'u-1', resourceVersion: '41', recordedAtMs: T0 } },
    { name: 'a DGD with an LPX component: none (its pass reads the LPXGraphDeployment, whose events are another route\'s)', parent: aParent({ spec: { components: [{ name: 'lpx', type: 'lpx' }] } }), want: undefined },
    { name: 'a DGD under deletion: none', parent: aParent({ metadata: { deletionTimestamp: '2026-12-02T12:00:01Z' } }), want: undefined },
    { name: 'a DGD without a uid: none', parent: aParent({ metadata: { uid: undefined } }), want: undefined },
  ])('$name', ({ parent, want }) => {
    expect(quietPassRecordOf(parent, T0)).toEqual(want);
  });
});

describe('createQuietPassRecords: invalidated by any event for a child, an adapter event, a resync tick', () => {
  it('keeps a record until something invalidates it', () => {
    const records = createQuietPassRecords();
    expect(records.record('n', 'g', records.begin(), RECORD)).toBe(true);
    expect(records.find('n', 'g')).toEqual(RECORD);
    expect(records.find('n', 'other')).toBeUndefined();
  });

  it.each([
    { name: "an event for one of its children drops the DGD's record", invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidate('n', 'g'), kept: ['m/g', 'n/h'] },
    { name: 'an adapter event drops the records of its namespace', invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidateNamespace('n'), kept: ['m/g'] },
    { name: 'a resync tick drops every record', invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidateAll(), kept: [] },
  ])('$name', ({ invalidate, kept }) => {
    const records = createQuietPassRecords();
    for (const [namespace, name] of [['n', 'g'], ['n', 'h'], ['m', 'g']] as const) records.record(namespace, name, records.begin(), RECORD);
    invalidate(records);
    const held = [['n', 'g'], ['n', 'h'], ['m', 'g']].filter(([namespace, name]) => records.find(namespace ?? '', name ?? '') !== undefined).map(([namespace, name]) => `${namespace}/${name}`);
    expect(held.sort()).toEqual([...kept].sort());
  });

  it.each([
    { name: 'the DGD itself', invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidate('n', 'g') },
    { name: 'its namespace (an adapter event)', invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidateNamespace('n') },
    { name: 'every record (a resync tick)', invalidate: (r: ReturnType<typeof createQuietPassRecords>) => r.invalidateAll() },
  ])('refuses the record of a pass that began before an invalidation of $name (it may have read a child before the child changed)', ({ invalidate }) => {
    const records = createQuietPassRecords();
    const ticket = records.begin();
    invalidate(records);
    expect(records.record('n', 'g', ticket, RECORD)).toBe(false);
    expect(records.find('n', 'g')).toBeUndefined();
    // A pass that began after it records.
    expect(records.record('n', 'g', records.begin(), RECORD)).toBe(true);
  });

  it("another DGD's invalidation does not refuse this one's record", () => {
    const records = createQuietPassRecords();
    const ticket = records.begin();
    records.invalidate('n', 'other');
    expect(records.record('n', 'g', ticket, RECORD)).toBe(true);
  });

  it('holds at most maxEntries DGDs, oldest first out, and an invalidation pushed out still refuses older passes', () => {
    const records = createQuietPassRecords({ maxEntries: 2 });
    const ticket = records.begin();
    records.invalidate('n', 'a');
    records.record('n', 'b', records.begin(), RECORD);
    records.record('n', 'c', records.begin(), RECORD);
    expect(records.size).toBe(2);
    expect(records.find('n', 'b')).toEqual(RECORD);
    // 'a' was pushed out with its invalidation: a pass that began before it may not record.
    expect(records.record('n', 'a', ticket, RECORD)).toBe(false);
    expect(records.record('n', 'a', records.begin(), RECORD)).toBe(true);
    expect(records.size).toBe(2);
  });
});
