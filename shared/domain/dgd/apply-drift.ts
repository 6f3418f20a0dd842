/**
 * Whether a server-side apply would change anything: the apply intent compared with the object
 * as stored, through the stored object's `metadata.managedFields` for our field manager. No I/O.
 *
 * Server-side apply makes the applied configuration the manager's whole claim: a field in the
 * intent gets our value, and a field we owned before but leave out now is removed. So an apply
 * is a no-op exactly when (1) every field of the intent is stored with the intent's value, (2) we
 * still own each of them (a hand edit of a field moves its ownership to the editor: kubectl's
 * update takes it from us), and (3) we own nothing the intent no longer sets. Fields the API
 * server defaulted (a Service's `clusterIP`, a port's `protocol`) or others set are extra on the
 * stored object and are ignored: they are not in the intent and not ours.
 *
 * Source: Kubernetes "Server-Side Apply" (field management, managedFields, merge strategy: lists
 * keyed by `k:`, sets by `v:`, atomic fields as leaves); issue 17 item 3 ("compare the fields this
 * function owns on the stored object with the rendered ones, so a hand edit to one of them is
 * still put back"); upstream `SyncResource` compares a hash of the rendered object instead,
 * which misses hand edits.
 * @module
 */

/** One managedFields entry, as the API server stores it. */
interface ManagedFieldsEntry {
  readonly manager?: unknown;
  readonly operation?: unknown;
  readonly subresource?: unknown;
  readonly fieldsType?: unknown;
  readonly fieldsV1?: unknown;
}

/** A FieldsV1 node: `f:<field>`, `k:<json key>`, `v:<json value>`, `i:<index>`, `.` (the node itself). */
type FieldsNode = Readonly<Record<string, unknown>>;

/**
 * The first place where applying `intent` under `fieldManager` would change `stored`, as a path
 * (`spec.template.cliques[k:{"name":"worker"}].spec.replicas: not owned`), or undefined when the
 * apply would be a no-op.
 * In: the apply intent (apiVersion, kind, metadata.name/namespace and the fields we set); the
 * object as read (undefined: absent); our field manager; the subresource the intent is applied
 * to (`''` the object, `status` the status subresource). The fields owned are the union of our
 * manager's managedFields entries for that subresource (`scale` counts as the object).
 * Out: undefined (no-op) or a drift description. Order of keyed lists counts (an apply would
 * reorder them); extra elements others own do not. Intent fields that are `undefined` are
 * absent (JSON drops them). Pure.
 */
export function describeApplyDrift(intent: Readonly<Record<string, unknown>>, stored: Readonly<Record<string, unknown>> | undefined, fieldManager: string, subresource: '' | 'status' = ''): string | undefined {
  if (stored === undefined) return 'absent';
  const owned = ownedFields(stored, fieldManager, subresource);
  if (owned === undefined) return `not applied by ${fieldManager}`;
  const storedMeta = asRecord(stored['metadata']);
  const intentMeta = asRecord(intent['metadata']) ?? {};
  if (storedMeta === undefined || storedMeta['name'] !== intentMeta['name'] || (storedMeta['namespace'] ?? '') !== (intentMeta['namespace'] ?? '')) return 'metadata.name';
  // apiVersion, kind, name and namespace identify the object; managedFields does not list them.
  const { apiVersion: _apiVersion, kind: _kind, metadata: _metadata, ...rest } = intent;
  const { name: _name, namespace: _namespace, ...metadata } = intentMeta;
  const body: Record<string, unknown> = { ...rest };
  if (Object.values(metadata).some((value) => value !== undefined)) body['metadata'] = metadata;
  return walkMap('', owned, body, stored);
}

/** Our manager's field set for the subresource (entries merged), or undefined when we own nothing there. */
function ownedFields(stored: Readonly<Record<string, unknown>>, fieldManager: string, subresource: '' | 'status'): FieldsNode | undefined {
  const entries = asRecord(stored['metadata'])?.['managedFields'];
  if (!Array.isArray(entries)) return undefined;
  let merged: Record<string, unknown> | undefined;
  for (const entry of entries as ManagedFieldsEntry[]) {
    if (entry.manager !== fieldManager || entry.fieldsType !== 'FieldsV1') continue;
    const entrySubresource = typeof entry.subresource === 'string' ? entry.subresource : '';
    const matches = subresource === 'status' ? entrySubresource === 'status' : entrySubresource === '' || entrySubresource === 'scale';
    const fields = asRecord(entry.fieldsV1);
    if (!matches || fields === undefined) continue;
    merged = mergeFields(merged ?? {}, fields);
  }
  return merged;
}

function mergeFields(into: Record<string, unknown>, from: FieldsNode): Record<string, unknown> {
  const out: Record<string, unknown> = { ...into };
  for (const [key, value] of Object.entries(from)) {
    const existing = asRecord(out[key]);
    const next = asRecord(value) ?? {};
    out[key] = existing === undefined ? next : mergeFields(existing, next);
  }
  return out;
}

function childKeys(fields: FieldsNode): string[] {
  return Object.keys(fields).filter((key) => key !== '.');
}

