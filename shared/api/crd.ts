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
import { DGD_KIND, DGD_PLURAL, DGD_SHORT_NAME, DYNAMO_GROUP } from './constants.js';
import { DgdSpecSchema, DgdStatusSchema } from './dgd.js';
import { dgdrV1Beta2Crds } from './dgdr-v1beta2-crd.js';

type JsonSchema = Record<string, unknown>;

const DROPPED_KEYWORDS = new Set(['$schema', 'propertyNames', 'id', '$id']);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Converts one zod schema to a structural OpenAPI v3 schema. Pure. */
export function toStructuralSchema(schema: z.ZodType): JsonSchema {
  return structural(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema);
}

function structural(node: JsonSchema): JsonSchema {
  const variants = (node['anyOf'] ?? node['oneOf']) as JsonSchema[] | undefined;
  if (variants !== undefined) {
    const nonNull = variants.filter((v) => v['type'] !== 'null');
    const types = nonNull.map((v) => v['type']);
    if (nonNull.length === 1 && nonNull[0] !== undefined) {
      return { ...structural(nonNull[0]), ...(nonNull.length < variants.length ? { nullable: true } : {}) };
    }
    if (types.every((t) => t === 'string' || t === 'number' || t === 'integer')) return { 'x-kubernetes-int-or-string': true };
    return { 'x-kubernetes-preserve-unknown-fields': true };
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
      names: { kind: DGD_KIND, listKind: `${DGD_KIND}List`, plural: DGD_PLURAL, singular: DGD_KIND.toLowerCase(), shortNames: [DGD_SHORT_NAME] },
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
            { name: 'State', type: 'string', jsonPath: '.status.state', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'DynamoGraphDeployment is the canonical description of a running Dynamo inference graph.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
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

/** Every CRD this project defines, by file name under infra/crds/. */
export function ownCrds(): Readonly<Record<string, Record<string, unknown>>> {
  return {
    [`${DYNAMO_GROUP}_${DGD_PLURAL}.yaml`]: dynamoGraphDeploymentCrd(),
    ...dgdrV1Beta2Crds(),
  };
}
