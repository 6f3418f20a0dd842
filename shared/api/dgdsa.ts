/**
 * DynamoGraphDeploymentScalingAdapter (DGDSA): one component of a DGD behind the Kubernetes
 * scale subresource, so an HPA, KEDA or the Planner can drive its replicas. The zod schema is
 * the single source of the TS type and of the CRD's structural schema (./crd.ts).
 *
 * Shape, as upstream serves it (../shared/crds/dynamo/nvidia.com_dynamographdeploymentscalingadapters.yaml):
 * group `nvidia.com`, versions `v1alpha1` (served) and `v1beta1` (served, storage) with the same
 * schema, short name `dgdsa`; `spec.dgdRef{name, serviceName}` (both minLength 1),
 * `spec.replicas` (int32 >= 0); `status{replicas, selector, lastScaleTime}`; the scale
 * subresource maps `.spec.replicas`, `.status.replicas` and `.status.selector`.
 * @module
 */
import { z } from 'zod';
import { DGDSA_KIND, DGDSA_V1ALPHA1, DGDSA_V1BETA1 } from './constants.js';
import { ObjectMetaSchema, int32 } from './core.js';

export const DgdsaSpecSchema = z
  .object({
    dgdRef: z
      .object({
        name: z.string().min(1).meta({ description: 'Name of the DynamoGraphDeployment' }),
        serviceName: z.string().min(1).meta({ description: "ServiceName is the name of the component (v1alpha1: the key of spec.services; v1beta1: spec.components[].name) to scale" }),
      })
      .meta({ description: 'DGDRef references the DynamoGraphDeployment and the specific component to scale.' }),
    replicas: int32(0).meta({ description: 'Replicas is the desired number of replicas for the target component. Modified by external autoscalers (HPA/KEDA/Planner) through the scale subresource, or by users.' }),
  })
  .meta({ description: 'DynamoGraphDeploymentScalingAdapterSpec defines the desired state of DynamoGraphDeploymentScalingAdapter' });
export type DgdsaSpec = z.infer<typeof DgdsaSpecSchema>;

export const DgdsaStatusSchema = z
  .object({
    replicas: z.number().int().optional().meta({ description: "Replicas is the current number of replicas for the target component; required by the scale subresource." }),
    selector: z.string().optional().meta({ description: 'Selector is a label selector string for the pods managed by this adapter; required for HPA through the scale subresource.' }),
    lastScaleTime: z.string().optional().meta({ description: 'LastScaleTime is the last time the adapter scaled the target component (RFC 3339).', format: 'date-time' }),
  })
  .meta({ description: 'DynamoGraphDeploymentScalingAdapterStatus defines the observed state of DynamoGraphDeploymentScalingAdapter' });
export type DgdsaStatus = z.infer<typeof DgdsaStatusSchema>;

export const DgdsaSchema = z.object({
  apiVersion: z.enum([DGDSA_V1BETA1, DGDSA_V1ALPHA1]),
  kind: z.literal(DGDSA_KIND),
  metadata: ObjectMetaSchema,
  spec: DgdsaSpecSchema,
  status: DgdsaStatusSchema.optional(),
});
/** A DynamoGraphDeploymentScalingAdapter of either served version (their schemas are the same). */
export type Dgdsa = z.infer<typeof DgdsaSchema>;
