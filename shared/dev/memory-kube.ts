/**
 * An in-memory `Kube` for replay: objects from a starting state, every write recorded in
 * order. It is what `dynamo-fn replay` runs the functions against to print the writes they would
 * make; tests of behaviour use the real API server instead (STYLE.md §15).
 *
 * Semantics kept deliberately simple and stated: `apply` stores the applied object over the
 * stored one (keeping the stored `status`, bumping `resourceVersion` only when something
 * changed), except on a user's DGD or DGDR, where it keeps the fields the apply leaves out and
 * merges annotations as server-side apply does (one the same manager applied before and leaves
 * out now is removed, unless another writer owns it too: another manager's apply of the same
 * value shares it; another's forced apply of another value, an update that changes it, or a
 * captured event that does, takes it; a starting or captured object's `managedFields` say who
 * applied what before); `applyStatus` replaces `status`; `scale` sets `spec.replicas`; `list` filters by
 * namespace and equality label selectors (`a=b,c=d`); `get` of a missing object is undefined
 * (Gone); a status, update or scale write to a missing object, and a second Event of one name,
 * fail as the API server answers them (PermanentError `NotFound`, `AlreadyExists`), and a write
 * whose resourceVersion precondition names another version fails with the 409 Conflict the real
 * client classifies (TransientError). An apply creates a missing object whatever resourceVersion
 * it carries (the API server checks it against an existing object only), unless it names a
 * `metadata.uid`: that is a 409 too.
 *
 * One store can be written under several field managers (`as`), as the functions of one install
 * write one API server. Besides the `Kube` calls, replay tells the store what the captured
 * events say the API server did (`observe`, `remove`), and asks what a handler read (`trace`) and
 * whether any of it changed since (`isUnchangedSince`).
 * @module
 */
import { cloneJson } from '../domain/index.js';
import { classifyKubeError, KubeHttpError } from '../kube/errors.js';
import type { ApplyObject, EventIntent, Kube, KubeObject, ObjectRef } from '../kube/index.js';
import { PermanentError } from '../runtime/index.js';

/** One recorded write. */
export type RecordedWrite =
  | { readonly verb: 'apply' | 'applyStatus' | 'replace' | 'scale'; readonly object: KubeObject; readonly changed: boolean }
  | { readonly verb: 'delete'; readonly ref: ObjectRef }
  | { readonly verb: 'createEvent'; readonly event: EventIntent };

/** What a handler read: objects by key, and lists by kind (and namespace). Opaque to callers. */
export interface ReadSet {
  readonly keys: ReadonlySet<string>;
}

export interface MemoryKube extends Kube {
  /** Writes since the last `takeWrites()`, in order (every field manager's). */
  takeWrites(): RecordedWrite[];
  /** Every stored object. */
  objects(): KubeObject[];
  /** A client on the same store and write log that writes as `fieldManager`. */
  as(fieldManager: string): MemoryKube;
  /** Whether the store holds the object. */
  has(ref: ObjectRef): boolean;
  /** Stores an object as the API server reported it (a captured Resource-mode event): not a write. */
  observe(object: KubeObject): void;
  /** Drops an object the API server deleted (a captured delete event): not a write. Returns whether it was held. */
  remove(ref: ObjectRef): boolean;
  /** Runs `body` and returns what it read, besides its result. */
  trace<T>(body: () => Promise<T>): Promise<{ readonly result: T; readonly reads: ReadSet }>;
  /** A counter that moves on every change to the store. */
  version(): number;
  /** Whether nothing `reads` names changed after `version` (an object, or any object of a listed kind). */
  isUnchangedSince(reads: ReadSet, version: number): boolean;
}

