/**
 * AdmissionReview v1 in, AdmissionReview v1 out: routing by path, decoding, and the two
 * webhooks for DynamoGraphDeployments. No I/O: the HTTP server (./server.ts) hands a path and
 * a body in and writes the answer out.
 *
 * | Path | Decision | Answer |
 * | --- | --- | --- |
 * | `POST /mutate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | `defaultDgd` | allowed, with a JSON Patch when defaults were added |
 * | `POST /validate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | `validateDgd` | allowed with warnings, or denied: code 422, reason Invalid, one message listing every field issue |
 *
 * A body that is not an AdmissionReview we can answer (not JSON, nested deeper than
 * {@link MAX_NESTING_DEPTH}, wrong apiVersion/kind, no `request.uid`) gets HTTP 400 and a
 * plain-text reason, since there is no uid to echo. A well-formed review of something else (another
 * kind or version than the path names, an object that is not an object) is answered with a review
 * denying it with code 400. DELETE and CONNECT, and subresource requests, are allowed untouched.
 *
 * Source: ../shared/upstream-notes/knative.md §4.1 (AdmissionReview facts); DESIGN.md "Admission";
 * upstream-notes/dgd.md §3 (error aggregation into one Invalid).
 * @module
 */
import jsonpatch from 'fast-json-patch';
import { z } from 'zod';
import { DGD_KIND, DGD_PLURAL, DYNAMO_GROUP, formatIssue, formatIssues, type FieldIssue, type FieldIssueType } from '../../shared/api/index.js';
import { DGDR_KIND, DGDR_PLURAL, RUN_PLURAL, isDgdrV1Beta2View } from '../../shared/api/index.js';
import { validateConversionView } from '../../shared/domain/index.js';
import { DEFAULT_DGDR_ADMISSION_CONFIG, defaultDgd, defaultingPatch, jsonBytesLowerBound, stampDgdCreateAnnotations, validateDgd, type AdmissionConfig, type ClusterTopologies, type DgdrAdmissionConfig } from '../../shared/domain/index.js';
import { admitDgdr, dgdrInvalidMessage, mutateDgdr } from './dgdr.js';
import { V1BETA2, V1BETA2_ROUTES, admitV1Beta2, type V1Beta2Observed } from './dgdr-v1beta2.js';

/**
 * What the server read from the API server for one review: the v1beta2 hardware-discovery facts,
 * and for a DGD validation the ClusterTopologyBindings its typed topology names (./server.ts;
 * shared/domain/admission/topology.ts `clusterTopologyNamesToRead`).
 */
export interface AdmissionObserved extends V1Beta2Observed {
  readonly clusterTopologies?: ClusterTopologies;
}

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_REVIEW_KIND = 'AdmissionReview';
export const SERVED_VERSIONS = ['v1beta1', 'v1alpha1'] as const;
export type ServedVersion = (typeof SERVED_VERSIONS)[number];
export type WebhookKind = 'mutate' | 'validate';

/**
 * Deepest JSON nesting accepted. A DGD with full pod templates nests about 20 levels inside a
 * review; anything far deeper is not a Kubernetes object and would only cost stack in the rules.
 */
export const MAX_NESTING_DEPTH = 100;

/** One webhook endpoint. */
export interface WebhookRoute {
  readonly kind: WebhookKind;
  readonly version: ServedVersion | typeof V1BETA2;
  /** The resource admitted; absent means `dynamographdeployments`. */
  readonly resource?: typeof DGDR_PLURAL | typeof RUN_PLURAL;
}

/**
 * The DGDR webhooks serve v1beta1 (v1alpha1 requests reach them converted, through the conversion
 * webhook) and v1beta2 (./dgdr-v1beta2.ts); Runs are validated in v1beta2.
 */
const DGDR_ROUTES: readonly WebhookRoute[] = [
  { kind: 'mutate', version: 'v1beta1', resource: DGDR_PLURAL },
  { kind: 'validate', version: 'v1beta1', resource: DGDR_PLURAL },
  ...V1BETA2_ROUTES,
];

/** The URL path of a webhook, e.g. `/validate/nvidia.com/v1beta1/dynamographdeployments`. Pure. */
export function webhookPath(route: WebhookRoute): string {
  return `/${route.kind}/${DYNAMO_GROUP}/${route.version}/${route.resource ?? DGD_PLURAL}`;
}

