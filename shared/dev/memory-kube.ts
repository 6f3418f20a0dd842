/**
 * An in-memory `Kube` for replay: objects from a starting state, every write recorded in
 * order. It is what `dynamo-fn replay` runs a function against to print the writes it would
 * make; tests of behaviour use the real API server instead (STYLE.md §15).
 *
 * Semantics kept deliberately simple and stated: `apply` stores the applied object over the
 * stored one (keeping the stored `status`, bumping `resourceVersion` only when something
 * changed); `applyStatus` replaces `status`; `scale` sets `spec.replicas`; `list` filters by
 * namespace and equality label selectors (`a=b,c=d`); `get` of a missing object is undefined
 * (Gone); a status or scale write to a missing object, and a second Event of one name, fail as
 * the API server answers them (PermanentError `NotFound`, `AlreadyExists`).
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApplyObject, EventIntent, Kube, KubeObject, ObjectRef } from '../kube/index.js';
import { PermanentError } from '../runtime/index.js';

/** One recorded write. */
export type RecordedWrite =
  | { readonly verb: 'apply' | 'applyStatus' | 'replace' | 'scale'; readonly object: KubeObject; readonly changed: boolean }
  | { readonly verb: 'delete'; readonly ref: ObjectRef }
  | { readonly verb: 'createEvent'; readonly event: EventIntent };

export interface MemoryKube extends Kube {
  /** Writes since the last `takeWrites()`, in order. */
  takeWrites(): RecordedWrite[];
  /** Every stored object. */
  objects(): KubeObject[];
}

function keyOf(ref: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): string {
  return `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

function matchesSelector(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  return selector.split(',').every((term) => {
    const [key, value] = term.split('=');
    return key !== undefined && labels?.[key.trim()] === value?.trim();
  });
}

/** Creates the store from starting objects (each needs apiVersion, kind, metadata.name). */
export function createMemoryKube(initial: readonly KubeObject[], fieldManager: string): MemoryKube {
  const store = new Map<string, KubeObject>();
  let version = 1;
  let writes: RecordedWrite[] = [];
  const eventNames = new Set<string>();
  for (const object of initial) {
    const copy = structuredClone(object);
    copy.metadata.resourceVersion ??= String(version++);
    copy.metadata.generation ??= 1;
    copy.metadata.uid ??= `uid-${copy.metadata.namespace ?? ''}-${copy.metadata.name}`;
    store.set(keyOf({ ...copy, name: copy.metadata.name, namespace: copy.metadata.namespace }), copy);
  }

  function put(key: string, next: KubeObject, verb: 'apply' | 'applyStatus' | 'replace' | 'scale'): KubeObject {
    const before = store.get(key);
    const comparable = (o: KubeObject | undefined) => (o === undefined ? undefined : { ...o, metadata: { ...o.metadata, resourceVersion: undefined, generation: undefined } });
    const changed = !isDeepStrictEqual(comparable(before), comparable(next));
    if (changed) {
      next.metadata.resourceVersion = String(version++);
      const specChanged = verb !== 'applyStatus' && !isDeepStrictEqual(before?.['spec'], next['spec']);
      next.metadata.generation = (before?.metadata.generation ?? 0) + (before === undefined || specChanged ? 1 : 0);
      store.set(key, next);
    }
    writes.push({ verb, object: structuredClone(changed ? next : (before ?? next)), changed });
    return structuredClone(changed ? next : (before ?? next));
  }

  return {
    fieldManager,
    async get(ref) {
      const found = store.get(keyOf(ref));
      return found === undefined ? undefined : structuredClone(found);
    },
    async list(apiVersion, kind, namespace, options = {}) {
      return [...store.values()]
        .filter((o) => o.apiVersion === apiVersion && o.kind === kind)
        .filter((o) => namespace === undefined || namespace === '' || o.metadata.namespace === namespace)
        .filter((o) => matchesSelector(o.metadata.labels, options.labelSelector))
        .map((o) => structuredClone(o));
    },
    async apply(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      const before = store.get(key);
      const next = structuredClone(obj) as KubeObject;
      next.metadata = { ...(before?.metadata ?? { uid: `uid-${obj.metadata.namespace ?? ''}-${obj.metadata.name}` }), ...next.metadata };
      if (before?.['status'] !== undefined) next['status'] = structuredClone(before['status']);
      // A DGD is the one object the functions apply that a user owns (reconcile commits its
      // worker-hash annotation): as server-side apply keeps the fields other managers own, the
      // user's spec and annotations stay. Everything else here is applied whole by its one manager.
      if (before !== undefined && obj.kind === 'DynamoGraphDeployment') {
        for (const [field, value] of Object.entries(before)) if (!(field in obj)) next[field] = structuredClone(value);
        const annotations = { ...(before.metadata['annotations'] as Record<string, string> | undefined), ...(obj.metadata['annotations'] as Record<string, string> | undefined) };
        next.metadata = { ...next.metadata, ...(Object.keys(annotations).length === 0 ? {} : { annotations }) };
      }
      return put(key, next, 'apply');
    },
    async applyStatus(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      const before = store.get(key);
      if (before === undefined) throw new PermanentError(`cannot apply status of ${obj.kind} ${obj.metadata.name}: 404 NotFound`, { reason: 'NotFound' });
      return put(key, { ...structuredClone(before), status: structuredClone(obj['status']) }, 'applyStatus');
    },
    async create(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      if (store.has(key)) return undefined;
      const next = structuredClone(obj) as KubeObject;
      next.metadata = { uid: `uid-${obj.metadata.namespace ?? ''}-${obj.metadata.name}`, ...next.metadata };
      return put(key, next, 'apply');
    },
    async replace(obj) {
      return put(keyOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace }), structuredClone(obj), 'replace');
    },
    async delete(ref) {
      store.delete(keyOf(ref));
      writes.push({ verb: 'delete', ref });
    },
    async createEvent(event) {
      if (event.name !== undefined) {
        if (eventNames.has(event.name)) throw new PermanentError(`cannot create Event ${event.name}: 409 AlreadyExists`, { reason: 'AlreadyExists' });
        eventNames.add(event.name);
      }
      writes.push({ verb: 'createEvent', event: structuredClone(event) });
      return { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: `${event.regarding.name}.event`, namespace: event.regarding.namespace ?? 'default' } };
    },
    async scale(ref, replicas) {
      const key = keyOf(ref);
      const before = store.get(key);
      if (before === undefined) throw new PermanentError(`cannot scale ${ref.kind} ${ref.name}: 404 NotFound`, { reason: 'NotFound' });
      const next = structuredClone(before);
      next['spec'] = { ...(next['spec'] as Record<string, unknown>), replicas };
      const stored = put(key, next, 'scale');
      return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: ref.name, namespace: ref.namespace ?? '' }, spec: { replicas }, status: { replicas: ((stored['status'] as { replicas?: number } | undefined)?.replicas ?? 0) } };
    },
    takeWrites() {
      const taken = writes;
      writes = [];
      return taken;
    },
    objects() {
      return [...store.values()].map((o) => structuredClone(o));
    },
  };
}