function keyOf(ref: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): string {
  return `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** The read-set keys a list depends on: its kind in every namespace, or in one. */
function listKeyOf(apiVersion: string, kind: string, namespace: string | undefined): string {
  return namespace === undefined || namespace === '' ? `list:${apiVersion}/${kind}` : `list:${apiVersion}/${kind}/${namespace}`;
}

function matchesSelector(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  return selector.split(',').every((term) => {
    const [key, value] = term.split('=');
    return key !== undefined && labels?.[key.trim()] === value?.trim();
  });
}

/**
 * `isDeepStrictEqual` for JSON data (plain objects, arrays, primitives), without its generic
 * machinery: replay compares every applied object with the stored one. Keys in any order; a key
 * holding `undefined` differs from an absent key, as there.
 */
function isSameJson(a: unknown, b: unknown, skip?: ReadonlySet<string>): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) if (!isSameJson(a[index], b[index])) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.prototype.hasOwnProperty.call(left, key) || skip?.has(key) === true) continue;
    if (!Object.prototype.hasOwnProperty.call(right, key) || !isSameJson(left[key], right[key])) return false;
    count += 1;
  }
  for (const key in right) if (Object.prototype.hasOwnProperty.call(right, key) && skip?.has(key) !== true) count -= 1;
  return count === 0;
}

const SERVER_SET_METADATA: ReadonlySet<string> = new Set(['resourceVersion', 'generation']);
const METADATA: ReadonlySet<string> = new Set(['metadata']);

/** Whether two stored objects are the same but for the versions the store sets. */
function isSameStored(before: KubeObject | undefined, next: KubeObject): boolean {
  return before !== undefined && isSameJson(before, next, METADATA) && isSameJson(before.metadata, next.metadata, SERVER_SET_METADATA);
}

/** The store every client of one `createMemoryKube` shares. Stored objects are never changed in place. */
interface Store {
  readonly objects: Map<string, KubeObject>;
  /** The store version at each key's (and each list key's) last change. */
  readonly changedAt: Map<string, number>;
  readonly eventNames: Set<string>;
  writes: RecordedWrite[];
  resourceVersion: number;
  version: number;
  /** The keys read while a `trace` runs. */
  reads: Set<string> | undefined;
  /**
   * Who owns each annotation of a user-owned object (by object key, then annotation): the field
   * managers whose apply set it, or `''` for any other writer (an update, a create, the starting
   * state, a captured event). An annotation with no entry is another writer's.
   */
  readonly annotationOwners: Map<string, Map<string, Set<string>>>;
}

/**
 * The kinds whose spec a user owns and whose metadata a function applies to (reconcile commits a
 * DGD's worker-hash annotation; profile sets and clears its annotations on a DGDR): server-side
 * apply keeps the fields other managers own there.
 */
const USER_OWNED_KINDS: ReadonlySet<string> = new Set(['DynamoGraphDeployment', 'DynamoGraphDeploymentRequest']);

/** Creates the store from starting objects (each needs apiVersion, kind, metadata.name). */
export function createMemoryKube(initial: readonly KubeObject[], fieldManager: string): MemoryKube {
  const store: Store = { objects: new Map(), changedAt: new Map(), eventNames: new Set(), writes: [], resourceVersion: 1, version: 0, reads: undefined, annotationOwners: new Map() };
  for (const object of initial) {
    const copy = cloneJson(object);
    copy.metadata.resourceVersion ??= String(store.resourceVersion++);
    advancePast(store, copy.metadata.resourceVersion);
    copy.metadata.generation ??= 1;
    copy.metadata.uid ??= `uid-${copy.metadata.namespace ?? ''}-${copy.metadata.name}`;
    const key = keyOf({ ...copy, name: copy.metadata.name, namespace: copy.metadata.namespace });
    store.objects.set(key, copy);
    const owners = ownersFromManagedFields(copy);
    if (owners !== undefined) store.annotationOwners.set(key, owners);
  }
  return clientOf(store, fieldManager);
}

/** The API group of an apiVersion (`v1` for the core group). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The stored key of `ref`: its own, else that of a stored object of the same group, kind,
 * namespace and name in another version (the API server serves one object in every version:
 * an event may name a v1alpha1 DGD the state holds as v1beta1).
 */
function storedKeyOf(store: Store, ref: ObjectRef): string | undefined {
  const exact = keyOf(ref);
  if (store.objects.has(exact)) return exact;
  const group = groupOf(ref.apiVersion);
  for (const [key, object] of store.objects) {
    if (object.kind === ref.kind && object.metadata.name === ref.name && (object.metadata.namespace ?? '') === (ref.namespace ?? '') && groupOf(object.apiVersion) === group) return key;
  }
  return undefined;
}

/**
 * Moves the store's next resourceVersion past one an object came with (a starting or captured
 * object): a write after it must never be given the version it already had, or a stale
 * precondition would pass. Versions that are not integers are the caller's own and left alone.
 */
function advancePast(store: Store, resourceVersion: string | undefined): void {
  const version = Number(resourceVersion);
  if (Number.isSafeInteger(version) && version >= store.resourceVersion) store.resourceVersion = version + 1;
}

/**
 * A write's resourceVersion precondition, as the API server takes it (in an apply's or update's
 * `metadata.resourceVersion`, a delete's `preconditions`): a stored object at another version
 * is a 409 Conflict, classified as the real client's (TransientError, `isResourceVersionConflict`).
 */
function requireVersion(before: KubeObject, resourceVersion: string | undefined, what: string): void {
  if (resourceVersion === undefined || resourceVersion === before.metadata.resourceVersion) return;
  throw conflict(`Operation cannot be fulfilled on ${before.kind} "${before.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`, what);
}

