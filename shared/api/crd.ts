/**
 * CustomResourceDefinitions for our own kinds, generated from the zod schemas so the TS type,
 * the structural schema and the checks cannot drift apart.
 *
 * zod's JSON Schema is turned into a Kubernetes structural schema: loose objects and
 * preserved subtrees become `x-kubernetes-preserve-unknown-fields`, string-or-number unions
 * `x-kubernetes-int-or-string`, nullable unions `nullable`, and JSON-Schema-only keywords are
 * dropped. Source: Kubernetes "Specifying a structural schema"; upstream-notes/dgd.md §2
 * (short name `dgd`, status subresource, printer columns Ready/Backend/Age).
 * @module
 */
import { z } from 'zod';
import { CRD_CATEGORY, DGD_KIND, DGD_PLURAL, DGD_SHORT_NAME, DGDSA_KIND, DGDSA_PLURAL, DGDSA_SHORT_NAME, DYNAMO_GROUP } from './constants.js';
import { DgdSpecSchema, DgdStatusSchema } from './dgd.js';
import { dynamoGraphDeploymentCandidateCrd, dynamoGraphDeploymentRunCrd } from './dgdr-v1beta2-crd.js';
import { lpxGraphDeploymentCrd } from './lpx-crd.js';
import { DgdV1Alpha1Schema } from './dgd-v1alpha1.js';
import { DgdsaSpecSchema, DgdsaStatusSchema } from './dgdsa.js';
import { dynamoGraphDeploymentRequestCrd } from './dgdr-crd.js';
import { crdDescriptions, type DescriptionRegistry } from './descriptions.js';

type JsonSchema = Record<string, unknown>;

const DROPPED_KEYWORDS = new Set(['$schema', 'propertyNames', 'id', '$id']);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Converts one zod schema to a structural OpenAPI v3 schema. Field descriptions come from
 * `descriptions` (default {@link crdDescriptions}) on top of the schemas' own `.meta()`.
 * Pure.
 */
export function toStructuralSchema(schema: z.ZodType, descriptions: DescriptionRegistry = crdDescriptions()): JsonSchema {
  const metadata = withGlobalMetadata(descriptions);
  return structural(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12', metadata }) as JsonSchema);
}

/** A registry view answering a schema's `.meta()` (the global registry) merged with its description. */
function withGlobalMetadata(descriptions: DescriptionRegistry): DescriptionRegistry {
  const view = {
    get: (schema: z.core.$ZodType) => {
      const merged = { ...(z.globalRegistry.get(schema) ?? {}), ...(descriptions.get(schema) ?? {}) };
      return Object.keys(merged).length === 0 ? undefined : merged;
    },
  };
  // z.toJSONSchema only calls get() on its metadata registry.
  return view as unknown as DescriptionRegistry;
}

function structural(node: JsonSchema): JsonSchema {
  const variants = (node['anyOf'] ?? node['oneOf']) as JsonSchema[] | undefined;
  if (variants !== undefined) {
    const nonNull = variants.filter((v) => v['type'] !== 'null');
    const types = nonNull.map((v) => v['type']);
    // A union's description sits on the union node (`.nullish()`, int-or-string), not its variants.
    const described = typeof node['description'] === 'string' ? { description: node['description'] } : {};
    if (nonNull.length === 1 && nonNull[0] !== undefined) {
      return { ...structural(nonNull[0]), ...described, ...(nonNull.length < variants.length ? { nullable: true } : {}) };
    }
    if (types.every((t) => t === 'string' || t === 'number' || t === 'integer')) return { ...described, 'x-kubernetes-int-or-string': true };
    return { ...described, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (key === 'maximum' && value === MAX_SAFE) continue;
    if (key === 'minimum' && value === -MAX_SAFE) continue;
    if (key === 'properties') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, structural(v)]));
    } else if (key === 'items') {
      out[key] = structural(value as JsonSchema);
    } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
      // JSON Schema 2020-12 gives the bound; OpenAPI v3.0 (CRDs) a boolean beside minimum/maximum.
      out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
      out[key] = true;
    } else if (key === 'const') {
      out['enum'] = [value];
    } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
      // JSON Schema 2020-12 gives the bound; OpenAPI v3.0 (CRDs) a boolean beside minimum/maximum.
      out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
      out[key] = true;
    } else if (key === 'additionalProperties') {
      const additional = value as JsonSchema | boolean;
      const isAny = additional === true || (typeof additional === 'object' && Object.keys(additional).length === 0);
      if (isAny) out['x-kubernetes-preserve-unknown-fields'] = true;
      else if (additional !== false && node['properties'] === undefined) out[key] = structural(additional as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out['type'])) {
    const types = out['type'] as string[];
    delete out['type'];
    if (types.every((t) => t === 'string' || t === 'number' || t === 'integer')) out['x-kubernetes-int-or-string'] = true;
    else out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  // A preserved subtree keeps its typed properties as documentation and validation of the
  // fields we read; it must still say it is an object.
  if (out['x-kubernetes-preserve-unknown-fields'] === true && out['type'] === undefined && out['x-kubernetes-int-or-string'] === undefined) out['type'] = 'object';
  return out;
}

