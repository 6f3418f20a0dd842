/**
 * The CRDs of DynamoGraphDeploymentRun and DynamoGraphDeploymentCandidate (served and stored
 * version v1beta2), generated from the zod schemas. The chart installs them only with
 * `dgdrV1Beta2.enabled` (upstream `crd-apply` skips them with its `DGDRV1Beta2` gate off,
 * upstream-notes/dgdr.md §5).
 *
 * Both specs are immutable (upstream CEL `!has(oldSelf.spec) || self.spec == oldSelf.spec`,
 * message `spec is immutable`, profiler.md §4); metadata stays updatable (reference "v1beta2
 * hardware SKU": "Run specs remain immutable; unchanged specs remain metadata-updatable").
 * Printer columns: Run Phase, Completed, Candidates, Age (upstream); Candidate Valid, Rank, Age
 * (the reference's `Valid` condition replaces upstream's `Evaluated`).
 * @module
 */
import { DYNAMO_GROUP } from './constants.js';
import { toStructuralSchema } from './crd.js';
import {
  CANDIDATE_KIND,
  CANDIDATE_PLURAL,
  CANDIDATE_SHORT_NAME,
  CandidateStatusSchema,
  DgdrV1Beta2SpecSchema,
  RUN_KIND,
  RUN_PLURAL,
  RUN_SHORT_NAME,
  RunStatusSchema,
} from './dgdr-v1beta2.js';

const IMMUTABLE_SPEC = { rule: '!has(oldSelf.spec) || self.spec == oldSelf.spec', message: 'spec is immutable' };

/**
 * The v1beta2 request spec as a structural schema, with its CEL rules: `workload.trace` and
 * `workload.static` are mutually exclusive (reference "Replay a recorded trace"). Pure.
 */
export function dgdrV1Beta2SpecStructuralSchema(): Record<string, unknown> {
  const spec = toStructuralSchema(DgdrV1Beta2SpecSchema);
  const properties = spec['properties'] as Record<string, Record<string, unknown>>;
  const workload = properties['workload'];
  if (workload !== undefined) {
    workload['x-kubernetes-validations'] = [{ rule: '!(has(self.trace) && has(self.static))', message: 'workload.trace and workload.static are mutually exclusive; set workload.static to null in the same update to switch to a trace' }];
  }
  return spec;
}

function crd(kind: string, plural: string, shortName: string, description: string, spec: Record<string, unknown>, status: Record<string, unknown>, columns: readonly Record<string, unknown>[]): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${DYNAMO_GROUP}` },
    spec: {
      group: DYNAMO_GROUP,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), shortNames: [shortName], categories: ['dynamo'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1beta2',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: columns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description,
              properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status },
              required: ['spec'],
              'x-kubernetes-validations': [IMMUTABLE_SPEC],
            },
          },
        },
      ],
    },
  };
}

/** The DynamoGraphDeploymentRun CRD. Pure. */
export function dynamoGraphDeploymentRunCrd(): Record<string, unknown> {
  return crd(
    RUN_KIND,
    RUN_PLURAL,
    RUN_SHORT_NAME,
    'DynamoGraphDeploymentRun is one evaluation of a DynamoGraphDeploymentRequest generation; its spec is a frozen copy of the request spec.',
    dgdrV1Beta2SpecStructuralSchema(),
    toStructuralSchema(RunStatusSchema),
    [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Completed', type: 'string', jsonPath: '.status.conditions[?(@.type=="Completed")].status' },
      { name: 'Candidates', type: 'integer', jsonPath: '.status.progress.candidates.published' },
      { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Completed")].reason', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  );
}

/** The DynamoGraphDeploymentCandidate CRD; its spec is opaque (preserve-unknown-fields). Pure. */
export function dynamoGraphDeploymentCandidateCrd(): Record<string, unknown> {
  return crd(
    CANDIDATE_KIND,
    CANDIDATE_PLURAL,
    CANDIDATE_SHORT_NAME,
    'DynamoGraphDeploymentCandidate is one recommended DynamoGraphDeployment spec of a Run. Use its spec only when the Valid condition is True.',
    { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    toStructuralSchema(CandidateStatusSchema),
    [
      { name: 'Valid', type: 'string', jsonPath: '.status.conditions[?(@.type=="Valid")].status' },
      { name: 'Rank', type: 'integer', jsonPath: '.status.rank' },
      { name: 'Backend', type: 'string', jsonPath: '.spec.backendFramework', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  );
}

/** The v1beta2-only CRDs, by file name under infra/chart/files/crds/ (gated by `dgdrV1Beta2.enabled`). */
export function dgdrV1Beta2Crds(): Readonly<Record<string, Record<string, unknown>>> {
  return {
    [`${DYNAMO_GROUP}_${RUN_PLURAL}.yaml`]: dynamoGraphDeploymentRunCrd(),
    [`${DYNAMO_GROUP}_${CANDIDATE_PLURAL}.yaml`]: dynamoGraphDeploymentCandidateCrd(),
  };
}
