/**
 * The no-write decision of a status: whether a pass's computed status differs from the stored
 * one in any field the writer owns. A pass that finds nothing to change writes nothing, so a
 * quiet resync costs the API server reads only.
 *
 * Source: issue 17 item 3 ("A pass that finds nothing to change writes nothing: no apply, no
 * status write, no Event"); apimachinery `meta.SetStatusCondition` (lastTransitionTime moves only
 * when a condition's status changes, so it is no change of its own).
 * @module
 */
import { isDeepEqual } from './admission/common.js';

/** Which part of a status a writer owns (server-side apply: the fields it sends). */
export interface StatusOwnership {
  /** Top-level status fields this writer owns; absent: every field of either status (the whole status is its). */
  readonly fields?: readonly string[];
  /** The condition types it owns inside `conditions`; absent: every type of either list. */
  readonly conditionTypes?: readonly string[];
}

/** Unchanged: no write. Changed: write, naming the owned fields that differ (`status.<field>`, `status.conditions[<type>]`). */
export type StatusWrite = { readonly kind: 'Unchanged' } | { readonly kind: 'Changed'; readonly changed: readonly string[] };

type Obj = Readonly<Record<string, unknown>>;

function asObject(value: unknown): Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

function conditionsOf(status: Obj): readonly Obj[] {
  const conditions = status['conditions'];
  return Array.isArray(conditions) ? conditions.map(asObject) : [];
}

function withoutTransitionTime(condition: Obj | undefined): Obj | undefined {
  if (condition === undefined) return undefined;
  const { lastTransitionTime: _ignored, ...rest } = condition;
  return rest;
}

function changedConditions(stored: Obj, computed: Obj, types: readonly string[] | undefined): string[] {
  const storedList = conditionsOf(stored);
  const computedList = conditionsOf(computed);
  const typeOf = (c: Obj): string => (typeof c['type'] === 'string' ? c['type'] : '');
  const all = types ?? [...new Set([...storedList.map(typeOf), ...computedList.map(typeOf)])];
  return all
    .filter((type) => !isDeepEqual(withoutTransitionTime(storedList.find((c) => typeOf(c) === type)), withoutTransitionTime(computedList.find((c) => typeOf(c) === type))))
    .map((type) => `status.conditions[${type}]`);
}

/**
 * Decides whether to write a status.
 * In: the stored `status` (any shape; absent as `{}`), the status the pass computed (the fields
 * it would apply), and what the writer owns. A field absent from `computed` but owned and
 * present in `stored` is a change (server-side apply would remove it); `undefined` is absent;
 * conditions compare by `type`, order and `lastTransitionTime` ignored.
 * Out: Unchanged, or Changed with the differing owned fields, sorted. Failures: none. Pure.
 */
export function decideStatusWrite(stored: unknown, computed: Obj, owned: StatusOwnership = {}): StatusWrite {
  const before = asObject(stored);
  const fields = owned.fields ?? [...new Set([...Object.keys(before), ...Object.keys(computed)])];
  const changed: string[] = [];
  for (const field of fields) {
    if (field === 'conditions') changed.push(...changedConditions(before, computed, owned.conditionTypes));
    else if (!isDeepEqual(before[field], computed[field])) changed.push(`status.${field}`);
  }
  return changed.length === 0 ? { kind: 'Unchanged' } : { kind: 'Changed', changed: changed.sort() };
}
