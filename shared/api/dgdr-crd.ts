/**
 * The DynamoGraphDeploymentRequest CRD, generated from the zod schemas of ./dgdr.ts.
 * Served and stored version `v1beta1`, and `v1alpha1` served through the admission function's
 * conversion webhook (`/convert`, converter shared/api/dgdr-v1alpha1.ts); short name `dgdr`, status
 * subresource, printer columns Model, Backend, Phase, Profiling, (Reason, Message at -o wide), DGD, Age.
 *
 * Source: upstream deploy/operator/api/v1beta1/dynamographdeploymentrequest_types.go
 * (`+kubebuilder:resource:shortName=dgdr`, `+kubebuilder:printcolumn`); dgdr-reference "Spec reference".
 * @module
 */
import { toStructuralSchema, webhookConvertedCrd } from './crd.js';
import { DGDR_KIND, DGDR_PLURAL, DGDR_PRINTER_COLUMNS, DGDR_SHORT_NAME, DgdrSpecSchema, DgdrStatusSchema } from './dgdr.js';

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
  return webhookConvertedCrd({ kind: DGDR_KIND, plural: DGDR_PLURAL, shortName: DGDR_SHORT_NAME }, [
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
                status: toStructuralSchema(DgdrStatusSchema),
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
                spec: { type: 'object', required: ['model'], properties: { model: { type: 'string', minLength: 1, description: DgdrSpecSchema.shape.model.description } }, 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
              required: ['spec'],
            },
          },
        },
  ]);
}
