/**
 * Candidates of a v1beta2 Run: the generated DGD, `spec.overrides.dgd` applied atomically or not
 * at all, the Candidate's metadata by the reference's copy rules and reserved keys, and the
 * `Valid` condition from the override outcome and the strict dry-run. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "v1beta2 DGD Overrides" (atomic override,
 * metadata copy rules, reserved metadata, annotation-size limit, dry-run, PublicationBlocked)
 * and "Candidate status" (the Valid condition's four reasons; invalid Candidates count toward
 * maxCandidates and keep their order). The merge engine is `applyDgdOverride`
 * (shared/domain/dgdr/overrides.ts, upstream `dgdoverride.Apply`).
 * @module
 */
import {
  ANNOTATION_ADDITIONAL_RESOURCES,
  ANNOTATION_PREFIX_DGD_CONVERSION,
  CANDIDATE_KIND,
  DGDR_V1BETA2,
  LABEL_DGDR_CANDIDATE_ID,
  LABEL_DGDR_RUN_UID,
  REASON_OVERRIDE_FAILED,
  REASON_OVERRIDE_TARGET_NOT_FOUND,
  REASON_VALIDATION_FAILED,
  REASON_VALIDATION_SUCCEEDED,
  RUN_KIND,
} from '../../api/index.js';
import { applyDgdOverride } from '../dgdr/overrides.js';
import { fnv32a } from '../dgd/names.js';

/** A generated DGD as the search produced it (apiVersion/kind nvidia.com/v1beta1). */
export interface GeneratedDgd {
  readonly metadata: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: Readonly<Record<string, unknown>>;
}

/** The override's outcome, before the dry-run. */
export type OverrideOutcome =
  | { readonly kind: 'Applied' }
  | { readonly kind: 'TargetNotFound'; readonly message: string }
  | { readonly kind: 'Failed'; readonly message: string };

export interface CandidateContent {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Exactly the DGD spec (overridden when the override applied). */
  readonly spec: Readonly<Record<string, unknown>>;
  readonly override: OverrideOutcome;
}

/** Kubernetes' total annotation size limit, 256 KiB (apimachinery `TotalAnnotationSizeLimitB`). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
/** Object names are DNS subdomains: at most 253 characters (apimachinery `DNS1123SubdomainMaxLength`). */
const MAX_NAME_LENGTH = 253;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function stringMap(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(record(value)).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * The Candidate's name: `<run>-<candidateId>`, hash-truncated to 253 characters (upstream
 * publisher, upstream-notes/dgdr.md §5). Pure.
 */
export function candidateName(runName: string, candidateId: string): string {
  const name = `${runName}-${candidateId}`;
  if (name.length <= MAX_NAME_LENGTH) return name;
  const suffix = fnv32a(name).toString(16).padStart(8, '0');
  return `${name.slice(0, MAX_NAME_LENGTH - suffix.length - 1).replace(/[-.]+$/, '')}-${suffix}`;
}

/**
 * The metadata an override may not set: identity (`metadata.name`, `namespace`,
 * `ownerReferences`, `generateName`, `uid`), the labels `nvidia.com/dgdr-run-uid` and
 * `nvidia.com/dgdr-candidate-id`, the annotation `dgdr.nvidia.com/additional-resources`, and
 * annotations with the `nvidia.com/dgd-` conversion prefix. Out: the first offending path, or
 * undefined. Source: reference "v1beta2 DGD Overrides" ("Candidate identity ... cannot be
 * overridden. The following metadata is also reserved; attempts to override it fail atomically"). Pure.
 */
export function findReservedMetadata(override: unknown): string | undefined {
  const metadata = record(record(override)['metadata']);
  for (const field of ['name', 'namespace', 'generateName', 'uid', 'ownerReferences']) {
    if (metadata[field] !== undefined) return `metadata.${field}`;
  }
  for (const key of Object.keys(record(metadata['labels']))) {
    if (key === LABEL_DGDR_RUN_UID || key === LABEL_DGDR_CANDIDATE_ID) return `metadata.labels[${key}]`;
  }
  for (const key of Object.keys(record(metadata['annotations']))) {
    if (key === ANNOTATION_ADDITIONAL_RESOURCES || key.startsWith(ANNOTATION_PREFIX_DGD_CONVERSION)) return `metadata.annotations[${key}]`;
  }
  return undefined;
}

/**
 * The override's component names that the generated DGD lacks (compared case-sensitively, as
 * the merge engine's `spec.components[name=...]` keys are). Source: reference "Candidate status",
 * OverrideTargetNotFound: "An override names a component absent from the generated DGD". Pure.
 */
export function findMissingOverrideTargets(generated: GeneratedDgd, override: unknown): string[] {
  const names = new Set((Array.isArray(generated.spec['components']) ? generated.spec['components'] : []).map((c) => record(c)['name']));
  const targets = Array.isArray(record(record(override)['spec'])['components']) ? (record(record(override)['spec'])['components'] as unknown[]) : [];
  return targets.map((c) => record(c)['name']).filter((n): n is string => typeof n === 'string' && !names.has(n));
}

/**
 * Checks the complete Candidate metadata: label keys are qualified names and values valid
 * label values (63 characters at most), and all annotations together, reserved ones included,
 * stay within 256 KiB. Out: the first problem, or undefined.
 * Source: reference "v1beta2 DGD Overrides" ("An override that makes the complete Candidate
 * metadata invalid is rejected in full. The total annotation-size limit includes generated
 * annotations and the reserved annotations"); apimachinery ValidateLabels/ValidateAnnotations. Pure.
 */