const ROUTES: ReadonlyMap<string, WebhookRoute> = new Map(
  [
    ...(['mutate', 'validate'] as const).flatMap((kind) => SERVED_VERSIONS.map((version) => [webhookPath({ kind, version }), { kind, version }] as const)),
    ...DGDR_ROUTES.map((route) => [webhookPath(route), route] as const),
  ],
);

/** The route for a request path (the query string, e.g. the API server's `?timeout=10s`, is ignored), or undefined. Pure. */
export function findWebhookRoute(pathname: string): WebhookRoute | undefined {
  const query = pathname.indexOf('?');
  return ROUTES.get(query === -1 ? pathname : pathname.slice(0, query));
}

const GroupVersionKindSchema = z.object({ group: z.string(), version: z.string(), kind: z.string() });

/** The part of an admission.k8s.io/v1 AdmissionReview we read; objects stay unparsed here. */
export const AdmissionReviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal(ADMISSION_REVIEW_KIND),
  request: z.object({
    uid: z.string().min(1),
    kind: GroupVersionKindSchema,
    /** The kind of the original request, before conversion to the webhook's version (`kind` is the converted one). */
    requestKind: GroupVersionKindSchema.optional(),
    subResource: z.string().optional(),
    name: z.string().optional(),
    namespace: z.string().optional(),
    operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
    object: z.unknown().optional(),
    oldObject: z.unknown().optional(),
    dryRun: z.boolean().optional(),
    userInfo: z.object({ username: z.string().optional() }).loose().optional(),
  }),
});
export type AdmissionRequest = z.infer<typeof AdmissionReviewSchema>['request'];

/** metav1.Status as an admission response carries it. */
export interface ResponseStatus {
  readonly code: number;
  readonly reason?: string;
  readonly message: string;
  readonly details?: { readonly name: string; readonly group: string; readonly kind: string; readonly causes: readonly { readonly reason: string; readonly message: string; readonly field: string }[] };
}

/** admission.k8s.io/v1 AdmissionResponse. */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: ResponseStatus;
  readonly patchType?: 'JSONPatch';
  /** Base64 of an RFC 6902 JSON Patch. */
  readonly patch?: string;
  readonly warnings?: readonly string[];
}

/** What the server writes: an HTTP status and a body, plus a summary for the request log. */
export type AdmissionAnswer =
  | { readonly status: 200; readonly review: { readonly apiVersion: string; readonly kind: string; readonly response: AdmissionResponse }; readonly summary: AnswerSummary }
  | { readonly status: 400; readonly message: string };

/** Log fields of an answered review (no object contents). */
export interface AnswerSummary {
  readonly uid: string;
  readonly operation: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly allowed: boolean;
  readonly issues: number;
  readonly warnings: number;
  readonly patchOperations: number;
}

const CAUSE_REASONS: Readonly<Record<FieldIssueType, string>> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
};

/**
 * Whether a parsed JSON value nests deeper than `limit` levels. The walk recurses at most
 * `limit` frames (it stops there), so a hostile body cannot exhaust the stack here. Pure.
 */
export function exceedsNestingDepth(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  // Only objects and arrays are descended into (no call per string or number).
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null && exceedsNestingDepth(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && exceedsNestingDepth(item, limit - 1)) return true;
  }
  return false;
}

/** What one walk of a parsed review learns: whether it nests too deep, whether any object in it has an own `__proto__` key, and a lower bound of `request.oldObject`'s JSON bytes. */
interface BodyShape {
  readonly isTooDeep: boolean;
  readonly hasPrototypeKeys: boolean;
  /** `jsonBytesLowerBound(request.oldObject)` (shared/domain storable-size), counted in the same walk; undefined when the review has no object there. */
  readonly oldObjectBytes: number | undefined;
}

interface WalkState {
  isTooDeep: boolean;
  hasPrototypeKeys: boolean;
}

/**
 * {@link exceedsNestingDepth} and `hasPrototypeKeys` (shared/api) in one walk of the parsed body,
 * so the validating webhook need not walk the object again for the second (a key `__proto__`
 * anywhere in the review leaves the rules to look for it themselves); the walk of
 * `request.oldObject` also counts its JSON bytes' lower bound, which validation subtracts from
 * the body's length (so the stored object of an UPDATE is not walked a second time for it).
 * Stops at `limit` frames, as {@link exceedsNestingDepth} does. Pure.
 */
