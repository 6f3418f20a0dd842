/**
 * The DGD metadata annotations upstream's admission owns beside the update strategy: the origin
 * version (stamped on CREATE, then immutable), the workload provider (materialized on CREATE,
 * then immutable), the vLLM distributed executor and the kube discovery mode; and the rule that
 * an image without a semver tag needs `runtimeVersionOverride`.
 *
 * Source: upstream `internal/webhook/defaulting/dynamographdeployment_handler.go` (`Default`,
 * `defaultWorkloadProvider`), `internal/webhook/validation/dynamographdeployment.go`
 * (`validateObjectMeta`, `validateObjectMetaUpdate`), `shared_helpers.go`
 * (`runtimeVersionOverrideRequired`, `runtimeVersionOverrideRequiredMessage`,
 * `invalidVLLMDistributedExecutorBackendAnnotation`); ../shared/upstream-notes/dgd.md §2.5,
 * §3.5 "Metadata" ("origin-version: must be semver; immutable, including its presence").
 * @module
 */
import {
  ANNOTATION_ENABLE_GROVE,
  ANNOTATION_KUBE_DISCOVERY_MODE,
  ANNOTATION_OPERATOR_ORIGIN_VERSION,
  ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND,
  ANNOTATION_WORKLOAD_PROVIDER,
  MAIN_CONTAINER_NAME,
  WORKLOAD_PROVIDER_COMPONENT,
  WORKLOAD_PROVIDER_GROVE,
  renderPath,
  type Component,
  type FieldIssue,
} from '../../api/index.js';
import { isIntraPodFailover } from '../dgd/failover.js';
import { parseImageVersion, parseOriginVersion } from '../dgd/runtime-version.js';
import { componentPath, isObject, quoteList, type AdmissionContext } from './common.js';

/** `metadata.annotations[<key>]`. Pure. */
export function annotationPath(key: string): string {
  return renderPath(['metadata', 'annotations', { key }]);
}

/** apimachinery `FieldImmutableErrorMsg`. */
const FIELD_IMMUTABLE = 'field is immutable';

/**
 * stampDgdCreateAnnotations (mutating admission, CREATE only; the shell never calls it on
 * UPDATE): the annotations upstream's defaulting webhook writes on a new DGD.
 * - `nvidia.com/dynamo-operator-origin-version`: `operatorVersion`, only when the key is absent
 *   ("Stamp operator version on creation (don't overwrite if already set)"): a value the user or
 *   an earlier operator set is kept as it is (its syntax is validation's business).
 * - `nvidia.com/workload-provider`: derived from the routing intent, ignoring any value in the
 *   request ("Derive every new DGD from user-facing routing intent, ignoring the
 *   controller-owned annotation"): `grove`, or `component` under `nvidia.com/enable-grove:
 *   "false"` (which validation then refuses here, see `validateGroveWorkloadProvider`).
 * In: any object (either served DGD version; the metadata is the same). Out: the object itself
 * when nothing changes, else a copy with new `metadata.annotations` (copy-on-write, as
 * `defaultDgd`). Source: upstream `DGDDefaulter.Default`, `defaultWorkloadProvider`. Pure.
 */
export function stampDgdCreateAnnotations<T>(object: T, operatorVersion: string): T {
  if (!isObject(object)) return object;
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const before = isObject(metadata['annotations']) ? (metadata['annotations'] as Record<string, unknown>) : {};
  const enableGrove = before[ANNOTATION_ENABLE_GROVE];
  const provider = typeof enableGrove === 'string' && enableGrove.toLowerCase() === 'false' ? WORKLOAD_PROVIDER_COMPONENT : WORKLOAD_PROVIDER_GROVE;
  const annotations: Record<string, unknown> = { ...before, [ANNOTATION_WORKLOAD_PROVIDER]: provider };
  if (!(ANNOTATION_OPERATOR_ORIGIN_VERSION in before)) annotations[ANNOTATION_OPERATOR_ORIGIN_VERSION] = operatorVersion;
  const isUnchanged = Object.keys(annotations).length === Object.keys(before).length && Object.entries(annotations).every(([k, v]) => before[k] === v);
  if (isUnchanged) return object;
  return { ...object, metadata: { ...metadata, annotations } } as T;
}

