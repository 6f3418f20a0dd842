/**
 * Turns one HTTP request (headers + raw body) into what the host dispatches: an ApiServerSource
 * event naming one object, a resync request, or another CloudEvent the host will skip. Nothing
 * here does I/O; the `cloudevents` SDK parses the envelope and this module narrows its loose
 * result once (STYLE.md §1.4).
 *
 * ApiServerSource facts (upstream-notes/knative.md §1.2-1.4):
 * - types `dev.knative.apiserver.{resource,ref}.{add,update,delete}`;
 * - extensions `kind`, `apiversion`, `name`, `namespace` (`""` when cluster-scoped);
 * - `source` is the API server URL (same for every object: never part of the key);
 * - `subject` is `/apis/<apiVersion>/namespaces/<ns>/<plural>/<name>` (plural guessed);
 * - `data` is the whole object (Resource mode) or `{apiVersion, kind, name, namespace}`
 *   (Reference mode).
 * The key is taken from the extensions first, then from `data`, then (apiVersion, namespace,
 * name only) from `subject`.
 *
 * @module
 */
import { CloudEvent, HTTP, ValidationError } from 'cloudevents';
import type { IncomingHttpHeaders } from 'node:http';
import type { KubeEvent, ObjectKey } from './contract.js';

/** The CloudEvent type of a resync request (sent by a PingSource through the Broker). */
export const RESYNC_EVENT_TYPE = 'dev.dynamo-fn.resync';
/**
 * The type Knative's PingSource gives its events; it cannot be overridden (only extensions can,
 * through `ceOverrides`), so a ping is a resync request too. the chart (infra/chart/templates/_helpers.tpl) sets the `kind` extension.
 */
export const PING_EVENT_TYPE = 'dev.knative.sources.ping';

/** Prefix of every ApiServerSource event type. */
export const APISERVER_EVENT_TYPE_PREFIX = 'dev.knative.apiserver.';

/** The six ApiServerSource event types (knative/eventing `pkg/apis/sources/constants.go`). */
export const APISERVER_EVENT_TYPES = [
  'dev.knative.apiserver.resource.add',
  'dev.knative.apiserver.resource.update',
  'dev.knative.apiserver.resource.delete',
  'dev.knative.apiserver.ref.add',
  'dev.knative.apiserver.ref.update',
  'dev.knative.apiserver.ref.delete',
] as const;
export type ApiServerEventType = (typeof APISERVER_EVENT_TYPES)[number];

/** The CloudEvents attributes the host logs and hands on. */
export interface EventAttributes {
  readonly id: string;
  readonly type: string;
  readonly source: string;
}

/** What one request carried, once decoded. */
export type DecodedEvent =
  /** An ApiServerSource event naming one object. */
  | {
      readonly category: 'apiserver';
      readonly mode: 'Resource' | 'Reference';
      readonly event: KubeEvent;
    }
  /** A resync request; `kind` and `apiVersion` (from extensions) narrow the routes. */
  | {
      readonly category: 'resync';
      readonly attributes: EventAttributes;
      readonly kind: string | undefined;
      readonly apiVersion: string | undefined;
    }
  /** A valid CloudEvent of a type this host does not take: skipped, not an error. */
  | { readonly category: 'other'; readonly attributes: EventAttributes };

export type DecodeResult =
  | { readonly ok: true; readonly decoded: DecodedEvent }
  /** `reason` is short, lowercase text for the 400 body and the log. */
  | { readonly ok: false; readonly reason: string };

/** An HTTP request as the decoder needs it. */
export interface HttpMessage {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const STRUCTURED_MEDIA_TYPE = 'application/cloudevents+json';
const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

/** `application/json`, `text/json` and any `+json` suffix (RFC 6839). */
function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType === 'text/json' || mediaType.endsWith('+json');
}