function inspectBody(value: unknown, limit: number): BodyShape {
  const state: WalkState = { isTooDeep: false, hasPrototypeKeys: false };
  const request = isRecord(value) ? value['request'] : undefined;
  const oldObject = isRecord(request) ? request['oldObject'] : undefined;
  if (typeof oldObject !== 'object' || oldObject === null) {
    walkBody(value, limit, state, undefined);
    return { ...state, oldObjectBytes: undefined };
  }
  // The stored object sits two levels down (review, request); it is walked once, counting.
  walkBody(value, limit, state, oldObject);
  if (state.isTooDeep) return { ...state, oldObjectBytes: undefined };
  const oldObjectBytes = walkCounting(oldObject, limit - 2, state);
  return { ...state, oldObjectBytes };
}

/** Walks `value` (skipping the object `skip`, walked by the caller) for depth and `__proto__` keys. */
function walkBody(value: object | unknown, limit: number, state: WalkState, skip: object | undefined): void {
  if (typeof value !== 'object' || value === null) return;
  if (limit <= 0) {
    state.isTooDeep = true;
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'object' && item !== null && item !== skip) walkBody(item, limit - 1, state, skip);
      if (state.isTooDeep) return;
    }
    return;
  }
  for (const key in value) {
    if (key === '__proto__') state.hasPrototypeKeys = true;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && item !== skip) walkBody(item, limit - 1, state, skip);
    if (state.isTooDeep) return;
  }
}

/**
 * {@link walkBody} of one object (not skipping anything) that also returns
 * `jsonBytesLowerBound(value)` (shared/domain/admission/storable-size.ts), counted by the same
 * rule: a string's UTF-16 units and quotes, a key with its quotes and colon, one byte per
 * number, four per literal, brackets and commas. Undefined-free input (JSON.parse output). Pure.
 */
function walkCounting(value: unknown, limit: number, state: WalkState): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return 1;
  if (typeof value !== 'object' || value === null) return 4;
  if (limit <= 0) {
    state.isTooDeep = true;
    return 0;
  }
  let bytes = 2;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) {
      bytes += walkCounting(item, limit - 1, state);
      if (state.isTooDeep) return 0;
      count += 1;
    }
  } else {
    for (const key in value) {
      if (key === '__proto__') state.hasPrototypeKeys = true;
      bytes += key.length + 3 + walkCounting((value as Record<string, unknown>)[key], limit - 1, state);
      if (state.isTooDeep) return 0;
      count += 1;
    }
  }
  return bytes + Math.max(0, count - 1);
}

const OPERATIONS: ReadonlySet<unknown> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isGroupVersionKind(value: unknown): value is { group: string; version: string; kind: string } {
  return isRecord(value) && typeof value['group'] === 'string' && typeof value['version'] === 'string' && typeof value['kind'] === 'string';
}

const isOptionalString = (value: unknown): value is string | undefined => value === undefined || typeof value === 'string';

/**
 * The review's request, read without zod when it is plainly well-formed (the common case: every
 * field {@link AdmissionReviewSchema} reads present with its type); undefined otherwise, and then
 * zod parses it, so every refusal and its message still come from the schema. Accepts only what
 * the schema accepts; the fields are the schema's, nested objects shared with the body. Pure.
 */