/**
 * Where the API server sends ConversionReviews for our multi-version kinds: the admission
 * function's `/convert` endpoint behind its Service (infra/chart/templates/admission/), over TLS. `caBundle` is
 * injected by cert-manager from the CRD's `cert-manager.io/inject-ca-from` annotation, as for the
 * webhook configurations; tests and `dev` replace the whole clientConfig with a loopback URL.
 */
export const CONVERSION_WEBHOOK_SERVICE = { namespace: 'dynamo-system', name: 'dynamo-admission', path: '/convert', port: 443 } as const;

const DGD_PRINTER_COLUMNS = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Backend', type: 'string', jsonPath: '.spec.backendFramework' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
  { name: 'State', type: 'string', jsonPath: '.status.state', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

function objectSchema(description: string, spec: JsonSchema, status: JsonSchema, isSpecRequired = true): JsonSchema {
  return {
    type: 'object',
    description,
    properties: { ...TYPE_META_PROPERTIES, spec, status },
    ...(isSpecRequired ? { required: ['spec'] } : {}),
  };
}

/**
 * The DynamoGraphDeployment CRD: `v1beta1` (served, storage) and `v1alpha1` (served), converted
 * by the admission function's ConversionReview webhook (`conversion.strategy: Webhook`,
 * `conversionReviewVersions: [v1]`). Source: upstream-notes/dgd.md §1-§2 (v1beta1 storage,
 * v1alpha1 served and converted through the operator's conversion webhook); issue 8 part 5. Pure.
 */
export function dynamoGraphDeploymentCrd(): Record<string, unknown> {
  const spec = toStructuralSchema(DgdSpecSchema);
  // Only a restart request (`restart.id`) is refused on create: a strategy may be authored up
  // front, and graphs with LPX components must declare `restart.strategy.type: Parallel`
  // (upstream-notes/lpx.md §1.2), which a whole-`restart` ban would make impossible to create.
  spec['x-kubernetes-validations'] = [
    {
      rule: 'oldSelf.hasValue() || !has(self.restart) || !has(self.restart.id)',
      optionalOldSelf: true,
      message: 'spec.restart must be unset on create; set spec.restart.id after creation to request a restart',
    },
  ];
  const alpha = toStructuralSchema(DgdV1Alpha1Schema) as { properties: Record<string, JsonSchema> };
  const description = 'DynamoGraphDeployment is the canonical description of a running Dynamo inference graph.';
  return webhookConvertedCrd({ kind: DGD_KIND, plural: DGD_PLURAL, shortName: DGD_SHORT_NAME }, [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: structuredClone(DGD_PRINTER_COLUMNS),
          schema: { openAPIV3Schema: objectSchema(description, spec, toStructuralSchema(DgdStatusSchema)) },
        },
        {
          name: 'v1alpha1',
          served: true,
          storage: false,
          subresources: { status: {} },
          additionalPrinterColumns: structuredClone(DGD_PRINTER_COLUMNS),
          schema: { openAPIV3Schema: objectSchema(description, alpha.properties['spec'] ?? { type: 'object' }, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) },
        },
  ]);
}

