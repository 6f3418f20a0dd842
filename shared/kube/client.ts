/**
 * The functions' reads and writes: get (404 is Gone), list, server-side apply of an object and
 * of its status subresource, replace with a resourceVersion precondition, delete (404 is done)
 * and events.k8s.io/v1 Events, over node:http/node:https (./transport.ts: no client-node or
 * undici on a function's start path).
 *
 * Resource paths come from discovery, cached per client (a kind missing from the cache
 * triggers one re-read, so CRDs installed later are found).
 * Requests and responses are plain JSON: nothing is converted to client-node's model classes,
 * so callers parse what they read with their zod schemas (STYLE.md §20).
 *
 * Every failure is classified once (./errors.ts): TransientError or PermanentError.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Writes"; ../../../shared/STYLE.md §12, §24
 */
import { randomInt } from 'node:crypto';

import { PermanentError } from '../runtime/index.js';
import { classifyKubeError, kubeStatusOf } from './errors.js';
import { apiVersionPath, KubeTransport, type ApiResource, type KubeConnectionConfig, type SendOptions } from './transport.js';

/** Content types of the PATCH flavours we send (client-node's PatchStrategy). */
const SERVER_SIDE_APPLY = 'application/apply-patch+yaml';
const MERGE_PATCH = 'application/merge-patch+json';