function readWellFormedRequest(body: unknown): AdmissionRequest | undefined {
  if (!isRecord(body) || body['apiVersion'] !== ADMISSION_API_VERSION || body['kind'] !== ADMISSION_REVIEW_KIND) return undefined;
  const request = body['request'];
  if (!isRecord(request)) return undefined;
  const { uid, kind, requestKind, subResource, name, namespace, operation, object, oldObject, dryRun, userInfo } = request;
  if (typeof uid !== 'string' || uid.length < 1 || !isGroupVersionKind(kind) || !OPERATIONS.has(operation)) return undefined;
  if ((requestKind !== undefined && !isGroupVersionKind(requestKind)) || !isOptionalString(subResource) || !isOptionalString(name) || !isOptionalString(namespace)) return undefined;
  if ((dryRun !== undefined && typeof dryRun !== 'boolean') || (userInfo !== undefined && !(isRecord(userInfo) && isOptionalString(userInfo['username'])))) return undefined;
  return {
    uid,
    kind,
    ...(requestKind === undefined ? {} : { requestKind }),
    ...(subResource === undefined ? {} : { subResource }),
    ...(name === undefined ? {} : { name }),
    ...(namespace === undefined ? {} : { namespace }),
    operation: operation as AdmissionRequest['operation'],
    ...(object === undefined ? {} : { object }),
    ...(oldObject === undefined ? {} : { oldObject }),
    ...(dryRun === undefined ? {} : { dryRun }),
    ...(userInfo === undefined ? {} : { userInfo: userInfo as NonNullable<AdmissionRequest['userInfo']> }),
  };
}

/**
 * Answers one webhook call.
 * In: the route, the raw request body, `config.lpxEnabled`, what a v1beta2 mutation observed,
 * and the body's UTF-8 length when the caller has it (the server reads it off the received
 * bytes; otherwise it is measured). Out: HTTP 200 with an AdmissionReview
 * echoing `request.uid`, or HTTP 400 with a plain-text reason when the body is not an answerable
 * AdmissionReview. Never throws for any input.
 * Source: knative.md §4.1; DESIGN.md "Admission". Pure.
 */
export function answerAdmissionReview(route: WebhookRoute, body: string, config: AdmissionConfig, observed: AdmissionObserved = {}, bodyBytes?: number): AdmissionAnswer {
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(body);
  } catch (error) {
    return { status: 400, message: `request body is not valid JSON: ${(error as Error).message}` };
  }
  let request = readWellFormedRequest(parsedBody);
  // A v1beta1 DGD mutation of the expected shape reads only fixed paths of the object (the
  // defaults, ../../shared/domain/admission/defaulting.ts) and diffs only the subtrees it copied:
  // nothing in it recurses over the body's depth (JSON.parse itself is iterative), so it skips
  // the walk that bounds the depth. Everything else is walked first, as before.
  const shape = request !== undefined && isPlainDgdMutation(route, request) ? UNWALKED : inspectBody(parsedBody, MAX_NESTING_DEPTH);
  if (shape.isTooDeep) return { status: 400, message: `request body nests deeper than ${MAX_NESTING_DEPTH} levels` };
  if (request === undefined) {
    const review = AdmissionReviewSchema.safeParse(parsedBody);
    if (!review.success) {
      const problems = review.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      return { status: 400, message: `request body is not an ${ADMISSION_API_VERSION} ${ADMISSION_REVIEW_KIND} with a request.uid: ${problems}` };
    }
    request = review.data.request;
  }
  const { response, patchOperations } = respond(route, request, config, observed, { text: body, bytes: bodyBytes, hasPrototypeKeys: shape.hasPrototypeKeys, oldObjectBytes: shape.oldObjectBytes });
  return {
    status: 200,
    review: { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_REVIEW_KIND, response },
    summary: {
      uid: request.uid,
      operation: request.operation,
      namespace: request.namespace,
      name: request.name,
      allowed: response.allowed,
      issues: response.status?.details?.causes.length ?? 0,
      warnings: response.warnings?.length ?? 0,
      patchOperations,
    },
  };
}

/** The shape of a body not walked: `__proto__` keys are taken as present (the rules look for them themselves), nothing counted. */
const UNWALKED: BodyShape = { isTooDeep: false, hasPrototypeKeys: true, oldObjectBytes: undefined };

const V1BETA1_DGD_API_VERSION = `${DYNAMO_GROUP}/v1beta1`;

/**
 * Whether a review is a CREATE or UPDATE of a v1beta1 DGD on the v1beta1 mutating webhook whose
 * envelope {@link respond} accepts as it is: kind, no subresource, object (and oldObject on UPDATE)
 * a v1beta1 DynamoGraphDeployment. Such a review is answered by `mutate` alone, which never
 * serialises or walks a user value of unbounded depth. Pure.
 */
