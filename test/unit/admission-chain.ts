/**
 * The admission chain as the API server runs it, without a cluster, for table tests:
 * 1. our generated CRD schema (infra/chart/files/crds, v1beta1 openAPIV3Schema) with its structural defaults,
 *    through ajv (x-kubernetes-* keywords stripped; the CEL rules are mirrored by the zod schema
 *    the webhook parses with, and by the restart rule in validateRestart);
 * 2. the mutating webhook's AdmissionReview answer, its JSON Patch applied;
 * 3. the schema again (the API server validates the mutated object);
 * 4. the validating webhook's AdmissionReview answer.
 * v1alpha1 objects skip the schema steps: our CRD serves only v1beta1, and the webhook converts.
 * Also the fixture builders the tables use.
 * @module
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import jsonpatch from 'fast-json-patch';
import { parse } from 'yaml';
import { answerAdmissionReview, type AdmissionResponse, type WebhookRoute } from '../../functions/admission/index.js';

export type Obj = Record<string, unknown>;

const CRD_FILE = resolve(import.meta.dirname, '../../infra/chart/files/crds/nvidia.com_dynamographdeployments.yaml');

/** Rewrites a CRD structural schema into plain JSON Schema ajv understands. */
function toAjvSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toAjvSchema);
  if (typeof node !== 'object' || node === null) return node;
  const source = node as Obj;
  if (source['x-kubernetes-int-or-string'] === true) return { anyOf: [{ type: 'integer' }, { type: 'string' }] };
  const out: Obj = {};
  for (const [key, value] of Object.entries(source)) {
    if (key.startsWith('x-kubernetes-')) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Obj).map(([k, v]) => [k, toAjvSchema(v)])) : toAjvSchema(value);
  }
  return out;
}

let validator: ValidateFunction | undefined;

/** The v1beta1 schema of our generated CRD, compiled once; applies `default`s in place like the API server. */
export function crdSchemaValidator(): ValidateFunction {
  if (validator !== undefined) return validator;
  const crd = parse(readFileSync(CRD_FILE, 'utf8')) as { spec: { versions: { name: string; schema: { openAPIV3Schema: object } }[] } };
  const version = crd.spec.versions.find((v) => v.name === 'v1beta1');
  if (version === undefined) throw new Error(`no v1beta1 version in ${CRD_FILE}`);
  validator = new Ajv({ strict: false, allErrors: true, useDefaults: true, verbose: true, validateFormats: false }).compile(toAjvSchema(version.schema.openAPIV3Schema) as object);
  return validator;
}

/** `/spec/components/1/replicas` -> `spec.components[1].replicas`. */
function ajvPath(error: ErrorObject): string {
  const segments = error.instancePath.split('/').slice(1);
  if (error.keyword === 'required') segments.push(String((error.params as { missingProperty: string }).missingProperty));
  return segments.reduce((out, s) => (/^\d+$/.test(s) ? `${out}[${s}]` : out === '' ? s : `${out}.${s}`), '');
}

/** Schema errors as the API server prints them, roughly: `<path>: Invalid value: ...: <ajv message>`. */
function schemaIssues(object: Obj): string[] {
  const validate = crdSchemaValidator();
  if (validate(object)) return [];
  return (validate.errors ?? []).map((e) => (e.keyword === 'required' ? `${ajvPath(e)}: Required value` : `${ajvPath(e)}: Invalid value: ${JSON.stringify(e.data)}: ${e.message ?? ''}`));
}

export interface ChainInput {
  readonly object: Obj;
  /** The stored object (UPDATE). It is defaulted the same way, as it was when it was created. */
  readonly old?: Obj;
  readonly lpxEnabled?: boolean;
}

export interface ChainResult {
  /** Where the request stopped: the CRD schema, or the validating webhook (allowed or denied). */
  readonly stage: 'schema' | 'webhook';
  readonly allowed: boolean;
  /** `<field>: <message>` of every cause (the webhook), or the schema errors. */
  readonly issues: readonly string[];
  readonly warnings: readonly string[];
  /** The mutating webhook's JSON Patch operations. */
  readonly patch: readonly jsonpatch.Operation[];
  /** The object after defaulting. */
  readonly object: Obj;
  /** The validating response, as sent. */
  readonly response: AdmissionResponse | undefined;
}