/**
 * validateMetadataAnnotations: the values upstream's `validateObjectMeta` accepts.
 * - origin version: Invalid `must be valid semver` (Masterminds `semver.NewVersion`, see
 *   `parseOriginVersion`);
 * - vLLM executor: Invalid `must be "mp" or "ray"` (compared case-insensitively);
 * - kube discovery mode: NotSupported, supported values `"pod", "container"` (exact);
 * - workload provider: NotSupported, supported values `"component", "grove"`;
 * - with intra-pod failover on any component, the discovery mode must be `container`: Invalid
 *   `must be "container" when intra-pod failover is configured` (value the annotation, "" when absent).
 * Each at `metadata.annotations[<key>]`. Source: upstream `validateObjectMeta`. Pure.
 */
export function validateMetadataAnnotations(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const annotations = ctx.dgd.metadata.annotations ?? {};
  const issues: FieldIssue[] = [];
  const origin = annotations[ANNOTATION_OPERATOR_ORIGIN_VERSION];
  if (origin !== undefined && parseOriginVersion(origin) === undefined) {
    issues.push({ path: annotationPath(ANNOTATION_OPERATOR_ORIGIN_VERSION), type: 'Invalid', value: origin, detail: 'must be valid semver' });
  }
  const executor = annotations[ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND];
  if (executor !== undefined && !['mp', 'ray'].includes(executor.toLowerCase())) {
    issues.push({ path: annotationPath(ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND), type: 'Invalid', value: executor, detail: 'must be "mp" or "ray"' });
  }
  const discoveryMode = annotations[ANNOTATION_KUBE_DISCOVERY_MODE];
  if (discoveryMode !== undefined && discoveryMode !== 'pod' && discoveryMode !== 'container') {
    issues.push({ path: annotationPath(ANNOTATION_KUBE_DISCOVERY_MODE), type: 'NotSupported', value: discoveryMode, detail: `supported values: ${quoteList(['pod', 'container'])}` });
  }
  const provider = annotations[ANNOTATION_WORKLOAD_PROVIDER];
  if (provider !== undefined && provider !== WORKLOAD_PROVIDER_COMPONENT && provider !== WORKLOAD_PROVIDER_GROVE) {
    issues.push({ path: annotationPath(ANNOTATION_WORKLOAD_PROVIDER), type: 'NotSupported', value: provider, detail: `supported values: ${quoteList([WORKLOAD_PROVIDER_COMPONENT, WORKLOAD_PROVIDER_GROVE])}` });
  }
  if (ctx.dgd.spec.components.some(isIntraPodFailover) && discoveryMode !== 'container') {
    issues.push({ path: annotationPath(ANNOTATION_KUBE_DISCOVERY_MODE), type: 'Invalid', value: discoveryMode ?? '', detail: 'must be "container" when intra-pod failover is configured' });
  }
  return issues;
}

/**
 * validateMetadataAnnotationsUpdate (UPDATE): what an update may not do to the controller-owned
 * annotations.
 * - origin version: immutable, including its presence: adding, changing or removing it is
 *   Invalid `field is immutable` (value the new one, null when removed). Upstream-notes/dgd.md
 *   §3.5 "Metadata"; upstream's defaulter stamps only on CREATE, so an update never needs to.
 * - workload provider: once set it cannot be replaced or removed (Invalid `field is immutable`);
 *   materializing it on a DGD that has none is reserved to the operator: Forbidden `may only be
 *   materialized by the Dynamo operator` unless the requester is one of `config.replicasModifiers`
 *   (the reconcile function's service account, upstream's `operatorPrincipal`); with none
 *   configured the check is off, as upstream's with an empty principal.
 * Source: upstream `validateObjectMetaUpdate`; upstream-notes/dgd.md §2.5, §3.5. Pure.
 */