function isPlainDgdMutation(route: WebhookRoute, request: AdmissionRequest): boolean {
  if (route.kind !== 'mutate' || route.resource !== undefined || route.version !== 'v1beta1') return false;
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return false;
  if (request.kind.group !== DYNAMO_GROUP || request.kind.version !== 'v1beta1' || request.kind.kind !== DGD_KIND) return false;
  if (request.subResource !== undefined && request.subResource !== '') return false;
  if (!isV1Beta1Dgd(request.object)) return false;
  return request.operation === 'CREATE' || isV1Beta1Dgd(request.oldObject);
}

function isV1Beta1Dgd(value: unknown): boolean {
  return isRecord(value) && value['apiVersion'] === V1BETA1_DGD_API_VERSION && value['kind'] === DGD_KIND;
}

/** The body, what the shell knows of it without looking again: its UTF-8 length when the server had it, and whether any object in it has a `__proto__` key. */
interface BodyFacts {
  readonly text: string;
  readonly bytes: number | undefined;
  readonly hasPrototypeKeys: boolean;
  /** A lower bound of `request.oldObject`'s JSON bytes, from the body walk; undefined when not counted. */
  readonly oldObjectBytes: number | undefined;
}

function respond(route: WebhookRoute, request: AdmissionRequest, config: AdmissionConfig, observed: AdmissionObserved, body: BodyFacts): { response: AdmissionResponse; patchOperations: number } {
  const { uid } = request;
  if (request.operation === 'DELETE' || request.operation === 'CONNECT') return only({ uid, allowed: true });
  if (route.version === V1BETA2) return respondV1Beta2(route, request, observed);
  if (route.resource === DGDR_PLURAL) return respondDgdr(route, request, config.dgdr ?? DEFAULT_DGDR_ADMISSION_CONFIG);
  const expected = `${DYNAMO_GROUP}/${route.version}, Kind=${DGD_KIND}`;
  const received = `${request.kind.group}/${request.kind.version}, Kind=${request.kind.kind}`;
  if (received !== expected) return only(reject(uid, 400, `this webhook admits ${expected}, not ${received}`));
  if (request.subResource !== undefined && request.subResource !== '') return only({ uid, allowed: true });
  const object = request.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return only(reject(uid, 400, 'request.object must be an object'));
  const apiVersion = (object as Record<string, unknown>)['apiVersion'];
  if (apiVersion !== `${DYNAMO_GROUP}/${route.version}` || (object as Record<string, unknown>)['kind'] !== DGD_KIND) {
    return only(reject(uid, 400, `request.object must be a ${DYNAMO_GROUP}/${route.version} ${DGD_KIND}, not ${JSON.stringify(apiVersion)} ${JSON.stringify((object as Record<string, unknown>)['kind'])}`));
  }
  const oldObject = request.operation === 'UPDATE' ? request.oldObject : undefined;
  if (request.operation === 'UPDATE') {
    // The API server always sends the stored object on UPDATE, in the webhook's version; a
    // review without it would let immutability rules pass unchecked (issue 12).
    if (typeof oldObject !== 'object' || oldObject === null || Array.isArray(oldObject)) {
      return only(reject(uid, 400, 'request.oldObject must be an object on UPDATE'));
    }
    const oldApiVersion = (oldObject as Record<string, unknown>)['apiVersion'];
    const oldKind = (oldObject as Record<string, unknown>)['kind'];
    if (oldApiVersion !== `${DYNAMO_GROUP}/${route.version}` || oldKind !== DGD_KIND) {
      return only(reject(uid, 400, `request.oldObject must be a ${DYNAMO_GROUP}/${route.version} ${DGD_KIND}, not ${JSON.stringify(oldApiVersion)} ${JSON.stringify(oldKind)}`));
    }
  }
  return route.kind === 'mutate' ? mutate(uid, object, request.operation, (config.dgdr ?? DEFAULT_DGDR_ADMISSION_CONFIG).operatorVersion) : only(validate(uid, object, oldObject, request, config, body, observed.clusterTopologies));
}

function only(response: AdmissionResponse): { response: AdmissionResponse; patchOperations: number } {
  return { response, patchOperations: 0 };
}

function reject(uid: string, code: number, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code, reason: 'BadRequest', message } };
}

/**
 * Defaulting as a JSON Patch: for a v1beta1 DGD the operations recorded as each default is set
 * (`defaultingPatch`, the same operations the diff gives), otherwise the diff of the object and its
 * defaulted copy. On CREATE the origin version (`operatorVersion`, the configured OPERATOR_VERSION) and the
 * workload provider are stamped too (upstream `DGDDefaulter`: on UPDATE "the origin version
 * annotation is immutable once set").
 */
