/**
 * One pass's client: reads of an object are sent once per pass (or answered by a resync's list
 * snapshot, `createListSnapshot`), writes go to the API server, and a pass sees its own writes: a
 * get of an object it applied is answered with what the apply stored, a get of one it deleted or
 * scaled is read again, and lists of a kind in a namespace it wrote go to the API server.
 *
 * The wrapper holds nothing beyond one event or one resync (DESIGN.md "Events in, answers out").
 * @module
 * @see ./snapshot.ts (a resync's one LIST per kind)
 */
import type { ApplyObject, Kube, KubeObject, ObjectRef } from './client.js';
import type { KubeReader } from './snapshot.js';

/**
 * Wraps `kube` for one pass (or one resync's passes). `reader`, when given, answers the reads of
 * objects the pass has not written (a resync's list snapshot); without it, a get is sent once per
 * wrapper and lists go to the API server. Failures: those of `kube` and `reader`; a failed get is
 * not remembered.
 */
export function passKube(kube: Kube, reader?: KubeReader): Kube {
  const remembered = new Map<string, Promise<KubeObject | undefined>>();
  const written = new Set<string>();
  const writtenNamespaces = new Set<string>();

  function markWritten(ref: { readonly apiVersion: string; readonly kind: string; readonly namespace?: string | undefined; readonly name: string }): string {
    const key = `${kindOf(ref.apiVersion, ref.kind)} ${keyOf(ref.namespace, ref.name)}`;
    written.add(key);
    remembered.delete(key);
    writtenNamespaces.add(`${kindOf(ref.apiVersion, ref.kind)} ${ref.namespace ?? ''}`);
    return key;
  }

  /**
   * Sends a write. When the API server answers with the object as now stored (an apply, a status
   * apply, a replace), a get of it is answered with that; otherwise (a delete, a scale, a
   * failure) it is read again.
   */
  async function writing<T>(ref: ObjectRef | ApplyObject, write: () => Promise<T>, answersStored = false): Promise<T> {
    const target = 'metadata' in ref ? { apiVersion: ref.apiVersion, kind: ref.kind, namespace: ref.metadata.namespace, name: ref.metadata.name } : ref;
    markWritten(target);
    let stored: T | undefined;
    try {
      stored = await write();
      return stored;
    } finally {
      const key = markWritten(target);
      if (answersStored && stored !== undefined) remembered.set(key, Promise.resolve(stored as KubeObject));
    }
  }

  return {
    fieldManager: kube.fieldManager,
    get(ref) {
      const key = `${kindOf(ref.apiVersion, ref.kind)} ${keyOf(ref.namespace, ref.name)}`;
      const known = remembered.get(key);
      if (known !== undefined) return known;
      if (reader !== undefined && !written.has(key)) return reader.get(ref);
      const reading = kube.get(ref);
      remembered.set(key, reading);
      // A failed read is not remembered: the next one tries again.
      reading.catch(() => remembered.delete(key));
      return reading;
    },
    list(apiVersion, kind, namespace, options = {}) {
      const prefix = `${kindOf(apiVersion, kind)} `;
      const isWritten = namespace === undefined || namespace === '' ? [...writtenNamespaces].some((entry) => entry.startsWith(prefix)) : writtenNamespaces.has(`${prefix}${namespace}`);
      return reader !== undefined && !isWritten ? reader.list(apiVersion, kind, namespace, options) : kube.list(apiVersion, kind, namespace, options);
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

function kindOf(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}