export function validateMetadataAnnotationsUpdate(ctx: Pick<AdmissionContext, 'dgd' | 'old' | 'config' | 'username'>): FieldIssue[] {
  if (ctx.old === undefined) return [];
  const now = ctx.dgd.metadata.annotations ?? {};
  const before = ctx.old.metadata.annotations ?? {};
  const issues: FieldIssue[] = [];
  const origin = now[ANNOTATION_OPERATOR_ORIGIN_VERSION];
  if (origin !== before[ANNOTATION_OPERATOR_ORIGIN_VERSION]) {
    issues.push({ path: annotationPath(ANNOTATION_OPERATOR_ORIGIN_VERSION), type: 'Invalid', value: origin ?? null, detail: FIELD_IMMUTABLE });
  }
  const provider = now[ANNOTATION_WORKLOAD_PROVIDER];
  const oldProvider = before[ANNOTATION_WORKLOAD_PROVIDER];
  const principals = ctx.config.replicasModifiers ?? [];
  if (oldProvider === undefined && provider !== undefined && principals.length > 0 && !principals.includes(ctx.username ?? '')) {
    issues.push({ path: annotationPath(ANNOTATION_WORKLOAD_PROVIDER), type: 'Forbidden', detail: 'may only be materialized by the Dynamo operator' });
  }
  if (oldProvider !== undefined && provider !== oldProvider) {
    issues.push({ path: annotationPath(ANNOTATION_WORKLOAD_PROVIDER), type: 'Invalid', value: provider ?? null, detail: FIELD_IMMUTABLE });
  }
  return issues;
}

/** Upstream `runtimeVersionOverrideRequiredMessage`. */
export const RUNTIME_VERSION_OVERRIDE_REQUIRED = 'is required when the specified main container image has no parseable semantic-version tag';

/**
 * validateRuntimeVersionOverrideRequired: a non-LPX component whose `main` container image has
 * no parseable semver tag (`:latest`, `:sha-123`, a digest only) needs `runtimeVersionOverride`,
 * since every runtime gate of rendering reads the version. Components whose images live in role
 * pod templates, and a missing image (./components.ts `validateMainContainer`), are left to
 * their own rules. On UPDATE an unchanged violation (same image, same override) is ratcheted:
 * only a new or changed component contract is checked ("Ratchet only complete, unchanged
 * source-version runtime contract violations").
 * DGDs generated from a DGDR (and v1beta2 Candidates) go through this same admission when they
 * are created, so the rule holds for them too.
 * Failures: Required at `spec.components[i].runtimeVersionOverride` {@link RUNTIME_VERSION_OVERRIDE_REQUIRED}.
 * Source: upstream `validateDynamoComponentDeploymentSharedSpec` (runtime compatibility),
 * `runtimeVersionOverrideRequired`; upstream-notes/dgd.md §2.3 `runtimeVersionOverride`. Pure.
 */
export function validateRuntimeVersionOverrideRequired(ctx: Pick<AdmissionContext, 'oldComponents'>, component: Component, index: number): FieldIssue[] {
  if (component.type === 'lpx') return [];
  const image = mainImage(component);
  if (image === undefined || image === '') return [];
  if ((component.runtimeVersionOverride ?? '') !== '' || parseImageVersion(image) !== undefined) return [];
  const old = ctx.oldComponents.get(component.name);
  if (old !== undefined && mainImage(old) === image && (old.runtimeVersionOverride ?? '') === '') return [];
  return [{ path: `${componentPath(index)}.runtimeVersionOverride`, type: 'Required', detail: RUNTIME_VERSION_OVERRIDE_REQUIRED }];
}

function mainImage(component: Component): string | undefined {
  return component.podTemplate?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME)?.image;
}