function mutate(uid: string, object: object, operation: string, operatorVersion: string): { response: AdmissionResponse; patchOperations: number } {
  const isTerminating = operation === 'UPDATE' && isObjectWithDeletionTimestamp(object);
  if (isTerminating) return only({ uid, allowed: true });
  // A v1beta1 DGD's ops are recorded as its defaults are set; any other object's come from the diff of its defaulted copy.
  const operations = defaultingPatch(object, operation === 'CREATE' ? operatorVersion : undefined) ?? diffDefaulted(object, operation, operatorVersion);
  if (operations.length === 0) return only({ uid, allowed: true });
  return { response: { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(operations)).toString('base64') }, patchOperations: operations.length };
}

function diffDefaulted(object: object, operation: string, operatorVersion: string): readonly unknown[] {
  const defaulted = defaultDgd(object);
  return jsonpatch.compare(object, operation === 'CREATE' ? stampDgdCreateAnnotations(defaulted, operatorVersion) : defaulted);
}

function isObjectWithDeletionTimestamp(object: object): boolean {
  const metadata = (object as Record<string, unknown>)['metadata'];
  return typeof metadata === 'object' && metadata !== null && (metadata as Record<string, unknown>)['deletionTimestamp'] != null;
}

function validate(uid: string, object: object, oldObject: unknown, request: AdmissionRequest, config: AdmissionConfig, body: BodyFacts, clusterTopologies: ClusterTopologies | undefined): AdmissionResponse {
  // The body's length, less what the stored object's JSON takes at least, bounds the object's
  // JSON bytes (validation's storable-size rule uses it to skip rendering without serialising).
  const objectBytes = (body.bytes ?? Buffer.byteLength(body.text)) - (oldObject === undefined ? 0 : (body.oldObjectBytes ?? jsonBytesLowerBound(oldObject)));
  // The body walk already looked for `__proto__` keys in object and oldObject; the rules skip that walk when it found none.
  const result = validateDgd(object, oldObject, config, { username: request.userInfo?.username, objectBytes, clusterTopologies, ...(body.hasPrototypeKeys ? {} : { isFreeOfPrototypeKeys: true }) });
  const warnings = result.warnings.length > 0 ? { warnings: result.warnings } : {};
  if (result.issues.length === 0) return { uid, allowed: true, ...warnings };
  return { uid, allowed: false, status: invalidStatus(result.issues, objectName(object) ?? request.name ?? ''), ...warnings };
}

function objectName(object: object): string | undefined {
  const metadata = (object as Record<string, unknown>)['metadata'];
  const name = typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>)['name'] : undefined;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The status an aggregated Invalid error carries (apierrors.NewInvalid): code 422, reason
 * Invalid, message `DynamoGraphDeployment.nvidia.com "<name>" is invalid: <issues>` and one
 * cause per issue (`field` is the path, `message` the issue without it). Pure.
 */
export function invalidStatus(issues: readonly FieldIssue[], name: string): ResponseStatus {
  return {
    code: 422,
    reason: 'Invalid',
    message: `${DGD_KIND}.${DYNAMO_GROUP} ${JSON.stringify(name)} is invalid: ${formatIssues(issues)}`,
    details: {
      name,
      group: DYNAMO_GROUP,
      kind: DGD_KIND,
      causes: issues.map((issue) => ({ reason: CAUSE_REASONS[issue.type], message: formatIssue(issue).slice(issue.path.length + 2), field: issue.path })),
    },
  };
}

