/**
 * The quiet-DGD decision: whether an event for a DynamoGraphDeployment can be answered from the
 * DGD alone, because this process already ran a full pass over the very same stored DGD (same
 * uid and resourceVersion) that wrote nothing, and no event for one of its children (nor a
 * resync tick) has come since.
 *
 * Why it is sound. An event is a hint that names an object (DESIGN.md "Events in, answers
 * out"); the full pass is what makes the world right. A record only stands in for a pass whose
 * every input is known to be as it was when a pass found nothing to write:
 * - the DGD: its resourceVersion changes on every write to it (spec, generation, labels,
 *   annotations, status, deletionTimestamp), so an equal uid and resourceVersion is the same
 *   stored object, read now;
 * - the children (PodCliqueSets, PodCliques, PodCliqueScalingGroups, Services): every change to
 *   one arrives as that child's own event, which removes the record before its full pass
 *   (`invalidate`), so a hand edit to a child is put back and status that depends on a child's
 *   status is recomputed by the pass that event starts, wherever it runs;
 * - scaling adapters: their events remove the records of their namespace;
 * - a pass that wrote anything (an apply, a status write, an Event, a scale, a create, a
 *   delete), or did not end Done, records nothing: the next event does the full pass;
 * - a record made by a pass that overlapped an invalidation of its DGD is refused (`begin`
 *   takes a ticket; an invalidation after it wins), so a pass that read a child before the
 *   child changed cannot mark the DGD quiet;
 * - records are dropped on every resync tick (whose passes always do the full work, from one
 *   LIST per kind) and answer only for `maxAgeMs` after the pass that made them, so a lost child
 *   event, or a change with no event of its own (the discovery ServiceAccount/Role/RoleBinding,
 *   GMS claim templates, v1alpha1 claims, a Grove CRD upgrade), is caught as it was before
 *   (by the resync), and a duplicate DGD event does the full pass again at least that often.
 * - DGDs with LPX components are never recorded (their pass reads the LPXGraphDeployment,
 *   whose events are another route's).
 *
 * With several instances (Knative scaling out) each holds its own records: a child's event
 * reaches one instance, whose full pass handles it; another instance's record for the same DGD
 * then only answers DGD events at the resourceVersion it saw quiet, which the child change did
 * not alter and which that other pass has already handled. A record never makes a pass do
 * *more*, and no instance needs another's records. With Knative scaling to zero the records go
 * with the process: a new instance starts empty, and every first event is a full pass (a miss
 * is always the full pass). Nothing is persisted, nothing is shared.
 *
 * The records are a bounded in-memory map (`maxEntries`, oldest first out) with no clock of its
 * own: callers pass `nowMs`. Pure data, no I/O.
 *
 * Source: issue 17 item 3 ("an event for a quiet DGD should cost about one read"); DESIGN.md
 * "Events in, answers out" (level-triggered: a miss or a dropped record is the full pass).
 * @module
 */

/** How long a record answers for after the pass that made it, in milliseconds (one minute). */
export const QUIET_PASS_MAX_AGE_MS = 60_000;
/** At most this many DGDs are remembered (oldest first out); about 200 bytes each. */
export const QUIET_PASS_MAX_ENTRIES = 10_000;

/** What a full pass that wrote nothing saw: the DGD as stored, and when. */
export interface QuietPassRecord {
  readonly uid: string;
  readonly resourceVersion: string;
  /** Milliseconds since the epoch at the end of that pass. */
  readonly recordedAtMs: number;
}

