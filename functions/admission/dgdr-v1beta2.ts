/**
 * The v1beta2 webhooks (experimental, `dgdrV1Beta2.enabled`):
 *
 * | Path | Decision |
 * | --- | --- |
 * | `POST /mutate/nvidia.com/v1beta2/dynamographdeploymentrequests` | `defaultV1Beta2Request`: missing hardware discovered (DCGM, then Intel XPU exporters, then the Nodes' GPU Feature Discovery labels) and persisted; the static workload default |
 * | `POST /validate/nvidia.com/v1beta2/dynamographdeploymentrequests` | `validateConversionView` (the read-only `spec.v1beta1`), then `validateV1Beta2Object` |
 * | `POST /validate/nvidia.com/v1beta2/dynamographdeploymentruns` | `validateV1Beta2Object` (spec immutable, the merged AISimulate input) |
 *
 * A request that is the `spec.v1beta1` view of a native v1beta1 (or v1alpha1) request came in
 * through v1beta1 or v1alpha1 and is left to the v1beta1 webhooks; from a v1beta2 client it may
 * only come back unchanged. No I/O: before a v1beta2 mutation that needs discovery
 * ({@link hardwareDiscoveryFilter}) the server lists the Nodes and reads the metrics exporters
 * (./server.ts, shared/discovery) and hands them in as {@link V1Beta2Observed}.
 *
 * Source: dgdr-reference "Conversion views", "v1beta2 hardware SKU", "v1beta2 DGD Overrides",
 * "Replay a recorded trace"; shared/domain/v1beta2/request-admission.ts for every rule.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import jsonpatch from 'fast-json-patch';
import {
  BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA,
  DGDR_KIND,
  DGDR_PLURAL,
  DGDR_VIEW_V1BETA1,
  DYNAMO_GROUP,
  RUN_KIND,
  RUN_PLURAL,
  isDgdrV1Beta1View,
  type FieldIssue,
} from '../../shared/api/index.js';
import {
  compileAisimulateInputSchema,
  defaultV1Beta2Request,
  needsV1Beta2HardwareDiscovery,
  validateConversionView,
  validateV1Beta2Object,
  type AisimulateInputValidator,
  type DcgmFacts,
  type NodeFacts,
} from '../../shared/domain/index.js';
import type { AdmissionRequest, WebhookRoute } from './review.js';

export const V1BETA2 = 'v1beta2';

/** The v1beta2 routes; the chart registers them only with `dgdrV1Beta2.enabled`. */
export const V1BETA2_ROUTES: readonly WebhookRoute[] = [
  { kind: 'mutate', version: V1BETA2, resource: DGDR_PLURAL },
  { kind: 'validate', version: V1BETA2, resource: DGDR_PLURAL },
  { kind: 'validate', version: V1BETA2, resource: RUN_PLURAL },
];

/** What the server observed for a v1beta2 mutation: every Node, or why they could not be listed; the metrics exporters, when read. */
export interface V1Beta2Observed {
  readonly nodes?: readonly NodeFacts[] | { readonly error: string };
  /** The DCGM and Intel XPU exporters and their scrapes (absent: not read, discovery uses the Nodes' labels only). */
  readonly exporters?: DcgmFacts;
}

/** A v1beta2 answer before the review envelope (./review.ts builds it). */
export interface V1Beta2Answer {
  readonly kind: string;
  readonly badRequest?: string;
  readonly patch?: readonly jsonpatch.Operation[];
  readonly warnings?: readonly string[];
  readonly issues?: readonly FieldIssue[];
}

let bundledValidator: AisimulateInputValidator | undefined;

/** The bundled AISimulate input schema, compiled on first use (about 50 KB of JSON Schema). */
function validateBundledInput(input: unknown): readonly FieldIssue[] {
  bundledValidator ??= compileAisimulateInputSchema(BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA);
  return bundledValidator(input);
}