function walkMap(path: string, fields: FieldsNode, intent: Readonly<Record<string, unknown>>, stored: unknown): string | undefined {
  const storedMap = asRecord(stored);
  const keys = childKeys(fields);
  const present = Object.entries(intent).filter(([, value]) => value !== undefined);
  if (storedMap === undefined) return present.length === 0 && stored === undefined ? undefined : `${path || '.'}: not a map`;
  // An atomic map (no child fields recorded) is owned whole: its stored value is the intent's
  // (plus what the API server defaulted inside it).
  if (keys.length === 0 && present.length > 0) return isSubset(intent, storedMap) ? undefined : `${path}: changed`;
  for (const [key, value] of present) {
    const at = path === '' ? key : `${path}.${key}`;
    const child = asRecord(fields[`f:${key}`]);
    if (child === undefined) {
      // An empty map or list we set may leave no field of its own.
      if (isEmpty(value) && isEmptyOrAbsent(storedMap[key])) continue;
      return `${at}: not owned`;
    }
    const drift = walk(at, child, value, storedMap[key]);
    if (drift !== undefined) return drift;
  }
  for (const key of keys) {
    if (!key.startsWith('f:')) return `${path}: owns ${key}`;
    const name = key.slice(2);
    if (intent[name] === undefined) return `${path === '' ? name : `${path}.${name}`}: owned but no longer set`;
  }
  return undefined;
}

function walk(path: string, fields: FieldsNode, intent: unknown, stored: unknown): string | undefined {
  if (intent === null) return stored === null || stored === undefined ? undefined : `${path}: changed`;
  if (Array.isArray(intent)) return walkList(path, fields, intent, stored);
  const map = asRecord(intent);
  if (map !== undefined) return walkMap(path, fields, map, stored);
  return isSubset(intent, stored) ? undefined : `${path}: changed`;
}

function walkList(path: string, fields: FieldsNode, intent: readonly unknown[], stored: unknown): string | undefined {
  if (!Array.isArray(stored)) return intent.length === 0 && stored === undefined ? undefined : `${path}: not a list`;
  const keys = childKeys(fields);
  // An atomic list is owned whole: same length, each element as the intent's (plus defaults).
  if (keys.length === 0) {
    if (intent.length === 0) return stored.length === 0 ? undefined : `${path}: changed`;
    return stored.length === intent.length && intent.every((element, index) => isSubset(element, stored[index])) ? undefined : `${path}: changed`;
  }
  const used = new Set<string>();
  let lastIndex = -1;
  for (const [index, element] of intent.entries()) {
    const match = matchElement(keys, used, element, stored);
    if (match === undefined) return `${path}[${index}]: not owned or absent`;
    used.add(match.key);
    if (match.storedIndex <= lastIndex) return `${path}[${index}]: order changed`;
    lastIndex = match.storedIndex;
    if (asRecord(element) !== undefined) {
      const drift = walk(`${path}[${match.key}]`, asRecord(fields[match.key]) ?? {}, element, stored[match.storedIndex]);
      if (drift !== undefined) return drift;
    }
  }
  const extra = keys.find((key) => !used.has(key));
  return extra === undefined ? undefined : `${path}[${extra}]: owned but no longer set`;
}

/** The field key (`k:` for a keyed element, `v:` for a set value) and stored position of one intent element. */
function matchElement(keys: readonly string[], used: ReadonlySet<string>, element: unknown, stored: readonly unknown[]): { key: string; storedIndex: number } | undefined {
  const map = asRecord(element);
  if (map === undefined) {
    const key = `v:${JSON.stringify(element)}`;
    const storedIndex = stored.findIndex((value) => isDeepEqual(value, element));
    return keys.includes(key) && !used.has(key) && storedIndex >= 0 ? { key, storedIndex } : undefined;
  }
  for (const key of keys) {
    if (!key.startsWith('k:') || used.has(key)) continue;
    const fieldKey = parseKey(key);
    if (fieldKey === undefined) continue;
    const entries = Object.entries(fieldKey);
    // A key field the intent leaves out was defaulted by the API server (a port's protocol).
    const isOurs = entries.some(([name]) => map[name] !== undefined) && entries.every(([name, value]) => map[name] === undefined || isDeepEqual(map[name], value));
    if (!isOurs) continue;
    const storedIndex = stored.findIndex((candidate) => {
      const storedElement = asRecord(candidate);
      return storedElement !== undefined && entries.every(([name, value]) => isDeepEqual(storedElement[name], value));
    });
    if (storedIndex >= 0) return { key, storedIndex };
  }
  return undefined;
}

function parseKey(key: string): Record<string, unknown> | undefined {
  try {
    return asRecord(JSON.parse(key.slice(2)) as unknown);
  } catch {
    return undefined;
  }
}

/** True when `stored` holds `intent`: equal scalars, maps with at least the intent's keys, lists element by element. */
function isSubset(intent: unknown, stored: unknown): boolean {
  if (intent === undefined) return true;
  if (Array.isArray(intent)) return Array.isArray(stored) ? stored.length === intent.length && intent.every((element, index) => isSubset(element, stored[index])) : intent.length === 0 && stored === undefined;
  const map = asRecord(intent);
  if (map !== undefined) {
    const storedMap = asRecord(stored);
    if (storedMap === undefined) return stored === undefined && Object.values(map).every((value) => value === undefined);
    return Object.entries(map).every(([key, value]) => isSubset(value, storedMap[key]) || (isEmpty(value) && isEmptyOrAbsent(storedMap[key])));
  }
  return intent === stored;
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  return isSubset(a, b) && isSubset(b, a);
}

function isEmpty(value: unknown): boolean {
  return (Array.isArray(value) && value.length === 0) || (asRecord(value) !== undefined && Object.values(asRecord(value) ?? {}).every((v) => v === undefined));
}

function isEmptyOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || isEmpty(value);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