/** Names one object. `namespace` is absent or `''` for cluster-scoped kinds. */
export interface ObjectRef {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** The metadata fields callers commonly read; the rest passes through untyped. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** An object as the API server stores it (plain JSON). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** An apply intent: only the fields the field manager owns (STYLE.md §6). */
export interface ApplyObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

/** A Kubernetes Event (events.k8s.io/v1) about one object, as `kubectl describe` shows it. */
export interface EventIntent {
  /**
   * The Event's name when the caller makes it deterministic (one Event per transition: a
   * second create is answered 409 AlreadyExists, a PermanentError with that reason); default
   * `<regarding>.<hex time>` as client-go's recorder names them.
   */
  readonly name?: string;
  /** The object the event is about; its namespace is the event's (`default` if cluster-scoped). */
  readonly regarding: ObjectRef & { readonly uid?: string; readonly resourceVersion?: string };
  /** A second object involved, if any. */
  readonly related?: ObjectRef & { readonly uid?: string };
  /** CamelCase, at most 128 characters, e.g. `CreatedPodCliqueSet`. */
  readonly reason: string;
  /** Human-readable; cut to 1024 bytes (the API's limit). */
  readonly note: string;
  readonly type: 'Normal' | 'Warning';
  /** What was done, at most 128 characters, e.g. `Reconcile`. */
  readonly action: string;
  /** A qualified name, e.g. `nvidia.com/dynamo-reconcile`. */
  readonly reportingController: string;
  /** The instance, at most 128 characters, e.g. the pod or revision name. */
  readonly reportingInstance: string;
}

export interface CreateKubeOptions {
  /** The field manager of every write (STYLE.md §24: one per function, a constant from shared/api). */
  readonly fieldManager: string;
  /** Per-request timeout in milliseconds; a timeout is a TransientError. Default 30 000. */
  readonly requestTimeoutMs?: number;
  /** The clock for event times; tests pass a fixed one. Default `() => new Date()`. */
  readonly now?: () => Date;
}

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

export interface DeleteOptions {
  /** `Background` (the API default for most kinds), `Foreground` or `Orphan`. */
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** Delete only this version (precondition); a mismatch is a TransientError (409). */
  readonly resourceVersion?: string;
  /** Delete only the object with this uid (precondition: not one deleted and created again under its name); a mismatch is a TransientError (409). */
  readonly uid?: string;
}

/** The client the functions use; see createKube. */
export interface Kube {
  /** The field manager every write uses. */
  readonly fieldManager: string;
  /** The object, or undefined when it does not exist (404: Gone). */
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** Every object of a kind, in one namespace or (namespace absent) all of them; pages through. */
  list(apiVersion: string, kind: string, namespace?: string, options?: ListOptions): Promise<KubeObject[]>;
  /** Server-side apply (`fieldValidation=Strict`); returns the stored object. */
  apply(obj: ApplyObject, options?: { readonly force?: boolean }): Promise<KubeObject>;
  /** Server-side apply to the status subresource; `obj` carries apiVersion, kind, metadata and status. */
  applyStatus(obj: ApplyObject, options?: { readonly force?: boolean }): Promise<KubeObject>;
  /**
   * Creates the object (POST, `fieldValidation=Strict`); returns it, or undefined when an object of
   * that name already exists (409 AlreadyExists): callers that must never take over an existing
   * object create instead of applying. With `dryRun`, the API server runs every admission step
   * (defaults, schema, CEL, webhooks) and stores nothing (`dryRun=All`).
   */
  create(obj: ApplyObject, options?: { readonly dryRun?: boolean }): Promise<KubeObject | undefined>;
  /** PUT with the object's metadata.resourceVersion as precondition: a stale version is a TransientError (409). */
  replace(obj: KubeObject): Promise<KubeObject>;
  /** Deletes the object; resolves when it was deleted or was already gone (404). */
  delete(ref: ObjectRef, options?: DeleteOptions): Promise<void>;
  /** Creates an events.k8s.io/v1 Event; returns it. */
  createEvent(event: EventIntent): Promise<KubeObject>;
  /**
   * Sets `spec.replicas` through the object's `scale` subresource (a merge patch of the
   * autoscaling/v1 Scale, as `kubectl scale` and the HPA controller write it); returns the Scale.
   * A missing object is a PermanentError with reason `NotFound`.
   */
  scale(ref: ObjectRef, replicas: number): Promise<KubeObject>;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const LIST_PAGE_SIZE = 500;
// events.k8s.io/v1 validation limits (k8s pkg/apis/core/validation/events.go: NoteLengthLimit).
const EVENT_NOTE_MAX_BYTES = 1024;
// An object name is a DNS subdomain: at most 253 characters.
const MAX_NAME_LENGTH = 253;

/**
 * The resource paths (from discovery, ./transport.ts) and requests of one client. Requests are
 * built here: plain JSON both ways, with subresources and fieldValidation on every write.
 */
class ObjectTransport extends KubeTransport {
  /**
   * The URL path of one object (`name` given) or of a collection. Throws PermanentError
   * (`UnknownKind`) when discovery does not serve the kind, or the classified discovery failure.
   */
  async pathOf(
    ref: { readonly apiVersion: string; readonly kind: string; readonly namespace?: string | undefined; readonly name?: string },
    what: string,
  ): Promise<string> {
    let resource: ApiResource | undefined;
    try {
      resource = await this.resource(ref.apiVersion, ref.kind);
    } catch (error) {
      if (kubeStatusOf(error)?.code === 404) resource = undefined;
      else throw classifyKubeError(error, what);
    }
    if (resource === undefined) {
      throw new PermanentError(`cannot ${what}: the API server does not serve ${ref.kind} in ${ref.apiVersion}`, {
        reason: 'UnknownKind',
      });
    }
    const parts = [apiVersionPath(ref.apiVersion)];
    const namespace = ref.namespace === '' ? undefined : ref.namespace;
    if (resource.namespaced && namespace === undefined && ref.name !== undefined) {
      throw new PermanentError(`cannot ${what}: ${ref.kind} is namespaced but no namespace was given`, {
        reason: 'Invalid',
      });
    }
    if (resource.namespaced && namespace !== undefined) parts.push('namespaces', encodeURIComponent(namespace));
    parts.push(resource.name);
    if (ref.name !== undefined) parts.push(encodeURIComponent(ref.name));
    return parts.join('/');
  }
}

/**
 * Creates the client the functions read and write through.
 * In: where to connect: a loaded client-node KubeConfig (its current context), or
 * {@link inClusterConfig}; and the function's field manager constant.
 * Out: a Kube whose methods throw only TransientError or PermanentError (see ./errors.ts).
 * Discovery results are cached for the life of the client.
 * Source: DESIGN.md "Writes"; STYLE.md §12, §24.
 * @example
 * const kube = createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE });
 * const dgd = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace, name });
 */
export function createKube(kubeConfig: KubeConnectionConfig, options: CreateKubeOptions): Kube {
  const transport = new ObjectTransport(kubeConfig, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  const { fieldManager } = options;
  const now = options.now ?? (() => new Date());

  async function request(what: string, method: string, path: string, init?: SendOptions): Promise<unknown> {
    try {
      return await transport.send(method, path, init);
    } catch (error) {
      throw classifyKubeError(error, what);
    }
  }

  async function applyTo(obj: ApplyObject, subresource: '' | '/status', force: boolean | undefined): Promise<KubeObject> {
    const what = `apply ${subresource === '' ? '' : 'status of '}${obj.kind} ${keyOf(obj.metadata)}`;
    const path = await transport.pathOf(refOf(obj), what);
    const stored = await request(what, 'PATCH', `${path}${subresource}`, {
      query: { fieldManager, fieldValidation: 'Strict', force: force === true ? 'true' : undefined },
      body: obj,
      // JSON is YAML, so the apply patch can be sent as JSON text.
      contentType: SERVER_SIDE_APPLY,
    });
    return asKubeObject(stored, what);
  }

  return {
    fieldManager,

    async get(ref) {
      const what = `get ${ref.kind} ${keyOf(ref)}`;
      const path = await transport.pathOf(ref, what);
      try {
        return asKubeObject(await transport.send('GET', path), what);
      } catch (error) {
        if (kubeStatusOf(error)?.code === 404) return undefined;
        throw classifyKubeError(error, what);
      }
    },

    async list(apiVersion, kind, namespace, listOptions = {}) {
      const what = `list ${kind}${namespace === undefined || namespace === '' ? '' : ` in ${namespace}`}`;
      const path = await transport.pathOf({ apiVersion, kind, namespace }, what);
      const items: KubeObject[] = [];
      let continueToken: string | undefined;
      do {
        const page = await request(what, 'GET', path, {
          query: {
            limit: String(LIST_PAGE_SIZE),
            continue: continueToken,
            labelSelector: listOptions.labelSelector,
            fieldSelector: listOptions.fieldSelector,
          },
        });
        const list = isRecord(page) ? page : {};
        const pageItems = Array.isArray(list['items']) ? (list['items'] as unknown[]) : [];
        // List items carry no apiVersion/kind; fill them in as kubectl does.
        for (const item of pageItems) items.push(asKubeObject(isRecord(item) ? { apiVersion, kind, ...item } : item, what));
        const metadata = isRecord(list['metadata']) ? list['metadata'] : {};
        continueToken = typeof metadata['continue'] === 'string' && metadata['continue'] !== '' ? metadata['continue'] : undefined;
      } while (continueToken !== undefined);
      return items;
    },

    apply(obj, applyOptions = {}) {
      return applyTo(obj, '', applyOptions.force);
    },

    applyStatus(obj, applyOptions = {}) {
      return applyTo(obj, '/status', applyOptions.force);
    },

    async create(obj, createOptions = {}) {
      const what = `${createOptions.dryRun === true ? 'dry-run ' : ''}create ${obj.kind} ${keyOf(obj.metadata)}`;
      const path = await transport.pathOf({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace }, what);
      try {
        const query = { fieldManager, fieldValidation: 'Strict', dryRun: createOptions.dryRun === true ? 'All' : undefined };
        return asKubeObject(await transport.send('POST', path, { query, body: obj }), what);
      } catch (error) {
        const status = kubeStatusOf(error);
        if (status?.code === 409 && status.reason === 'AlreadyExists') return undefined;
        throw classifyKubeError(error, what);
      }
    },

    async replace(obj) {
      const what = `replace ${obj.kind} ${keyOf(obj.metadata)}`;
      const path = await transport.pathOf(refOf(obj), what);
      const stored = await request(what, 'PUT', path, {
        query: { fieldManager, fieldValidation: 'Strict' },
        body: obj,
      });
      return asKubeObject(stored, what);
    },

    async delete(ref, deleteOptions = {}) {
      const what = `delete ${ref.kind} ${keyOf(ref)}`;
      const path = await transport.pathOf(ref, what);
      const body = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        ...(deleteOptions.propagationPolicy === undefined ? {} : { propagationPolicy: deleteOptions.propagationPolicy }),
        ...(deleteOptions.resourceVersion === undefined && deleteOptions.uid === undefined
          ? {}
          : { preconditions: { ...(deleteOptions.resourceVersion === undefined ? {} : { resourceVersion: deleteOptions.resourceVersion }), ...(deleteOptions.uid === undefined ? {} : { uid: deleteOptions.uid }) } }),
      };
      try {
        await transport.send('DELETE', path, { body });
      } catch (error) {
        if (kubeStatusOf(error)?.code === 404) return;
        throw classifyKubeError(error, what);
      }
    },

    async createEvent(event) {
      const regardingNamespace = event.regarding.namespace === '' ? undefined : event.regarding.namespace;
      // A cluster-scoped object's events live in `default` (k8s legacyValidateEvent).
      const namespace = regardingNamespace ?? 'default';
      const what = `create Event ${event.reason} for ${event.regarding.kind} ${keyOf(event.regarding)}`;
      const path = await transport.pathOf({ apiVersion: 'events.k8s.io/v1', kind: 'Event', namespace }, what);
      const at = now();
      const body = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: event.name ?? eventName(event.regarding.name, at), namespace },
        eventTime: microTime(at),
        regarding: objectReference(event.regarding),
        ...(event.related === undefined ? {} : { related: objectReference(event.related) }),
        reason: event.reason,
        note: truncateUtf8(event.note, EVENT_NOTE_MAX_BYTES),
        type: event.type,
        action: event.action,
        reportingController: event.reportingController,
        reportingInstance: event.reportingInstance,
      };
      return asKubeObject(await request(what, 'POST', path, { body }), what);
    },