/**
 * The envelope of a namespaced CRD of ours served in several versions through the conversion
 * webhook of the admission function (`/convert`, CA injected by cert-manager): names, the
 * `dynamo` category, scope and `conversion`, around the given versions. Pure.
 */
export function webhookConvertedCrd(
  names: { readonly kind: string; readonly plural: string; readonly shortName: string },
  versions: readonly Record<string, unknown>[],
): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${DYNAMO_GROUP}`, annotations: { 'cert-manager.io/inject-ca-from': `${CONVERSION_WEBHOOK_SERVICE.namespace}/${CONVERSION_WEBHOOK_SERVICE.name}` } },
    spec: {
      group: DYNAMO_GROUP,
      names: { kind: names.kind, listKind: `${names.kind}List`, plural: names.plural, singular: names.kind.toLowerCase(), shortNames: [names.shortName], categories: [CRD_CATEGORY] },
      scope: 'Namespaced',
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { ...CONVERSION_WEBHOOK_SERVICE } } },
      },
      versions,
    },
  };
}

/**
 * The DynamoGraphDeploymentScalingAdapter CRD, as upstream serves it: `v1alpha1` (served) and
 * `v1beta1` (served, storage) with the same schema (so no conversion webhook: the API server
 * only rewrites apiVersion), the status subresource, and the scale subresource an HPA drives
 * (`.spec.replicas`, `.status.replicas`, label selector `.status.selector`); printer columns
 * DGD, SERVICE, REPLICAS, AGE. Source: ../shared/crds/dynamo/nvidia.com_dynamographdeploymentscalingadapters.yaml. Pure.
 */
export function dynamoGraphDeploymentScalingAdapterCrd(): Record<string, unknown> {
  const description =
    'DynamoGraphDeploymentScalingAdapter provides a scaling interface for one component of a DynamoGraphDeployment. It implements the Kubernetes scale subresource, so HPA, KEDA and custom autoscalers can drive the component\'s replicas; the adapter is the source of truth for them.';
  // Upstream's root schema does not require `spec` (its fields are required inside it).
  const schema = objectSchema(description, toStructuralSchema(DgdsaSpecSchema), toStructuralSchema(DgdsaStatusSchema), false);
  const version = (name: string, storage: boolean): Record<string, unknown> => ({
    name,
    served: true,
    storage,
    subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
    additionalPrinterColumns: [
      { name: 'DGD', type: 'string', description: 'DynamoGraphDeployment name', jsonPath: '.spec.dgdRef.name' },
      { name: 'SERVICE', type: 'string', description: 'Component name', jsonPath: '.spec.dgdRef.serviceName' },
      { name: 'REPLICAS', type: 'integer', description: 'Current replicas', jsonPath: '.status.replicas' },
      { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    schema: { openAPIV3Schema: structuredClone(schema) },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${DGDSA_PLURAL}.${DYNAMO_GROUP}` },
    spec: {
      group: DYNAMO_GROUP,
      names: { kind: DGDSA_KIND, listKind: `${DGDSA_KIND}List`, plural: DGDSA_PLURAL, singular: DGDSA_KIND.toLowerCase(), shortNames: [DGDSA_SHORT_NAME], categories: [CRD_CATEGORY] },
      scope: 'Namespaced',
      versions: [version('v1alpha1', false), version('v1beta1', true)],
    },
  };
}

/**
 * A feature gate of the Helm chart that a CRD is installed under (values `lpx.enabled`,
 * `dgdrV1Beta2.enabled`); written as the annotation {@link ANNOTATION_CRD_FEATURE_GATE}, which
 * `infra/chart/templates/crds.yaml` reads.
 */
export type CrdFeatureGate = 'lpx' | 'dgdrV1Beta2';

