/**
 * Reads answered from memory: a Kube whose get and list of some kinds are served from objects
 * listed once (a resync's bulk read: one paginated LIST per kind, grouped in memory), and whose
 * other gets are remembered for the life of the wrapper (one pass). Writes go to the API server;
 * a get of a written object is answered with what the write stored (an apply's answer) or read
 * again, and lists of its kind in its namespace go to the API server, so a pass sees its writes.
 *
 * The wrapper holds nothing beyond one resync or one event: a snapshot may be as old as the
 * resync; what changed since arrives as its own event (DESIGN.md "Events in, answers out").
 * @module
 * @see ../../../shared/DESIGN.md "Scale" (a resync reads each kind with one paginated LIST)
 */
import type { ApplyObject, Kube, KubeObject, ListOptions, ObjectRef } from './client.js';

/** The objects of one kind, as one LIST returned them (every namespace). */
export interface ListedKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly objects: readonly KubeObject[];
}

/** What a snapshot served and what it passed to the API server, by verb (for benchmarks and logs). */
export interface SnapshotCounts {
  servedGets: number;
  servedLists: number;
}

/**
 * Wraps `kube` so reads of the `listed` kinds are answered from those objects (a get of a name
 * not listed is Gone; a list filters by namespace and an equality label selector, `a=b,c==d`;
 * any other selector goes to the API server), and a get of any other kind is sent once per
 * wrapper. Matching is by apiVersion and kind exactly. Writes pass through and mark their
 * object as written: its reads, and lists of its kind in its namespace, go to the API server
 * from then on. `counts`, when given, is incremented per read served from memory.
 */
export function snapshotKube(kube: Kube, listed: readonly ListedKind[] = [], counts?: SnapshotCounts): Kube {
  const kinds = new Map<string, Map<string, KubeObject>>();
  for (const { apiVersion, kind, objects } of listed) {
    const byKey = new Map<string, KubeObject>();
    for (const object of objects) byKey.set(keyOf(object.metadata.namespace, object.metadata.name), object);
    kinds.set(kindOf(apiVersion, kind), byKey);
  }
  const remembered = new Map<string, Promise<KubeObject | undefined>>();
  const written = new Set<string>();
  const writtenNamespaces = new Set<string>();

  function markWritten(ref: { readonly apiVersion: string; readonly kind: string; readonly namespace?: string | undefined; readonly name: string }): void {
    const key = `${kindOf(ref.apiVersion, ref.kind)} ${keyOf(ref.namespace, ref.name)}`;
    written.add(key);
    remembered.delete(key);
    writtenNamespaces.add(`${kindOf(ref.apiVersion, ref.kind)} ${ref.namespace ?? ''}`);
  }

  /**
   * Sends a write. When the API server answers with the object as now stored (an apply, a status
   * apply, a replace), a get of it is answered with that; otherwise (a delete, a scale, a
   * failure) its reads go to the API server again.
   */
  async function writing<T>(ref: ObjectRef | ApplyObject, write: () => Promise<T>, answersStored = false): Promise<T> {
    const target = 'metadata' in ref ? { apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.metadata.namespace, name: ref.metadata.name } : ref;
    markWritten(target);
    let stored: T | undefined;
    try {
      stored = await write();
      return stored;
    } finally {
      markWritten(target);
      if (answersStored && stored !== undefined) remembered.set(`${kindOf(target.apiVersion, target.kind)} ${keyOf(target.namespace, target.name)}`, Promise.resolve(stored as KubeObject));
    }
  }

  return {
    fieldManager: kube.fieldManager,
    get(ref) {
      const kind = kindOf(ref.apiVersion, ref.kind);
      const key = `${kind} ${keyOf(ref.namespace, ref.name)}`;
      const byKey = kinds.get(kind);
      const known = remembered.get(key);
      if (byKey !== undefined && !written.has(key)) {
        if (counts !== undefined) counts.servedGets += 1;
        return Promise.resolve(byKey.get(keyOf(ref.namespace, ref.name)));
      }
      if (known !== undefined) {
        if (counts !== undefined) counts.servedGets += 1;
        return known;
      }
      const reading = kube.get(ref);
      remembered.set(key, reading);
      // A failed read is not remembered: the next one tries again.
      reading.catch(() => remembered.delete(key));
      return reading;
    },
    list(apiVersion, kind, namespace, options = {}) {
      const byKey = kinds.get(kindOf(apiVersion, kind));
      const selector = parseEqualitySelector(options);
      const isWritten = namespace === undefined || namespace === '' ? [...writtenNamespaces].some((entry) => entry.startsWith(`${kindOf(apiVersion, kind)} `)) : writtenNamespaces.has(`${kindOf(apiVersion, kind)} ${namespace}`);
      if (byKey === undefined || selector === undefined || isWritten) return kube.list(apiVersion, kind, namespace, options);
      if (counts !== undefined) counts.servedLists += 1;
      const items = [...byKey.values()].filter((object) => (namespace === undefined || namespace === '' || object.metadata.namespace === namespace) && Object.entries(selector).every(([label, value]) => object.metadata.labels?.[label] === value));
      return Promise.resolve(items);
    },
    apply: (obj, options) => writing(obj, () => kube.apply(obj, options), true),
    applyStatus: (obj, options) => writing(obj, () => kube.applyStatus(obj, options), true),
    create: (obj, options) => (options?.dryRun === true ? kube.create(obj, options) : writing(obj, () => kube.create(obj, options))),
    replace: (obj) => writing(obj as ApplyObject, () => kube.replace(obj), true),
    delete: (ref, options) => writing(ref, () => kube.delete(ref, options)),
    createEvent: (event) => kube.createEvent(event),
    scale: (ref, replicas) => writing(ref, () => kube.scale(ref, replicas)),
  };
}

/** `a=b,c==d` as a map; undefined for a field selector or any other label selector form. */
function parseEqualitySelector(options: ListOptions): Record<string, string> | undefined {
  if (options.fieldSelector !== undefined && options.fieldSelector !== '') return undefined;
  const text = options.labelSelector ?? '';
  const out: Record<string, string> = {};
  if (text.trim() === '') return out;
  for (const term of text.split(',')) {
    const match = /^\s*([A-Za-z0-9._/-]+)\s*==?\s*([A-Za-z0-9._-]*)\s*$/.exec(term);
    if (match?.[1] === undefined || match[2] === undefined) return undefined;
    out[match[1]] = match[2];
  }
  return out;
}

function kindOf(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}
