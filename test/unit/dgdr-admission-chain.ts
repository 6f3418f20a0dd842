/**
 * The DGDR admission chain as the API server runs it, without a cluster: our generated DGDR CRD
 * schema (infra/chart/files/crds/nvidia.com_dynamographdeploymentrequests.yaml, through ajv with the
 * x-kubernetes-* keywords stripped), the mutating webhook's JSON Patch, the schema again, then the
 * validating webhook. Also the fixture builder the table uses.
 * @module
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import jsonpatch from 'fast-json-patch';
import { parse } from 'yaml';
import { answerAdmissionReview, type AdmissionResponse, type WebhookRoute } from '../../functions/admission/index.js';
import type { DgdrAdmissionConfig } from '../../shared/domain/index.js';

export type Obj = Record<string, unknown>;

const CRD_FILE = resolve(import.meta.dirname, '../../infra/chart/files/crds/nvidia.com_dynamographdeploymentrequests.yaml');

function toAjvSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toAjvSchema);
  if (typeof node !== 'object' || node === null) return node;
  const out: Obj = {};
  for (const [key, value] of Object.entries(node as Obj)) {
    if (key.startsWith('x-kubernetes-')) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Obj).map(([k, v]) => [k, toAjvSchema(v)])) : toAjvSchema(value);
  }
  return out;
}

let validator: ValidateFunction | undefined;

function schemaIssues(object: Obj): string[] {
  if (validator === undefined) {
    const crd = parse(readFileSync(CRD_FILE, 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: object } }[] } };
    const version = crd.spec.versions.find((v) => v.name === 'v1beta1');
    if (version === undefined) throw new Error(`no v1beta1 version in ${CRD_FILE}`);
    validator = new Ajv({ strict: false, allErrors: true, useDefaults: true }).compile(toAjvSchema(version.schema.openAPIV3Schema) as object);
  }
  if (validator(object)) return [];
  return (validator.errors ?? []).map((e) => `${e.instancePath}: ${e.message ?? ''}`);
}

const MUTATE: WebhookRoute = { kind: 'mutate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' };
const VALIDATE: WebhookRoute = { kind: 'validate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' };

function review(route: WebhookRoute, operation: 'CREATE' | 'UPDATE', object: Obj, old: Obj | undefined, dgdr: DgdrAdmissionConfig | undefined): AdmissionResponse {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${route.kind}`,
      kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeploymentRequest' },
      resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeploymentrequests' },
      operation,
      namespace: 'ns',
      name: (object['metadata'] as Obj | undefined)?.['name'],
      object,
      ...(old === undefined ? {} : { oldObject: old }),
    },
  });
  const answer = answerAdmissionReview(route, body, { lpxEnabled: false, ...(dgdr === undefined ? {} : { dgdr }) });
  if (answer.status !== 200) throw new Error(`webhook refused the review: ${answer.message}`);
  return answer.review.response;
}

export interface DgdrChainResult {
  readonly stage: 'schema' | 'webhook';
  readonly allowed: boolean;
  /** `<field>: <message>` of every cause, or the schema errors. */
  readonly issues: readonly string[];
  readonly warnings: readonly string[];
  readonly patch: readonly jsonpatch.Operation[];
  readonly object: Obj;
  readonly message: string | undefined;
}

/** Runs a CREATE (no `old`) or UPDATE through schema -> mutate -> schema -> validate. `old` is stored as given (it was admitted earlier). */
export function admitDgdrThroughChain(input: { readonly object: Obj; readonly old?: Obj; readonly config?: DgdrAdmissionConfig }): DgdrChainResult {
  const object = structuredClone(input.object);
  const refused = (issues: string[]): DgdrChainResult => ({ stage: 'schema', allowed: false, issues, warnings: [], patch: [], object, message: undefined });
  const before = schemaIssues(object);
  if (before.length > 0) return refused(before);
  const operation = input.old === undefined ? 'CREATE' : 'UPDATE';
  const mutation = review(MUTATE, operation, object, input.old, input.config);
  if (!mutation.allowed) throw new Error(`the mutating webhook denied: ${mutation.status?.message ?? ''}`);
  const patch = mutation.patch === undefined ? [] : (JSON.parse(Buffer.from(mutation.patch, 'base64').toString('utf8')) as jsonpatch.Operation[]);
  const mutated = jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument;
  const after = schemaIssues(mutated);
  if (after.length > 0) return refused(after);
  const response = review(VALIDATE, operation, mutated, input.old, input.config);
  return {
    stage: 'webhook',
    allowed: response.allowed,
    issues: (response.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`),
    warnings: response.warnings ?? [],
    patch,
    object: mutated,
    message: response.status?.message,
  };
}

/** A v1beta1 DGDR named `my-model` in `ns`; `spec` fields override the minimal `{ model }`. */
export function aDgdr(spec: Obj = {}, extra: { status?: Obj; metadata?: Obj } = {}): Obj {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'my-model', namespace: 'ns', ...(extra.metadata ?? {}) },
    spec: { model: 'Qwen/Qwen3-0.6B', ...spec },
    ...(extra.status === undefined ? {} : { status: extra.status }),
  };
}

/** A stored (already defaulted) DGDR in `phase`, for UPDATE rows. */
export function aStoredDgdr(phase: string, spec: Obj = {}): Obj {
  return aDgdr(
    { image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'auto', searchStrategy: 'rapid', autoApply: true, workload: { isl: 4000, osl: 1000 }, sla: { ttft: 2000, itl: 30 }, ...spec },
    { status: { phase } },
  );
}