/** The DGD fields the decision reads (a stored object, unparsed). */
export interface QuietPassParent {
  readonly metadata: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

/** A pass's place in the invalidation order, taken when it starts (`begin`). */
export type QuietPassTicket = number;

/** A process's records of quiet DGDs, keyed by `namespace/name`. */
export interface QuietPassRecords {
  /** The ticket a pass takes before its first read; `record` refuses it if the DGD was invalidated since. */
  begin(): QuietPassTicket;
  /** The record of a DGD, if any. */
  find(namespace: string, name: string): QuietPassRecord | undefined;
  /** Stores what a pass that wrote nothing saw; false (nothing stored) when the DGD was invalidated after `ticket`. */
  record(namespace: string, name: string, ticket: QuietPassTicket, record: QuietPassRecord): boolean;
  /** Drops a DGD's record (an event for one of its children). */
  invalidate(namespace: string, name: string): void;
  /**
   * Drops the records of every DGD in a namespace (an event for a scaling adapter there), and
   * refuses the records of every pass begun before it, in any namespace (simpler than tracking
   * which DGDs the namespace held; adapter events are rare).
   */
  invalidateNamespace(namespace: string): void;
  /** Drops every record (a resync tick). */
  invalidateAll(): void;
  /** How many DGDs are remembered (records and invalidations). */
  readonly size: number;
}

interface Entry {
  readonly record: QuietPassRecord | undefined;
  /** The sequence number of this DGD's last invalidation (0: none). */
  readonly invalidatedAt: number;
}

/**
 * Creates an empty set of records. `maxEntries` bounds the memory (oldest first out; an entry
 * pushed out takes its invalidation with it into a floor below which no ticket records).
 * Pure data structure: no clock, no I/O.
 */
export function createQuietPassRecords(options: { readonly maxEntries?: number } = {}): QuietPassRecords {
  const maxEntries = options.maxEntries ?? QUIET_PASS_MAX_ENTRIES;
  const entries = new Map<string, Entry>();
  let sequence = 0;
  // Invalidations no longer in `entries` (pushed out, or invalidateAll): a ticket older than this refuses.
  let floor = 0;
  const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

  function put(key: string, entry: Entry): void {
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next();
      if (oldest.done === true) break;
      floor = Math.max(floor, entries.get(oldest.value)?.invalidatedAt ?? 0);
      entries.delete(oldest.value);
    }
  }

  return {
    begin: () => sequence,
    find: (namespace, name) => entries.get(keyOf(namespace, name))?.record,
    record(namespace, name, ticket, record) {
      const key = keyOf(namespace, name);
      const invalidatedAt = entries.get(key)?.invalidatedAt ?? 0;
      if (invalidatedAt > ticket || floor > ticket) return false;
      put(key, { record, invalidatedAt });
      return true;
    },
    invalidate(namespace, name) {
      sequence += 1;
      put(keyOf(namespace, name), { record: undefined, invalidatedAt: sequence });
    },
    invalidateNamespace(namespace) {
      sequence += 1;
      floor = sequence;
      const prefix = `${namespace}/`;
      for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
    },
    invalidateAll() {
      sequence += 1;
      floor = sequence;
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}

/**
 * Whether an event for this DGD, read now, needs no pass: a record exists for the same uid and
 * resourceVersion, made at most `maxAgeMs` before `nowMs`, and the DGD is not under deletion.
 * In: the record (or undefined), the DGD as read now (metadata.uid, .resourceVersion,
 * .deletionTimestamp), the time in ms, the age bound in ms. Out: true to answer Done with no
 * more reads or writes; false for the full pass. Pure.
 * Source: this module's docstring (why it is sound); issue 17 item 3.
 */
export function isQuietDgdEvent(record: QuietPassRecord | undefined, parent: QuietPassParent, nowMs: number, maxAgeMs: number = QUIET_PASS_MAX_AGE_MS): boolean {
  if (record === undefined) return false;
  const { uid, resourceVersion } = parent.metadata;
  if (uid === undefined || resourceVersion === undefined) return false;
  if (parent.metadata['deletionTimestamp'] !== undefined) return false;
  if (record.uid !== uid || record.resourceVersion !== resourceVersion) return false;
  const age = nowMs - record.recordedAtMs;
  return age >= 0 && age <= maxAgeMs;
}

/**
 * The record a full pass over this DGD may leave, or undefined when it may leave none: the DGD
 * lacks a uid or resourceVersion, is under deletion, or has an LPX component (its pass reads
 * the LPXGraphDeployment, whose events do not reach the DGD's records). The caller stores it
 * only when that pass ended Done and wrote nothing. Pure.
 */
export function quietPassRecordOf(parent: QuietPassParent, nowMs: number): QuietPassRecord | undefined {
  const { uid, resourceVersion } = parent.metadata;
  if (uid === undefined || resourceVersion === undefined || parent.metadata['deletionTimestamp'] !== undefined) return undefined;
  const components = (parent['spec'] as { components?: unknown } | undefined)?.components;
  if (Array.isArray(components) && components.some((component: unknown) => (component as { type?: unknown } | null)?.type === 'lpx')) return undefined;
  return { uid, resourceVersion, recordedAtMs: nowMs };
}
