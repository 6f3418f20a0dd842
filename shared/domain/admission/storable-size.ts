/**
 * Refuse at admission what cannot be stored (issue 20 item 6): a DGD whose rendered children
 * would be larger than one object the cluster can store is denied with the size and the limit,
 * instead of being admitted and then failing at every reconcile.
 *
 * The limit: etcd refuses a request larger than its `--max-request-bytes`, by default 1.5 MiB
 * (https://etcd.io/docs/latest/dev-guide/limit/, "By default, the maximum size of any request is
 * 1.5 MiB"), and custom resources such as Grove's PodCliqueSet are stored as JSON, so a rendered
 * child over 1.5 MiB of JSON cannot be stored ("etcdserver: request is too large"). The API
 * server's own request limit is twice that, 3 MiB (k8s.io/apiserver pkg/server/config.go
 * `MaxRequestBodyBytes: int64(3 * 1024 * 1024)`, "1.5MB is the recommended client request size
 * in byte the etcd server should accept ... we allow 2x"), which is why a 2.1 MB PodCliqueSet
 * passes the API server and is refused by etcd.
 * @module
 */
import type { Component, Dgd, FieldIssue } from '../../api/index.js';
import { DEFAULT_RENDER_CONFIG, renderDgd, type RenderConfig } from '../dgd/render.js';

/** etcd's default `--max-request-bytes`: 1.5 MiB (see the module docs). */
export const ETCD_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

/**
 * Bytes the renderer may add per container and per object beyond what it copies from the DGD
 * (labels, injected env, probes, ports, names derived from names already counted): a generous
 * bound, checked against real renders by test/unit/admission-storable-size.test.ts.
 */
export const RENDERED_BYTES_PER_CONTAINER = 4 * 1024;

/** How many times a container, clique or object can carry a copy of the DGD's text: once per clique, once per container in it, plus the Services. */
function copiesBound(dgd: Dgd): { copies: number; containers: number } {
  let copies = 4;
  let containers = 0;
  const count = (component: Component, template: Component['podTemplate']): number => (template?.spec?.containers?.length ?? 0) + (template?.spec?.initContainers?.length ?? 0) + 2 + (component.frontendSidecar === undefined ? 0 : 1);
  for (const component of dgd.spec.components) {
    const cliques = component.multinode === undefined ? 1 : 2;
    const templates = component.roles === undefined || component.roles.length === 0 ? [component.podTemplate] : component.roles.map((role) => role.podTemplate ?? component.podTemplate);
    for (const template of templates) {
      const perClique = count(component, template);
      containers += cliques * perClique;
      copies += cliques * (perClique + 1);
    }
    copies += 1;
  }
  return { copies, containers };
}

/**
 * Bytes the API server adds to a stored object beyond its JSON and its managedFields' structure
 * (uid, creationTimestamp, resourceVersion, generation, the managedFields entry's manager,
 * operation, apiVersion and time) and etcd adds to the request (key, transaction): measured about
 * 150 + 210 bytes on kube-apiserver 1.35.4 with etcd 3.6.16 (test/integration/storable-size.test.ts);
 * rounded up.
 */
export const STORED_OVERHEAD_BYTES = 1024;

/** The JSON bytes of `value` with every string, number and literal emptied: its structure (keys, brackets) only. Pure. */
export function skeletonBytes(value: unknown): number {
  if (Array.isArray(value)) return 2 + value.reduce((sum: number, item) => sum + skeletonBytes(item), 0) + Math.max(0, value.length - 1);
  if (typeof value === 'object' && value !== null) {
    let bytes = 2;
    let count = 0;
    for (const [key, child] of Object.entries(value)) {
      bytes += Buffer.byteLength(JSON.stringify(key)) + 1 + skeletonBytes(child);
      count += 1;
    }
    return bytes + Math.max(0, count - 1);
  }
  return 2;
}

/**
 * An upper estimate of what storing `object` through server-side apply puts in one etcd request:
 * its JSON bytes, plus the managedFields the API server records (a `fieldsV1` set mirroring every
 * field the manager applied: measured 1.68x to 1.77x the object's {@link skeletonBytes} for one
 * manager, counted as 2x), plus {@link STORED_OVERHEAD_BYTES}. Why not the JSON alone: a
 * PodCliqueSet of 1,571,840 bytes of JSON (1 KiB under etcd's limit) was refused by the real API
 * server ("etcdserver: request is too large"; it stored at most about 1,561,340 bytes of JSON for
 * that structure). Pure.
 */