export function validateCandidateMetadata(labels: Readonly<Record<string, string>>, annotations: Readonly<Record<string, string>>): string | undefined {
  for (const [key, value] of Object.entries(labels)) {
    if (!QUALIFIED_NAME.test(key) || (key.split('/').pop() ?? '').length > 63) return `metadata.labels: Invalid value: "${key}": not a qualified name`;
    if (value.length > 63 || !LABEL_VALUE.test(value)) return `metadata.labels[${key}]: Invalid value: "${value}": not a valid label value`;
  }
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) size += key.length + value.length;
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) return `metadata.annotations: Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT_BYTES} bytes`;
  return undefined;
}

/**
 * Decides one Candidate's content: with no override, the generated DGD; with an override,
 * the merged DGD when every target exists, no reserved metadata is touched, the merge engine
 * applies it in full (unknown fields and wrong types included: the strict dry-run judges those)
 * and the complete metadata is valid; otherwise the unchanged generated DGD
 * with only the generated labels and annotations (nothing of a failed override is kept). The
 * reserved labels `nvidia.com/dgdr-run-uid` and `nvidia.com/dgdr-candidate-id` are always added.
 * In: the Run's uid, the candidate id, the generated DGD, the override (or undefined). Pure.
 */
export function decideCandidateContent(runUid: string, candidateId: string, generated: GeneratedDgd, override: unknown): CandidateContent {
  const reserved = { [LABEL_DGDR_RUN_UID]: runUid, [LABEL_DGDR_CANDIDATE_ID]: candidateId };
  const unchanged = (outcome: OverrideOutcome): CandidateContent => ({
    labels: { ...stringMap(generated.metadata.labels), ...reserved },
    annotations: stringMap(generated.metadata.annotations),
    spec: generated.spec,
    override: outcome,
  });
  if (override === undefined) return unchanged({ kind: 'Applied' });
  const missing = findMissingOverrideTargets(generated, override);
  if (missing.length > 0) return unchanged({ kind: 'TargetNotFound', message: `override target component ${missing.map((n) => `"${n}"`).join(', ')} is not present in the generated DGD` });
  const reservedPath = findReservedMetadata(override);
  if (reservedPath !== undefined) return unchanged({ kind: 'Failed', message: `${reservedPath}: Forbidden: reserved metadata cannot be overridden` });
  const blueprint = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'candidate', ...generated.metadata }, spec: generated.spec };
  // The schema is the dry-run's to check: an unknown or wrongly typed field stays on the
  // Candidate, and Valid=False ValidationFailed records it (reference "v1beta2 DGD Overrides").
  const merged = applyDgdOverride(blueprint, override, { isSchemaChecked: false });
  if (!merged.ok) return unchanged({ kind: 'Failed', message: merged.error });
  const metadata = record(merged.dgd['metadata']);
  const labels = { ...stringMap(metadata['labels']), ...reserved };
  const annotations = stringMap(metadata['annotations']);
  const invalid = validateCandidateMetadata(labels, annotations);
  if (invalid !== undefined) return unchanged({ kind: 'Failed', message: invalid });
  return { labels, annotations, spec: record(merged.dgd['spec']), override: { kind: 'Applied' } };
}

/** The Valid condition's content (reference "Candidate status" table). */
export interface ValidVerdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** What the strict dry-run create of the Candidate's DGD answered. */
export type DryRunResult =
  | { readonly kind: 'Accepted' }
  /** The API server rejected the DGD itself (400/422: schema, CEL, webhook denial). */
  | { readonly kind: 'Rejected'; readonly message: string };

/**
 * The Valid condition: a failed override -> False OverrideTargetNotFound / OverrideFailed (no
 * dry-run); otherwise the dry-run decides: True ValidationSucceeded, or False ValidationFailed.
 * Source: reference "Candidate status" (the four reasons); message "Strict DGD dry-run succeeded"
 * from the reference's example. Pure.
 */
export function decideValid(override: OverrideOutcome, dryRun: DryRunResult | undefined): ValidVerdict | undefined {
  if (override.kind === 'TargetNotFound') return { status: 'False', reason: REASON_OVERRIDE_TARGET_NOT_FOUND, message: override.message };
  if (override.kind === 'Failed') return { status: 'False', reason: REASON_OVERRIDE_FAILED, message: override.message };
  if (dryRun === undefined) return undefined;
  if (dryRun.kind === 'Accepted') return { status: 'True', reason: REASON_VALIDATION_SUCCEEDED, message: 'Strict DGD dry-run succeeded' };
  return { status: 'False', reason: REASON_VALIDATION_FAILED, message: dryRun.message };
}

/** The DGD whose strict dry-run create checks a Candidate: the Candidate's metadata and spec. Pure. */
export function dryRunDgd(name: string, namespace: string, content: CandidateContent): Record<string, unknown> {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name, namespace, labels: content.labels, ...(Object.keys(content.annotations).length === 0 ? {} : { annotations: content.annotations }) },
    spec: content.spec,
  };
}

/**
 * The Candidate object: name {@link candidateName}, controller-owned by the Run, the content's
 * labels and annotations, `spec` exactly the DGD spec. Pure.
 */
export function renderCandidate(run: { readonly name: string; readonly namespace: string; readonly uid: string }, candidateId: string, content: CandidateContent): Record<string, unknown> {
  return {
    apiVersion: DGDR_V1BETA2,
    kind: CANDIDATE_KIND,
    metadata: {
      name: candidateName(run.name, candidateId),
      namespace: run.namespace,
      labels: content.labels,
      ...(Object.keys(content.annotations).length === 0 ? {} : { annotations: content.annotations }),
      ownerReferences: [{ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, name: run.name, uid: run.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: content.spec,
  };
}