function review(route: WebhookRoute, operation: 'CREATE' | 'UPDATE', object: Obj, old: Obj | undefined, lpxEnabled: boolean): AdmissionResponse {
  const [group, version] = String(object['apiVersion']).split('/');
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${route.kind}`,
      kind: { group, version, kind: 'DynamoGraphDeployment' },
      resource: { group, version, resource: 'dynamographdeployments' },
      operation,
      namespace: 'ns',
      name: (object['metadata'] as Obj | undefined)?.['name'],
      object,
      ...(old === undefined ? {} : { oldObject: old }),
    },
  });
  const answer = answerAdmissionReview(route, body, { lpxEnabled });
  if (answer.status !== 200) throw new Error(`webhook refused the review: ${answer.message}`);
  if (answer.review.response.uid !== `uid-${route.kind}`) throw new Error('the response does not echo request.uid');
  return answer.review.response;
}

function mutate(object: Obj, old: Obj | undefined, lpxEnabled: boolean): { object: Obj; patch: jsonpatch.Operation[] } {
  const version = String(object['apiVersion']).split('/')[1] as WebhookRoute['version'];
  const response = review({ kind: 'mutate', version }, old === undefined ? 'CREATE' : 'UPDATE', object, old, lpxEnabled);
  if (!response.allowed) throw new Error(`the mutating webhook denied: ${response.status?.message ?? ''}`);
  const patch = response.patch === undefined ? [] : (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as jsonpatch.Operation[]);
  return { object: jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument, patch };
}

/** Runs a CREATE (no `old`) or UPDATE through the chain. */
export function admitThroughChain(input: ChainInput): ChainResult {
  const lpxEnabled = input.lpxEnabled ?? false;
  const isBeta = input.object['apiVersion'] === 'nvidia.com/v1beta1';
  const object = structuredClone(input.object);
  let old: Obj | undefined;
  if (input.old !== undefined) {
    old = structuredClone(input.old);
    if (isBeta && schemaIssues(old).length > 0) throw new Error(`the stored object does not match the CRD schema: ${schemaIssues(old).join('; ')}`);
    old = mutate(old, undefined, lpxEnabled).object;
  }
  const refused = (issues: string[]): ChainResult => ({ stage: 'schema', allowed: false, issues, warnings: [], patch: [], object, response: undefined });
  if (isBeta) {
    const issues = schemaIssues(object);
    if (issues.length > 0) return refused(issues);
  }
  // A client updating a DGD sends back the controller-owned annotations it read (kubectl apply
  // keeps annotations its configuration does not name): carry the stored ones over unless the
  // row sets them itself. Rows about removing them call validateDgd directly.
  if (old !== undefined) {
    const storedAnnotations = ((old['metadata'] as Obj | undefined)?.['annotations'] ?? {}) as Record<string, string>;
    const carried = Object.fromEntries(CONTROLLER_OWNED_ANNOTATIONS.filter((key) => key in storedAnnotations).map((key) => [key, storedAnnotations[key]]));
    if (Object.keys(carried).length > 0) {
      const metadata = (object['metadata'] ?? {}) as Obj;
      object['metadata'] = { ...metadata, annotations: { ...carried, ...((metadata['annotations'] ?? {}) as Obj) } };
    }
  }
  const mutated = mutate(object, old, lpxEnabled);
  if (isBeta) {
    const issues = schemaIssues(mutated.object);
    if (issues.length > 0) return refused(issues);
  }
  const response = review({ kind: 'validate', version: isBeta ? 'v1beta1' : 'v1alpha1' }, old === undefined ? 'CREATE' : 'UPDATE', mutated.object, old, lpxEnabled);
  return {
    stage: 'webhook',
    allowed: response.allowed,
    issues: (response.status?.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`),
    warnings: response.warnings ?? [],
    patch: mutated.patch,
    object: mutated.object,
    response,
  };
}

// ---- Fixture builders -------------------------------------------------------------------