export function storedBytesEstimate(object: unknown): number {
  return Buffer.byteLength(JSON.stringify(object)) + 2 * skeletonBytes(object) + STORED_OVERHEAD_BYTES;
}

/**
 * A lower bound of the UTF-8 bytes any JSON text of `value` takes: every string's UTF-16 units
 * (each came from at least one byte; escapes only add) and its quotes, every key with its quotes
 * and colon, brackets and commas, at least one byte per number and four per literal. The
 * webhook subtracts it for the stored object of an UPDATE review from the body's length, which
 * bounds the new object's JSON bytes without serialising it. Pure.
 */
export function jsonBytesLowerBound(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return 1;
  if (typeof value !== 'object' || value === null) return 4;
  let bytes = 2;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) {
      bytes += jsonBytesLowerBound(item);
      count += 1;
    }
  } else {
    for (const key in value) {
      bytes += key.length + 3 + jsonBytesLowerBound((value as Record<string, unknown>)[key]);
      count += 1;
    }
  }
  return bytes + Math.max(0, count - 1);
}

/**
 * An upper bound of the JSON bytes of any one object `renderDgd` makes of `dgd`, given
 * `objectBytes` >= the DGD's own JSON bytes: that many bytes per copy the renderer can make of the
 * DGD's text (one per clique and per container in it, one per Service, a few for the
 * PodCliqueSet), plus {@link RENDERED_BYTES_PER_CONTAINER} per container. Loose by design (every
 * copy is counted as the whole DGD); test/unit/admission-storable-size.test.ts checks it against
 * real renders. Pure.
 */
export function renderedBytesBound(dgd: Dgd, objectBytes: number): number {
  const { copies, containers } = copiesBound(dgd);
  return objectBytes * copies + containers * RENDERED_BYTES_PER_CONTAINER;
}

/**
 * Denies a DGD whose rendered PodCliqueSet (or any other rendered child) would be larger than
 * `limitBytes` of JSON. Rendering costs far more than the rest of validation, so it is done only
 * when a cheap bound says it could matter: the DGD's JSON bytes (first `objectBytes`, an upper
 * bound the webhook has for free: its request body's length; then the DGD's own JSON) times how
 * many copies the renderer can make of its text (one per clique and per container in it, one per
 * Service), plus {@link RENDERED_BYTES_PER_CONTAINER} per container; when that stays under the
 * limit nothing is rendered.
 * In: a parsed DGD that passed every other rule, the render config, `objectBytes`. Out: one Invalid issue at `spec` per child over the limit, naming it,
 * its size and the limit; none when it fits or does not render (reconcile reports that).
 * Source: issue 20 item 6; etcd "System limits". Pure.
 */
export function validateStorableSize(dgd: Dgd, options: { readonly config?: RenderConfig; readonly objectBytes?: number; readonly limitBytes?: number } = {}): FieldIssue[] {
  const limitBytes = options.limitBytes ?? ETCD_MAX_REQUEST_BYTES;
  if (options.objectBytes !== undefined && renderedBytesBound(dgd, options.objectBytes) <= limitBytes) return [];
  if (renderedBytesBound(dgd, Buffer.byteLength(JSON.stringify(dgd))) <= limitBytes) return [];
  const rendered = renderDgd(dgd, { config: options.config ?? DEFAULT_RENDER_CONFIG });
  if (!rendered.ok) return [];
  const issues: FieldIssue[] = [];
  for (const object of rendered.objects) {
    const bytes = Buffer.byteLength(JSON.stringify(object));
    // The request etcd judges carries the managedFields the API server adds too (issue 20 item 6).
    const storedBytes = storedBytesEstimate(object);
    if (storedBytes <= limitBytes) continue;
    issues.push({
      path: 'spec',
      type: 'Invalid',
      value: `${object.kind}/${object.metadata.name}`,
      detail: `the rendered ${object.kind} would be ${bytes} bytes of JSON, about ${storedBytes} bytes as stored with the managedFields the API server adds, more than the ${limitBytes} bytes one stored object may have (etcd --max-request-bytes, default 1.5 MiB); the API server would refuse it: make the pod templates or the spec-level env, labels and annotations smaller, or split the graph`,
    });
  }
  return issues;
}