function conflict(message: string, what: string): Error {
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message };
  return classifyKubeError(new KubeHttpError(409, JSON.stringify(status), {}), what);
}

type Annotations = Readonly<Record<string, string>>;

function annotationsOf(object: KubeObject | undefined): Annotations {
  return (object?.metadata['annotations'] ?? {}) as Annotations;
}

/**
 * A write other than an apply (an update, a captured event) to a user-owned object: every
 * annotation it sets or changes is its writer's (`''`), as an update takes the fields it changes
 * from their appliers; one it removes has no owner left.
 */
function noteOtherWrite(store: Store, key: string, before: Annotations, next: Annotations): void {
  const owners = store.annotationOwners.get(key);
  if (owners === undefined) return; // No apply yet: every annotation is another writer's already.
  for (const name of owners.keys()) if (!(name in next)) owners.delete(name);
  for (const [name, value] of Object.entries(next)) if (before[name] !== value) owners.set(name, new Set(['']));
}

/**
 * The owners of a user-owned object's annotations as its `metadata.managedFields` records them (a
 * captured object carries them): the managers of `Apply` entries by name, any other entry as
 * `''`. Undefined when the object carries none (then every annotation is another writer's).
 */
function ownersFromManagedFields(object: KubeObject): Map<string, Set<string>> | undefined {
  const entries = object.metadata['managedFields'];
  if (!USER_OWNED_KINDS.has(object.kind) || !Array.isArray(entries)) return undefined;
  const owners = new Map<string, Set<string>>();
  for (const entry of entries as { manager?: unknown; operation?: unknown; subresource?: unknown; fieldsV1?: { 'f:metadata'?: { 'f:annotations'?: Record<string, unknown> } } }[]) {
    if (entry.subresource !== undefined && entry.subresource !== '') continue;
    const owner = entry.operation === 'Apply' && typeof entry.manager === 'string' ? entry.manager : '';
    for (const field of Object.keys(entry.fieldsV1?.['f:metadata']?.['f:annotations'] ?? {})) {
      if (!field.startsWith('f:')) continue;
      const name = field.slice(2);
      owners.set(name, (owners.get(name) ?? new Set()).add(owner));
    }
  }
  return owners;
}