/** The annotations admission stamps on CREATE (upstream DGDDefaulter). */
export const ORIGIN = 'nvidia.com/dynamo-operator-origin-version';
export const PROVIDER = 'nvidia.com/workload-provider';
const CONTROLLER_OWNED_ANNOTATIONS = [ORIGIN, PROVIDER] as const;
/** The JSON Patch of the CREATE stamp on an object without annotations: origin = the default OPERATOR_VERSION, provider grove. */
export const STAMP_PATCH = [{ op: 'add', path: '/metadata/annotations', value: { [PROVIDER]: 'grove', [ORIGIN]: '1.6.1' } }] as const;

export const GROVE = 'grove.io/v1alpha1';
export const STRATEGY = 'nvidia.com/grove-update-strategy';

/** A pod template with one `main` container. */
export function aPodTemplate(image: string, extra: Obj = {}): Obj {
  return { spec: { containers: [{ name: 'main', image }], ...extra } };
}

/** An ordinary component: name, type and a main container; `fields` override or add. */
export function aComponent(name: string, type: string, fields: Obj = {}): Obj {
  return { name, type, podTemplate: aPodTemplate(`nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0`), ...fields };
}

/** A providerOverride with the Grove apiVersion (target left to defaulting). */
export function anOverride(value: Obj, extra: Obj = {}): Obj {
  return { apiVersion: GROVE, value, ...extra };
}

/** An LPX component with agent and conductor roles (or `agentOnly` for a shared draft). */
export function anLpxComponent(name: string, fields: Obj = {}, options: { agentOnly?: boolean } = {}): Obj {
  const roles: Obj[] = [{ name: 'agent', podTemplate: aPodTemplate('nvcr.io/nvidia/ai-dynamo/lpx-agent:1.6.0') }];
  if (options.agentOnly !== true) roles.push({ name: 'conductor', podTemplate: aPodTemplate('nvcr.io/nvidia/ai-dynamo/lpx-conductor:1.6.0') });
  return { name, type: 'lpx', lpx: { buildId: `build-${name}` }, roles, ...fields };
}

export interface DgdFixture {
  readonly name?: string;
  readonly annotations?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly components?: readonly Obj[];
  /** Extra spec fields (replace the defaults). */
  readonly spec?: Obj;
  readonly metadata?: Obj;
}

/** The reference's minimal example shape: frontend + worker (replicas left to defaulting). */
export function aDgd(fixture: DgdFixture = {}): Obj {
  const metadata: Obj = { name: fixture.name ?? 'my-graph', namespace: 'ns', ...(fixture.metadata ?? {}) };
  if (fixture.annotations !== undefined) metadata['annotations'] = fixture.annotations;
  if (fixture.labels !== undefined) metadata['labels'] = fixture.labels;
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata,
    spec: {
      backendFramework: 'vllm',
      components: fixture.components ?? [aComponent('frontend', 'frontend'), aComponent('worker', 'worker')],
      ...(fixture.spec ?? {}),
    },
  };
}

/** A graph with LPX components (restart Parallel, as LPX graphs require). */
export function anLpxDgd(components: readonly Obj[], fixture: DgdFixture = {}): Obj {
  return aDgd({ ...fixture, components, spec: { restart: { strategy: { type: 'Parallel' } }, ...(fixture.spec ?? {}) } });
}

/** A v1alpha1 DGD with `spec.services`. */
export function anAlphaDgd(services: Record<string, Obj>, metadata: Obj = {}): Obj {
  return { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: { name: 'alpha-graph', namespace: 'ns', ...metadata }, spec: { backendFramework: 'vllm', services } };
}

/** An alpha service with a main container image. */
export function anAlphaService(componentType: string, fields: Obj = {}): Obj {
  return { componentType, extraPodSpec: { mainContainer: { image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' } }, ...fields };
}

/** Deep-merges `patch` into a copy of `base` (objects merge, everything else replaces). */
export function edit(base: Obj, patch: Obj): Obj {
  const out = structuredClone(base);
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] = typeof value === 'object' && value !== null && !Array.isArray(value) && typeof current === 'object' && current !== null && !Array.isArray(current) ? edit(current as Obj, value as Obj) : structuredClone(value);
  }
  return out;
}