/** A JSON object as JSON.parse builds it (not an array, not the SDK's typed array for data_base64). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function rejected(reason: string): DecodeResult {
  return { ok: false, reason };
}

function describeValidationError(error: unknown): string {
  if (error instanceof ValidationError) {
    const details = (error.errors ?? []).map((detail) =>
      typeof detail === 'string' ? detail : `${detail.instancePath || 'event'} ${detail.message ?? ''}`.trim(),
    );
    // The SDK appends its raw error list to the message; keep the first line and render the list.
    const summary = error.message.split('\n', 1)[0] ?? error.message;
    return details.length > 0 ? `${summary}: ${details.join(', ')}` : summary;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Parses the envelope with the SDK and returns the event with its data still raw (binary mode)
 * or already parsed (structured mode), or the reason it is not a CloudEvent.
 */
type Envelope = { readonly ok: true; readonly event: CloudEvent<unknown> } | { readonly ok: false; readonly reason: string };

/** Narrows the SDK's `CloudEventV1 | CloudEventV1[]` once. */
function singleEvent(parsed: unknown): Envelope {
  if (Array.isArray(parsed)) return { ok: false, reason: 'batched CloudEvents are not supported' };
  if (!(parsed instanceof CloudEvent)) return { ok: false, reason: 'not a CloudEvent' };
  return { ok: true, event: parsed as CloudEvent<unknown> };
}

function parseEnvelope(message: HttpMessage): Envelope {
  const mediaType = mediaTypeOf(message.headers['content-type']);
  if (mediaType === BATCH_MEDIA_TYPE) {
    return { ok: false, reason: 'batched CloudEvents are not supported' };
  }
  if (mediaType === STRUCTURED_MEDIA_TYPE) {
    let envelope: unknown;
    try {
      envelope = JSON.parse(message.body.toString('utf8'));
    } catch (error) {
      return { ok: false, reason: `body is not valid JSON: ${describeValidationError(error)}` };
    }
    if (!isPlainObject(envelope)) return { ok: false, reason: 'structured CloudEvent is not a JSON object' };
    // The SDK fills a missing id with a fresh UUID, and a missing specversion with 1.0; a
    // structured event must carry its own (CloudEvents 1.0 §3.1: both REQUIRED).
    if (typeof envelope['id'] !== 'string' || envelope['id'] === '') {
      return { ok: false, reason: 'invalid CloudEvent: missing id' };
    }
    if (envelope['specversion'] === undefined) {
      return { ok: false, reason: 'invalid CloudEvent: missing specversion' };
    }
    try {
      // Parameters such as `; charset=UTF-8` are valid but the SDK looks parsers up by the
      // exact header, so hand it the bare media type and the already-parsed envelope.
      return singleEvent(
        HTTP.toEvent({ headers: { ...message.headers, 'content-type': STRUCTURED_MEDIA_TYPE }, body: envelope }),
      );
    } catch (error) {
      return { ok: false, reason: `not a CloudEvent: ${describeValidationError(error)}` };
    }
  }
  // The SDK assumes 1.0 when ce-specversion is absent; the binary mode requires the header
  // (CloudEvents HTTP binding §3.1.3: every REQUIRED attribute is a ce- header).
  if (message.headers['ce-specversion'] === undefined) {
    return { ok: false, reason: 'not a CloudEvent: missing ce-specversion header' };
  }
  try {
    // Binary mode. The body is left out so the SDK does not guess at it (it wraps non-JSON
    // text in quotes); decodeData parses it by datacontenttype below.
    return singleEvent(HTTP.toEvent({ headers: message.headers, body: undefined }));
  } catch (error) {
    return { ok: false, reason: `not a CloudEvent: ${describeValidationError(error)}` };
  }
}

/** Binary mode: the body is the data, parsed as JSON when datacontenttype says JSON. */
function decodeBinaryData(
  body: Buffer,
  datacontenttype: string | undefined,
): { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly reason: string } {
  if (body.length === 0) return { ok: true, data: undefined };
  const text = body.toString('utf8');
  if (!isJsonMediaType(mediaTypeOf(datacontenttype ?? 'application/json'))) return { ok: true, data: text };
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: `data is not valid JSON: ${describeValidationError(error)}` };
  }
}