function isObj(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Decides one v1beta2 review. In: the route, the request (object and, on UPDATE, oldObject in
 * v1beta2), the observed Nodes (mutations only). Out: a patch, warnings, issues (a 422 denial)
 * or a bad-request reason. Pure.
 */
export function admitV1Beta2(route: WebhookRoute, request: AdmissionRequest, observed: V1Beta2Observed): V1Beta2Answer {
  const kind = route.resource === RUN_PLURAL ? RUN_KIND : DGDR_KIND;
  const expected = `${DYNAMO_GROUP}/${V1BETA2}, Kind=${kind}`;
  const received = `${request.kind.group}/${request.kind.version}, Kind=${request.kind.kind}`;
  if (received !== expected) return { kind, badRequest: `this webhook admits ${expected}, not ${received}` };
  if (request.subResource !== undefined && request.subResource !== '') return { kind };
  const object = request.object;
  if (!isObj(object)) return { kind, badRequest: 'request.object must be an object' };
  if (object['apiVersion'] !== `${DYNAMO_GROUP}/${V1BETA2}` || object['kind'] !== kind) {
    return { kind, badRequest: `request.object must be a ${DYNAMO_GROUP}/${V1BETA2} ${kind}, not ${JSON.stringify(object['apiVersion'])} ${JSON.stringify(object['kind'])}` };
  }
  const oldObject = request.operation === 'UPDATE' ? request.oldObject : undefined;
  if (request.operation === 'UPDATE' && !isObj(oldObject)) return { kind, badRequest: 'request.oldObject must be an object on UPDATE' };
  const isTerminating = isObj(object['metadata']) && object['metadata']['deletionTimestamp'] != null;
  if (route.kind === 'mutate') {
    // A view is never defaulted, and a request written through v1beta1 or v1alpha1 (an unchanged
    // spec.v1beta2 view, here in its native form) must be stored as written.
    const isFromV1Beta2 = (request.requestKind?.version ?? request.kind.version) === V1BETA2;
    if (isTerminating || isDgdrV1Beta1View(object) || !isFromV1Beta2) return { kind };
    const defaulted = defaultV1Beta2Request(object, oldObject, observed.nodes ?? { error: 'the admission function cannot list Nodes' }, observed.exporters === undefined ? {} : { dcgm: observed.exporters });
    if (!defaulted.ok) return { kind, issues: defaulted.issues };
    return { kind, patch: jsonpatch.compare(object, defaulted.object) };
  }
  if (kind === DGDR_KIND) {
    const isFromOlderVersion = (request.requestKind?.version ?? V1BETA2) !== V1BETA2;
    // A native v1beta1/v1alpha1 request written through its own version: the v1beta1 webhooks validate it.
    if (isFromOlderVersion && isDgdrV1Beta1View(object)) return { kind };
    const viewIssues = isFromOlderVersion ? [] : validateConversionView(object, oldObject, DGDR_VIEW_V1BETA1);
    if (viewIssues.length > 0) return { kind, issues: viewIssues };
    if (isDgdrV1Beta1View(object)) return { kind };
  }
  const result = validateV1Beta2Object(kind, object, oldObject, validateBundledInput);
  return { kind, issues: result.issues, warnings: result.warnings };
}

/**
 * Whether a v1beta2 review is a request mutation that will discover hardware, and with which SKU
 * filter: the DGDR mutating route, a CREATE or an UPDATE that changes the spec, written through
 * v1beta2, not terminating, not a `spec.v1beta1` view, and `spec.hardware` omitted or partial
 * (`needsV1Beta2HardwareDiscovery`; `hardware: {}` opts out). Out: `{ gpuSku }` (the explicit
 * `spec.hardware.gpu.sku`, else undefined), or undefined when there is nothing to discover, so the
 * server lists and scrapes nothing. A body that is not such a review gives undefined (the answer
 * then reports what is wrong with it). Source: dgdr-reference "v1beta2 hardware SKU". Pure.
 */
export function hardwareDiscoveryFilter(route: WebhookRoute, body: string): { readonly gpuSku: string | undefined } | undefined {
  if (route.version !== V1BETA2 || route.kind !== 'mutate' || route.resource !== DGDR_PLURAL) return undefined;
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch {
    return undefined;
  }
  const request = isObj(review) && isObj(review['request']) ? review['request'] : undefined;
  const object = request?.['object'];
  if (request === undefined || !isObj(object) || !isObj(object['spec']) || isDgdrV1Beta1View(object)) return undefined;
  const requestVersion = isObj(request['requestKind']) ? request['requestKind']['version'] : isObj(request['kind']) ? request['kind']['version'] : undefined;
  if (requestVersion !== V1BETA2 || (isObj(object['metadata']) && object['metadata']['deletionTimestamp'] != null)) return undefined;
  const oldObject = request['operation'] === 'UPDATE' ? request['oldObject'] : undefined;
  if (request['operation'] !== 'CREATE' && request['operation'] !== 'UPDATE') return undefined;
  if (isObj(oldObject) && isDeepStrictEqual(oldObject['spec'], object['spec'])) return undefined;
  if (!needsV1Beta2HardwareDiscovery(object['spec'])) return undefined;
  const hardware = object['spec']['hardware'];
  const gpu = isObj(hardware) && isObj(hardware['gpu']) ? hardware['gpu'] : {};
  return { gpuSku: typeof gpu['sku'] === 'string' ? gpu['sku'] : undefined };
}
