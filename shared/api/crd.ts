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
import { CRD_CATEGORY, DGD_KIND, DGD_PLURAL, DGD_SHORT_NAME, DYNAMO_GROUP } from './constants.js';
import { DgdSpecSchema, DgdStatusSchema } from './dgd.js';
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
    } else if (key === 'const') {
      out['enum'] = [value];
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

/** The DynamoGraphDeployment CRD (served and stored version v1beta1). Pure. */
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
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${DGD_PLURAL}.${DYNAMO_GROUP}` },
    spec: {
      group: DYNAMO_GROUP,
      names: { kind: DGD_KIND, listKind: `${DGD_KIND}List`, plural: DGD_PLURAL, singular: DGD_KIND.toLowerCase(), shortNames: [DGD_SHORT_NAME], categories: [CRD_CATEGORY] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Backend', type: 'string', jsonPath: '.spec.backendFramework' },
            { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
            { name: 'State', type: 'string', jsonPath: '.status.state', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'DynamoGraphDeployment is the canonical description of a running Dynamo inference graph.',
              properties: {
                ...TYPE_META_PROPERTIES,
                spec: spec,
                status: toStructuralSchema(DgdStatusSchema),
              },
              required: ['spec'],
            },
          },
        },
      ],
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
];

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
    files[`${spec.group}_${spec.names.plural}.yaml`] = crd;
  }
  return files;
}