function stringAttribute(event: CloudEvent<unknown>, name: string): string | undefined {
  const value = (event as unknown as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

interface SubjectParts {
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
}

const SUBJECT_PATTERN = /^\/apis?\/(.+)\/namespaces\/([^/]*)\/[^/]+\/([^/]+)$/;

/**
 * Reads `/apis/<apiVersion>/namespaces/<ns>/<plural>/<name>` (knative.md §1.3). The plural is
 * guessed upstream, so the kind is never taken from it.
 */
export function parseApiServerSubject(subject: string | undefined): SubjectParts | undefined {
  const match = SUBJECT_PATTERN.exec(subject ?? '');
  if (match === null) return undefined;
  const [, apiVersion, namespace, name] = match;
  if (apiVersion === undefined || namespace === undefined || name === undefined) return undefined;
  return { apiVersion, namespace, name };
}

/**
 * Derives the object key of an ApiServerSource event: extensions first, then `data`
 * (`metadata.*` in Resource mode, top-level fields in Reference mode), then `subject`.
 * Out: the key, or the reason it cannot be derived (no kind, no name, no apiVersion).
 * Source: knative.md §1.3-1.4. Pure.
 */
export function deriveObjectKey(
  extensions: { readonly kind?: string; readonly apiversion?: string; readonly name?: string; readonly namespace?: string },
  data: Readonly<Record<string, unknown>>,
  subject: string | undefined,
): { readonly ok: true; readonly key: ObjectKey } | { readonly ok: false; readonly reason: string } {
  const metadata = isPlainObject(data['metadata']) ? data['metadata'] : {};
  const fromData = (field: string): string | undefined => {
    const nested = metadata[field];
    if (typeof nested === 'string') return nested;
    const top = data[field];
    return typeof top === 'string' ? top : undefined;
  };
  const fromSubject = parseApiServerSubject(subject);

  const kind = nonEmpty(extensions.kind) ?? nonEmpty(typeof data['kind'] === 'string' ? data['kind'] : undefined);
  const apiVersion =
    nonEmpty(extensions.apiversion) ??
    nonEmpty(typeof data['apiVersion'] === 'string' ? data['apiVersion'] : undefined) ??
    nonEmpty(fromSubject?.apiVersion);
  const name = nonEmpty(extensions.name) ?? nonEmpty(fromData('name')) ?? nonEmpty(fromSubject?.name);
  // "" is a real value here (cluster-scoped), so only an absent extension falls through.
  const namespace = extensions.namespace ?? fromData('namespace') ?? fromSubject?.namespace ?? '';

  if (kind === undefined) return { ok: false, reason: 'apiserver event has no kind' };
  if (name === undefined) return { ok: false, reason: 'apiserver event has no name' };
  if (apiVersion === undefined) return { ok: false, reason: 'apiserver event has no apiversion' };
  const invalid = invalidKeyReason({ apiVersion, kind, namespace, name });
  if (invalid !== undefined) return { ok: false, reason: invalid };
  return { ok: true, key: { apiVersion, kind, namespace, name } };
}

/** DNS-1123 subdomain: lowercase alphanumerics, `-` and `.`, alphanumeric at both ends and around dots. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** DNS-1123 label: lowercase alphanumerics and `-`, alphanumeric at both ends. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A Kind: an identifier (`PodCliqueSet`). */
const KIND_PATTERN = /^[A-Za-z][A-Za-z0-9]*$/;
/** `v1` or `<group>/<version>`. */
const API_VERSION_PATTERN = /^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9]+$/;

/** `"x"`, cut for an answer or a log line. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/**
 * Why an object key cannot name a Kubernetes object, or undefined when it can. Checked before
 * any API path is built from it, so `.`/`..`, slashes or percent signs never reach a URL:
 * names are DNS-1123 subdomains of at most 253 characters, namespaces DNS-1123 labels of at most
 * 63 (or empty, cluster-scoped), kinds identifiers, apiVersions `[group/]version`.
 * Source: Kubernetes "Object Names and IDs" (DNS-1123 subdomain and label names). Pure.
 */
export function invalidKeyReason(key: ObjectKey): string | undefined {
  if (key.name.length > 253 || !DNS1123_SUBDOMAIN.test(key.name)) {
    return `apiserver event name ${quoted(key.name)} is not a valid object name (a DNS-1123 subdomain of at most 253 characters)`;
  }
  if (key.namespace !== '' && (key.namespace.length > 63 || !DNS1123_LABEL.test(key.namespace))) {
    return `apiserver event namespace ${quoted(key.namespace)} is not a valid namespace (a DNS-1123 label of at most 63 characters)`;
  }
  if (key.kind.length > 63 || !KIND_PATTERN.test(key.kind)) {
    return `apiserver event kind ${quoted(key.kind)} is not a valid kind`;
  }
  if (key.apiVersion.length > 317 || !API_VERSION_PATTERN.test(key.apiVersion)) {
    return `apiserver event apiversion ${quoted(key.apiVersion)} is not a valid apiVersion`;
  }
  return undefined;
}

function isApiServerEventType(type: string): type is ApiServerEventType {
  return (APISERVER_EVENT_TYPES as readonly string[]).includes(type);
}

const METADATA_STRING_FIELDS = ['name', 'namespace', 'generateName', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const;
const OWNER_REFERENCE_STRING_FIELDS = ['apiVersion', 'kind', 'name', 'uid'] as const;
const OWNER_REFERENCE_BOOLEAN_FIELDS = ['controller', 'blockOwnerDeletion'] as const;

/**
 * Why a Resource-mode event's `metadata` is not shaped as the API server stores ObjectMeta
 * (k8s.io/apimachinery ObjectMeta: strings, string maps, `ownerReferences` a list of objects
 * with string apiVersion/kind/name/uid and boolean controller/blockOwnerDeletion, `finalizers`
 * a list of strings), or undefined when it is. A real ApiServerSource never sends such an
 * object; a forged or corrupted one is refused with 400 here, once, instead of throwing deep in
 * a handler (a 500 the broker would retry). Absent fields are fine. Pure.
 */
export function malformedMetadataReason(metadata: unknown): string | undefined {
  if (metadata === undefined) return undefined;
  if (!isPlainObject(metadata)) return 'apiserver event object metadata is not an object';
  for (const field of METADATA_STRING_FIELDS) {
    if (metadata[field] !== undefined && typeof metadata[field] !== 'string') return `apiserver event object metadata.${field} is not a string`;
  }
  if (metadata['generation'] !== undefined && typeof metadata['generation'] !== 'number') return 'apiserver event object metadata.generation is not a number';
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map === undefined) continue;
    if (!isPlainObject(map) || Object.values(map).some((value) => typeof value !== 'string')) return `apiserver event object metadata.${field} is not a map of strings`;
  }
  const finalizers = metadata['finalizers'];
  if (finalizers !== undefined && (!Array.isArray(finalizers) || finalizers.some((entry) => typeof entry !== 'string'))) {
    return 'apiserver event object metadata.finalizers is not a list of strings';
  }
  const owners = metadata['ownerReferences'];
  if (owners === undefined) return undefined;
  if (!Array.isArray(owners)) return 'apiserver event object metadata.ownerReferences is not a list';
  for (const [index, owner] of owners.entries()) {
    const path = `metadata.ownerReferences[${index}]`;
    if (!isPlainObject(owner)) return `apiserver event object ${path} is not an object`;
    for (const field of OWNER_REFERENCE_STRING_FIELDS) {
      if (typeof owner[field] !== 'string') return `apiserver event object ${path}.${field} is not a string`;
    }
    for (const field of OWNER_REFERENCE_BOOLEAN_FIELDS) {
      if (owner[field] !== undefined && typeof owner[field] !== 'boolean') return `apiserver event object ${path}.${field} is not a boolean`;
    }
  }
  return undefined;
}