/** The DGDR webhooks: the same envelope checks as the DGD ones, then ./dgdr.ts. */
function respondDgdr(route: WebhookRoute, request: AdmissionRequest, config: DgdrAdmissionConfig): { response: AdmissionResponse; patchOperations: number } {
  const { uid } = request;
  const expected = `${DYNAMO_GROUP}/${route.version}, Kind=${DGDR_KIND}`;
  const received = `${request.kind.group}/${request.kind.version}, Kind=${request.kind.kind}`;
  if (received !== expected) return only(reject(uid, 400, `this webhook admits ${expected}, not ${received}`));
  if (request.subResource !== undefined && request.subResource !== '') return only({ uid, allowed: true });
  const object = request.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return only(reject(uid, 400, 'request.object must be an object'));
  const record = object as Record<string, unknown>;
  if (record['apiVersion'] !== `${DYNAMO_GROUP}/${route.version}` || record['kind'] !== DGDR_KIND) {
    return only(reject(uid, 400, `request.object must be a ${DYNAMO_GROUP}/${route.version} ${DGDR_KIND}, not ${JSON.stringify(record['apiVersion'])} ${JSON.stringify(record['kind'])}`));
  }
  const operation = request.operation === 'UPDATE' ? 'UPDATE' : 'CREATE';
  // A native v1beta2 request reads here as its spec.v1beta2 view: never defaulted by the v1beta1
  // rules, validated by the v1beta2 webhook when the request came in v1beta2, and otherwise only
  // allowed back unchanged (reference "Conversion views").
  const oldObject = operation === 'UPDATE' ? request.oldObject : undefined;
  const isNativeV1Beta2 = (request.requestKind?.version ?? request.kind.version) === V1BETA2;
  if (route.kind === 'mutate' && isDgdrV1Beta2View(record)) return only({ uid, allowed: true });
  if (route.kind === 'validate' && !isNativeV1Beta2) {
    const viewIssues = validateConversionView(object, oldObject, 'v1beta2');
    if (viewIssues.length > 0) return only(dgdrDenial(uid, viewIssues, objectName(object) ?? request.name ?? '', undefined));
  }
  if (route.kind === 'validate' && isDgdrV1Beta2View(record)) return only({ uid, allowed: true });
  if (route.kind === 'mutate') {
    if (isObjectWithDeletionTimestamp(object)) return only({ uid, allowed: true });
    const answer = mutateDgdr(object, operation, config);
    if (answer.patch === undefined) return only({ uid, allowed: true });
    return { response: { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(answer.patch)).toString('base64') }, patchOperations: answer.patch.length };
  }
  const answer = admitDgdr(object, oldObject);
  if (answer.allowed || answer.issues === undefined) return only({ uid, allowed: true, ...(answer.warnings === undefined ? {} : { warnings: answer.warnings }) });
  return only(dgdrDenial(uid, answer.issues, objectName(object) ?? request.name ?? '', answer.warnings));
}

/** The v1beta2 webhooks (DGDR mutate and validate, Run validate): ./dgdr-v1beta2.ts decides, this builds the response. */
function respondV1Beta2(route: WebhookRoute, request: AdmissionRequest, observed: V1Beta2Observed): { response: AdmissionResponse; patchOperations: number } {
  const { uid } = request;
  const answer = admitV1Beta2(route, request, observed);
  if (answer.badRequest !== undefined) return only(reject(uid, 400, answer.badRequest));
  const warnings = answer.warnings === undefined || answer.warnings.length === 0 ? {} : { warnings: answer.warnings };
  if (answer.issues !== undefined && answer.issues.length > 0) {
    const name = (typeof request.object === 'object' && request.object !== null ? objectName(request.object) : undefined) ?? request.name ?? '';
    return only(dgdrDenial(uid, answer.issues, name, answer.warnings, answer.kind));
  }
  if (answer.patch === undefined || answer.patch.length === 0) return only({ uid, allowed: true, ...warnings });
  return { response: { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(answer.patch)).toString('base64'), ...warnings }, patchOperations: answer.patch.length };
}

/** A denied DGDR (or Run, by `kind`): the Invalid status naming the kind, with every issue as a cause. Pure. */
export function dgdrDenial(uid: string, issues: readonly FieldIssue[], name: string, warnings: readonly string[] | undefined, kind: string = DGDR_KIND): AdmissionResponse {
  const status = invalidStatus(issues, name);
  const message = kind === DGDR_KIND ? dgdrInvalidMessage(issues, name) : `${kind}.${DYNAMO_GROUP} ${JSON.stringify(name)} is invalid: ${formatIssues(issues)}`;
  return { uid, allowed: false, status: { ...status, message, details: { name, group: DYNAMO_GROUP, kind, causes: status.details?.causes ?? [] } }, ...(warnings === undefined || warnings.length === 0 ? {} : { warnings }) };
}