/** The annotation naming the chart feature gate of a gated CRD. */
export const ANNOTATION_CRD_FEATURE_GATE = 'dynamo-fn.nvidia.com/feature-gate';
/**
 * The annotation prefix naming the chart feature gate of one served version of a CRD:
 * `dynamo-fn.nvidia.com/feature-gate.<version>: <gate>`; `infra/chart/templates/crds.yaml` drops
 * that version unless the gate is on (DGDR v1beta2 under `dgdrV1Beta2`, upstream-notes/dgdr.md §5).
 */
export const ANNOTATION_CRD_VERSION_FEATURE_GATE_PREFIX = 'dynamo-fn.nvidia.com/feature-gate.';

/** One of our CRDs: how to build it, and the chart feature gate it is installed under, if any. */
export interface OwnCrd {
  readonly build: () => Record<string, unknown>;
  readonly featureGate?: CrdFeatureGate;
}

/**
 * Every CRD this project defines. A new kind is one line here (its builder sets
 * `names.categories: [CRD_CATEGORY]` and printer columns; its field descriptions go in
 * ./descriptions.ts); `dynamo-fn crds` writes it and the Helm chart installs it.
 */
export const OWN_CRDS: readonly OwnCrd[] = [
  { build: dynamoGraphDeploymentCrd },
  { build: dynamoGraphDeploymentScalingAdapterCrd },
  { build: dynamoGraphDeploymentRequestCrd },
  { build: dynamoGraphDeploymentRunCrd, featureGate: 'dgdrV1Beta2' },
  { build: dynamoGraphDeploymentCandidateCrd, featureGate: 'dgdrV1Beta2' },
  { build: lpxGraphDeploymentCrd, featureGate: 'lpx' },
];

/**
 * Fills in the standard descriptions of a CRD's top-level fields where its builder left them
 * out: apiVersion and kind as Kubernetes describes them, spec and status as the desired and
 * observed state of the kind. Mutates `crd` (a freshly built object).
 */
function describeTopLevel(crd: Record<string, unknown>): void {
  const spec = crd['spec'] as { names: { kind: string }; versions: { schema?: { openAPIV3Schema?: { properties?: Record<string, { description?: string }> } } }[] };
  const standard: Record<string, string> = {
    apiVersion: TYPE_META_PROPERTIES.apiVersion.description,
    kind: TYPE_META_PROPERTIES.kind.description,
    spec: `The desired state of the ${spec.names.kind}.`,
    status: `The observed state of the ${spec.names.kind}, maintained by the control plane.`,
  };
  for (const version of spec.versions) {
    const properties = version.schema?.openAPIV3Schema?.properties ?? {};
    for (const [field, description] of Object.entries(standard)) {
      const property = properties[field];
      if (property !== undefined && property.description === undefined) property.description = description;
    }
  }
}

/** `apiVersion`, `kind` and `metadata` of a CRD's top-level schema, described as Kubernetes does. */
export const TYPE_META_PROPERTIES = {
  apiVersion: { type: 'string', description: 'The versioned schema of this representation of an object (see the Kubernetes API conventions).' },
  kind: { type: 'string', description: 'The REST resource this object represents, in CamelCase (see the Kubernetes API conventions).' },
  metadata: { type: 'object' },
} as const;

/**
 * Every CRD this project defines, by file name (`<group>_<plural>.yaml`) under
 * `infra/chart/files/crds/`, with the feature-gate annotation on gated ones. Pure.
 */
export function ownCrds(crds: readonly OwnCrd[] = OWN_CRDS): Readonly<Record<string, Record<string, unknown>>> {
  const files: Record<string, Record<string, unknown>> = {};
  for (const { build, featureGate } of crds) {
    const crd = build();
    const spec = crd['spec'] as { group: string; names: { plural: string } };
    if (featureGate !== undefined) {
      const metadata = crd['metadata'] as { annotations?: Record<string, string> };
      metadata.annotations = { ...metadata.annotations, [ANNOTATION_CRD_FEATURE_GATE]: featureGate };
    }
    describeTopLevel(crd);
    files[`${spec.group}_${spec.names.plural}.yaml`] = crd;
  }
  return files;
}