/**
 * Decodes one HTTP request into a {@link DecodedEvent}.
 * In: request headers (any case) and the raw body. Binary mode (`ce-*` headers) and
 * structured mode (`application/cloudevents+json`) are accepted; batch mode is not.
 * Out: `{ok: true, decoded}` or `{ok: false, reason}` for a 400 answer: not a CloudEvent,
 * invalid attributes, specversion other than 1.0, unparseable JSON, an ApiServerSource event
 * whose data is not a JSON object or that names no kind/name/apiVersion, a Resource-mode object
 * whose metadata is not shaped as ObjectMeta ({@link malformedMetadataReason}).
 * Source: knative.md §1.2-1.4, §5.1. Pure.
 */
export function decodeEvent(message: HttpMessage): DecodeResult {
  const envelope = parseEnvelope(message);
  if (!envelope.ok) return rejected(envelope.reason);
  const cloudEvent = envelope.event;

  if (cloudEvent.specversion !== '1.0') {
    return rejected(`unsupported CloudEvents specversion ${JSON.stringify(cloudEvent.specversion)}`);
  }
  try {
    cloudEvent.validate();
  } catch (error) {
    return rejected(`invalid CloudEvent attributes: ${describeValidationError(error)}`);
  }

  const isStructured = mediaTypeOf(message.headers['content-type']) === STRUCTURED_MEDIA_TYPE;
  let data: unknown = cloudEvent.data;
  if (!isStructured) {
    const decoded = decodeBinaryData(message.body, cloudEvent.datacontenttype);
    if (!decoded.ok) return rejected(decoded.reason);
    data = decoded.data;
  }

  const attributes: EventAttributes = { id: cloudEvent.id, type: cloudEvent.type, source: cloudEvent.source };

  if (attributes.type === RESYNC_EVENT_TYPE || attributes.type === PING_EVENT_TYPE) {
    return {
      ok: true,
      decoded: {
        category: 'resync',
        attributes,
        kind: nonEmpty(stringAttribute(cloudEvent, 'kind')),
        apiVersion: nonEmpty(stringAttribute(cloudEvent, 'apiversion')),
      },
    };
  }

  if (!isApiServerEventType(attributes.type)) {
    return { ok: true, decoded: { category: 'other', attributes } };
  }

  if (!isPlainObject(data)) {
    return rejected('apiserver event data is not a JSON object');
  }
  const extensions = {
    kind: stringAttribute(cloudEvent, 'kind'),
    apiversion: stringAttribute(cloudEvent, 'apiversion'),
    name: stringAttribute(cloudEvent, 'name'),
    namespace: stringAttribute(cloudEvent, 'namespace'),
  };
  const derived = deriveObjectKey(extensions, data, cloudEvent.subject);
  if (!derived.ok) return rejected(derived.reason);

  const mode = attributes.type.startsWith(`${APISERVER_EVENT_TYPE_PREFIX}resource.`) ? 'Resource' : 'Reference';
  if (mode === 'Resource') {
    const malformed = malformedMetadataReason(data['metadata']);
    if (malformed !== undefined) return rejected(malformed);
  }
  return {
    ok: true,
    decoded: {
      category: 'apiserver',
      mode,
      event: {
        ...attributes,
        key: derived.key,
        object: mode === 'Resource' ? data : undefined,
      },
    },
  };
}

/**
 * Builds the Reference-mode event the host hands a handler for one key during a resync.
 * In: the resync request's attributes and one key from `route.listKeys`. Pure.
 */
export function resyncEventFor(attributes: EventAttributes, key: ObjectKey): KubeEvent {
  return { id: attributes.id, type: RESYNC_EVENT_TYPE, source: attributes.source, key, object: undefined };
}