    async scale(ref, replicas) {
      const what = `scale ${ref.kind} ${keyOf(ref)} to ${replicas}`;
      const path = await transport.pathOf(ref, what);
      const stored = await request(what, 'PATCH', `${path}/scale`, {
        query: { fieldManager },
        body: { spec: { replicas } },
        contentType: MERGE_PATCH,
      });
      return asKubeObject(stored, what);
    },
  };
}

function refOf(obj: ApplyObject | KubeObject): ObjectRef {
  const { namespace } = obj.metadata;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    ...(typeof namespace === 'string' ? { namespace } : {}),
  };
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
function keyOf(ref: { readonly namespace?: string | undefined; readonly name: string }): string {
  return ref.namespace === undefined || ref.namespace === '' ? ref.name : `${ref.namespace}/${ref.name}`;
}

function objectReference(ref: ObjectRef & { readonly uid?: string; readonly resourceVersion?: string }) {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    ...(ref.namespace === undefined || ref.namespace === '' ? {} : { namespace: ref.namespace }),
    ...(ref.uid === undefined ? {} : { uid: ref.uid }),
    ...(ref.resourceVersion === undefined ? {} : { resourceVersion: ref.resourceVersion }),
  };
}

/**
 * `<regarding>.<hex time>`, as client-go's event recorder names events (`%v.%x` of UnixNano);
 * random low digits stand in for the nanoseconds JS has not got, so two events in one
 * millisecond do not collide.
 */
function eventName(regardingName: string, at: Date): string {
  const suffix = (BigInt(at.getTime()) * 1_000_000n + BigInt(randomInt(1_000_000))).toString(16);
  return `${regardingName.slice(0, MAX_NAME_LENGTH - suffix.length - 1)}.${suffix}`;
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let cut = text.slice(0, maxBytes);
  while (Buffer.byteLength(cut, 'utf8') > maxBytes - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

function asKubeObject(value: unknown, what: string): KubeObject {
  if (
    isRecord(value) &&
    typeof value['apiVersion'] === 'string' &&
    typeof value['kind'] === 'string' &&
    isRecord(value['metadata'])
  ) {
    return value as KubeObject;
  }
  throw new PermanentError(`cannot ${what}: the API server answered with something that is not an object`, {
    reason: 'InvalidResponse',
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
