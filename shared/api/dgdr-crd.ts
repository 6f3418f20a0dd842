/**
 * The DynamoGraphDeploymentRequest CRD, generated from the zod schemas of ./dgdr.ts.
 * Served and stored version `v1beta1`, and `v1alpha1` and (under the `dgdrV1Beta2.enabled` gate)
 * `v1beta2` served through the admission function's conversion webhook (`/convert`, converters
 * shared/api/dgdr-v1alpha1.ts and ./dgdr-v1beta2-conversion.ts, with the read-only conversion
 * views `spec.v1beta2`/`status.v1beta2` and `spec.v1beta1`/`status.v1beta1`); short name `dgdr`, status
 * subresource, printer columns Model, Backend, Phase, Profiling, (Reason, Message at -o wide), DGD, Age.
 *
 * Source: upstream deploy/operator/api/v1beta1/dynamographdeploymentrequest_types.go
 * (`+kubebuilder:resource:shortName=dgdr`, `+kubebuilder:printcolumn`); dgdr-reference "Spec reference".
 * @module
 */
import { ANNOTATION_CRD_VERSION_FEATURE_GATE_PREFIX, toStructuralSchema, webhookConvertedCrd } from './crd.js';
import { DGDR_KIND, DGDR_PLURAL, DGDR_PRINTER_COLUMNS, DGDR_SHORT_NAME, DgdrSpecSchema, DgdrStatusSchema } from './dgdr.js';
import { DGDR_VIEW_V1BETA1, DGDR_VIEW_V1BETA2 } from './dgdr-v1beta2-conversion.js';
import { dgdrV1Beta2SpecStructuralSchema } from './dgdr-v1beta2-crd.js';
import { DgdrV1Beta2StatusSchema } from './dgdr-v1beta2.js';

type Schema = Record<string, unknown>;

/** A read-only conversion view as a schema property: any object, kept whole (reference "Conversion views"). */
function viewProperty(nativeVersion: string): Schema {
  return {
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    description: `Read-only conversion view of a request created through nvidia.com/${nativeVersion}: its ${nativeVersion} fields, filled in by the API server. Do not set or edit it; create and modify the request through nvidia.com/${nativeVersion}. Writing it back unchanged is allowed.`,
  };
}

/**
 * Adds the conversion view `view` to a spec or status schema. A spec's required native field
 * (`model`) becomes required unless the view is present, by a CEL rule reporting the field's
 * path, since a view holds no native field. Mutates `schema` (freshly built). Source: reference
 * "Conversion views"; upstream's v1beta1/v1beta2 envelopes (upstream-notes/dgdr.md §5).
 */
function withView(schema: Schema, view: string, nativeVersion: string): Schema {
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  schema['properties'] = { ...properties, [view]: viewProperty(nativeVersion) };
  const required = (schema['required'] as string[] | undefined) ?? [];
  if (required.includes('model')) {
    const rest = required.filter((field) => field !== 'model');
    if (rest.length === 0) delete schema['required'];
    else schema['required'] = rest;
    const rules = (schema['x-kubernetes-validations'] as Schema[] | undefined) ?? [];
    schema['x-kubernetes-validations'] = [...rules, { rule: `has(self.model) || has(self.${view})`, message: 'must be specified', fieldPath: '.model', reason: 'FieldValueRequired' }];
  }
  return schema;
}

/** The DGDR CRD as a plain object (apiextensions.k8s.io/v1). Pure. */
export function dynamoGraphDeploymentRequestCrd(): Record<string, unknown> {
  const spec = toStructuralSchema(DgdrSpecSchema);
  // `overrides.dgd` is an embedded resource: the API server checks it names apiVersion and kind
  // (upstream `+kubebuilder:validation:EmbeddedResource`); override processing checks the rest.
  const overrides = (spec['properties'] as Record<string, Record<string, unknown>>)['overrides'];
  const dgd = (overrides?.['properties'] as Record<string, Record<string, unknown>> | undefined)?.['dgd'];
  if (dgd !== undefined) {
    dgd['x-kubernetes-embedded-resource'] = true;
    dgd['x-kubernetes-preserve-unknown-fields'] = true;
  }
  withView(spec, DGDR_VIEW_V1BETA2, 'v1beta2');
  const crd = webhookConvertedCrd({ kind: DGDR_KIND, plural: DGDR_PLURAL, shortName: DGDR_SHORT_NAME }, [
        {
          name: 'v1beta1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: DGDR_PRINTER_COLUMNS,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'DynamoGraphDeploymentRequest describes a model to deploy and its performance targets; the control plane profiles it and generates (by default applies) the DynamoGraphDeployment.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: spec,
                status: withView(toStructuralSchema(DgdrStatusSchema), DGDR_VIEW_V1BETA2, 'v1beta2'),
              },
              required: ['spec'],
            },
          },
        },
        {
          // The legacy shape (profilingConfig blob, deploymentOverrides); kept as authored and
          // checked by the v1beta1 rules after conversion (upstream serves it the same way).
          name: 'v1alpha1',
          served: true,
          storage: false,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Model', type: 'string', jsonPath: '.spec.model' },
            { name: 'Backend', type: 'string', jsonPath: '.spec.backend' },
            { name: 'State', type: 'string', jsonPath: '.status.state' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'DynamoGraphDeploymentRequest (legacy v1alpha1 shape) describes a model to deploy and its performance targets; it is converted to and stored as v1beta1.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: withView({ type: 'object', required: ['model'], properties: { model: { type: 'string', minLength: 1, description: DgdrSpecSchema.shape.model.description } }, 'x-kubernetes-preserve-unknown-fields': true }, DGDR_VIEW_V1BETA2, 'v1beta2'),
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
              required: ['spec'],
            },
          },
        },
        {
          // The experimental v1beta2 request (reference "v1beta2 hardware SKU", "v1beta2 DGD
          // Overrides"): served only with dgdrV1Beta2.enabled (the chart strips it otherwise, as
          // upstream's crd-apply does with its DGDRV1Beta2 gate off, upstream-notes/dgdr.md §5).
          name: 'v1beta2',
          served: true,
          storage: false,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Model', type: 'string', jsonPath: '.spec.model.name' },
            { name: 'Run', type: 'string', jsonPath: '.status.activeRunRef.name' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'DynamoGraphDeploymentRequest (experimental v1beta2) describes a model and its workload; the control plane evaluates candidate deployments with AISimulate in one DynamoGraphDeploymentRun per spec generation.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: withView(dgdrV1Beta2SpecStructuralSchema(), DGDR_VIEW_V1BETA1, 'v1beta1'),
                status: withView({ ...toStructuralSchema(DgdrV1Beta2StatusSchema), 'x-kubernetes-preserve-unknown-fields': true }, DGDR_VIEW_V1BETA1, 'v1beta1'),
              },
              required: ['spec'],
            },
          },
        },
  ]);
  const metadata = crd['metadata'] as { annotations: Record<string, string> };
  metadata.annotations[`${ANNOTATION_CRD_VERSION_FEATURE_GATE_PREFIX}v1beta2`] = 'dgdrV1Beta2';
  return crd;
}