function clientOf(store: Store, fieldManager: string): MemoryKube {
  /** Marks a key (and the lists that hold it) changed. */
  function touch(object: { apiVersion: string; kind: string; metadata: { namespace?: string | undefined; name: string } }): void {
    store.version += 1;
    store.changedAt.set(keyOf({ apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }), store.version);
    store.changedAt.set(listKeyOf(object.apiVersion, object.kind, undefined), store.version);
    store.changedAt.set(listKeyOf(object.apiVersion, object.kind, object.metadata.namespace), store.version);
  }
  function read(key: string): void {
    store.reads?.add(key);
  }

  /**
   * Stores `next` when it differs from the stored object; returns a copy of what is stored.
   * `isOwned`: `next` shares nothing with the store, so when nothing changed it can be handed
   * out itself (with the stored versions) instead of a copy of the stored object.
   */
  function put(key: string, next: KubeObject, verb: 'apply' | 'applyStatus' | 'replace' | 'scale', isOwned = false): KubeObject {
    const before = store.objects.get(key);
    const changed = !isSameStored(before, next);
    if (changed) {
      next.metadata.resourceVersion = String(store.resourceVersion++);
      const specChanged = verb !== 'applyStatus' && !isSameJson(before?.['spec'], next['spec']);
      next.metadata.generation = (before?.metadata.generation ?? 0) + (before === undefined || specChanged ? 1 : 0);
      store.objects.set(key, next);
      touch(next);
    }
    const stored = changed ? next : (before ?? next);
    // The record may share the stored object: stored objects are replaced, never changed.
    store.writes.push({ verb, object: stored, changed });
    if (changed || !isOwned || before === undefined) return cloneJson(stored);
    next.metadata.resourceVersion = before.metadata.resourceVersion;
    next.metadata.generation = before.metadata.generation;
    return next;
  }

  const client: MemoryKube = {
    fieldManager,
    async get(ref) {
      const key = keyOf(ref);
      read(key);
      const found = store.objects.get(key);
      return found === undefined ? undefined : cloneJson(found);
    },
    async list(apiVersion, kind, namespace, options = {}) {
      read(listKeyOf(apiVersion, kind, namespace));
      const out: KubeObject[] = [];
      for (const o of store.objects.values()) {
        if (o.apiVersion !== apiVersion || o.kind !== kind) continue;
        if (namespace !== undefined && namespace !== '' && o.metadata.namespace !== namespace) continue;
        if (matchesSelector(o.metadata.labels, options.labelSelector)) out.push(cloneJson(o));
      }
      return out;
    },
    async apply(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      const before = store.objects.get(key);
      if (before !== undefined) requireVersion(before, obj.metadata['resourceVersion'] as string | undefined, `apply ${obj.kind} ${obj.metadata.name}`);
      // A missing object is created whatever resourceVersion the apply carries, but not when it names a uid (the API server's 409).
      const uid = obj.metadata['uid'];
      if (before === undefined && typeof uid === 'string') throw conflict(`Operation cannot be fulfilled on ${obj.kind} "${obj.metadata.name}": uid mismatch: the provided object specified uid ${uid}, and no existing object was found`, `apply ${obj.kind} ${obj.metadata.name}`);
      const next = cloneJson(obj) as KubeObject;
      next.metadata = { ...(before === undefined ? { uid: `uid-${obj.metadata.namespace ?? ''}-${obj.metadata.name}` } : cloneJson(before.metadata)), ...next.metadata };
      if (before?.['status'] !== undefined) next['status'] = cloneJson(before['status']);
      // A DGD or DGDR is a user's object the functions apply metadata to: as server-side apply
      // keeps the fields other managers own, the user's spec and annotations stay, and an
      // annotation this manager applied before and leaves out now is removed. Everything else
      // here is applied whole by its one manager.
      if (USER_OWNED_KINDS.has(obj.kind)) {
        const applied = (obj.metadata['annotations'] ?? {}) as Record<string, string>;
        const stored = annotationsOf(before);
        // The owners after this apply: its manager owns what it applies (alone where the value changes: a
        // forced apply takes it; beside the others where it is the same: shared); it leaves out what it omits.
        const owners = new Map<string, Set<string>>(Object.keys(stored).map((name) => [name, new Set(store.annotationOwners.get(key)?.get(name) ?? [''])]));
        for (const [name, value] of Object.entries(applied)) {
          const shared = owners.get(name);
          if (shared !== undefined && stored[name] === value) shared.add(fieldManager);
          else owners.set(name, new Set([fieldManager]));
        }
        const annotations: Record<string, string> = { ...stored, ...applied };
        for (const [name, holders] of owners) {
          if (name in applied || !holders.delete(fieldManager) || holders.size > 0) continue;
          owners.delete(name);
          delete annotations[name];
        }
        if (before !== undefined) {
          for (const [field, value] of Object.entries(before)) if (!(field in obj)) next[field] = cloneJson(value);
          const { annotations: _dropped, ...metadata } = next.metadata;
          next.metadata = { ...metadata, ...(Object.keys(annotations).length === 0 ? {} : { annotations }) };
        }
        store.annotationOwners.set(key, owners);
      }
      return put(key, next, 'apply', true);
    },
    async applyStatus(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      const before = store.objects.get(key);
      if (before === undefined) throw new PermanentError(`cannot apply status of ${obj.kind} ${obj.metadata.name}: 404 NotFound`, { reason: 'NotFound' });
      requireVersion(before, obj.metadata['resourceVersion'] as string | undefined, `apply status of ${obj.kind} ${obj.metadata.name}`);
      return put(key, { ...before, metadata: { ...before.metadata }, status: cloneJson(obj['status']) }, 'applyStatus');
    },
    async create(obj: ApplyObject) {
      const key = keyOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name });
      if (store.objects.has(key)) return undefined;
      store.annotationOwners.delete(key); // A new object: its creator's annotations.
      const next = cloneJson(obj) as KubeObject;
      next.metadata = { uid: `uid-${obj.metadata.namespace ?? ''}-${obj.metadata.name}`, ...next.metadata };
      return put(key, next, 'apply');
    },
    async replace(obj) {
      const before = store.objects.get(keyOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace }));
      // An update never creates: a missing object is a 404, as the API server answers it.
      if (before === undefined) throw new PermanentError(`cannot replace ${obj.kind} ${obj.metadata.name}: 404 NotFound`, { reason: 'NotFound' });
      requireVersion(before, obj.metadata.resourceVersion, `replace ${obj.kind} ${obj.metadata.name}`);
      noteOtherWrite(store, keyOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace }), annotationsOf(before), annotationsOf(obj as KubeObject));
      return put(keyOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace }), cloneJson(obj), 'replace');
    },
    async delete(ref, options = {}) {
      const key = keyOf(ref);
      const before = store.objects.get(key);
      if (before !== undefined) requireVersion(before, options.resourceVersion, `delete ${ref.kind} ${ref.name}`);
      if (before !== undefined && options.uid !== undefined && before.metadata.uid !== options.uid) {
        throw conflict(`Operation cannot be fulfilled on ${ref.kind} "${ref.name}": Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${before.metadata.uid ?? ''}`, `delete ${ref.kind} ${ref.name}`);
      }
      if (store.objects.delete(key)) touch({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { namespace: ref.namespace, name: ref.name } });
      if (before !== undefined) store.annotationOwners.delete(key);
      store.writes.push({ verb: 'delete', ref });
    },
    async createEvent(event) {
      if (event.name !== undefined) {
        if (store.eventNames.has(event.name)) throw new PermanentError(`cannot create Event ${event.name}: 409 AlreadyExists`, { reason: 'AlreadyExists' });
        store.eventNames.add(event.name);
      }
      store.version += 1;
      store.writes.push({ verb: 'createEvent', event: cloneJson(event) });
      return { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: `${event.regarding.name}.event`, namespace: event.regarding.namespace ?? 'default' } };
    },
    async scale(ref, replicas) {
      const key = keyOf(ref);
      read(key);
      const before = store.objects.get(key);
      if (before === undefined) throw new PermanentError(`cannot scale ${ref.kind} ${ref.name}: 404 NotFound`, { reason: 'NotFound' });
      const next = { ...before, metadata: { ...before.metadata }, spec: { ...(before['spec'] as Record<string, unknown>), replicas } };
      const stored = put(key, next, 'scale');
      return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: ref.name, namespace: ref.namespace ?? '' }, spec: { replicas }, status: { replicas: ((stored['status'] as { replicas?: number } | undefined)?.replicas ?? 0) } };
    },
    takeWrites() {
      const taken = store.writes;
      store.writes = [];
      return taken;
    },
    objects() {
      return [...store.objects.values()].map((o) => cloneJson(o));
    },
    as(name) {
      return clientOf(store, name);
    },
    has(ref) {
      return storedKeyOf(store, ref) !== undefined;
    },
    observe(object) {
      const copy = cloneJson(object);
      const key = keyOf({ apiVersion: copy.apiVersion, kind: copy.kind, namespace: copy.metadata.namespace, name: copy.metadata.name });
      const held = store.objects.get(key);
      if (isSameJson(held, copy)) return;
      // Another object under the name (deleted and created again) is its creator's; else the API server's change is another writer's.
      const recorded = ownersFromManagedFields(copy);
      if (recorded !== undefined) store.annotationOwners.set(key, recorded);
      else if (held === undefined || held.metadata.uid !== copy.metadata.uid) store.annotationOwners.delete(key);
      else noteOtherWrite(store, key, annotationsOf(held), annotationsOf(copy));
      advancePast(store, copy.metadata.resourceVersion);
      store.objects.set(key, copy);
      touch(copy);
    },
    remove(ref) {
      const key = storedKeyOf(store, ref);
      const held = key === undefined ? undefined : store.objects.get(key);
      if (key === undefined || held === undefined) return false;
      store.objects.delete(key);
      store.annotationOwners.delete(key);
      touch(held);
      return true;
    },
    async trace(body) {
      const outer = store.reads;
      const reads = new Set<string>();
      store.reads = reads;
      try {
        return { result: await body(), reads: { keys: reads } };
      } finally {
        if (outer !== undefined) for (const key of reads) outer.add(key);
        store.reads = outer;
      }
    },
    version() {
      return store.version;
    },
    isUnchangedSince(reads, version) {
      for (const key of reads.keys) if ((store.changedAt.get(key) ?? 0) > version) return false;
      return true;
    },
  };
  return client;
}
