/**
 * The LPXGraphDeployment CRD, generated from its zod schema. Installed only with
 * `lpx.enabled=true` (the chart feature gate `lpx`, infra/chart/templates/crds.yaml), and kept when LPX is disabled
 * again (`helm.sh/resource-policy: keep`).
 *
 * Source: ../shared/upstream-notes/lpx.md §2 (v1alpha1 only, served and storage, no conversion,
 * namespaced, short name `lpxgd`, status subresource, printer columns Ready and Age, the keep
 * annotation, "Generated and owned by the Dynamo operator, not authored by users"), §7 (CRD
 * install only when LPX is enabled, left unchanged when it is disabled again);
 * ../shared/crds/dynamo/nvidia.com_lpxgraphdeployments.yaml (upstream's shape).
 * @module
 */
import { DYNAMO_GROUP } from './constants.js';
import { toStructuralSchema } from './crd.js';
import { LPXGD_KIND, LPXGD_PLURAL, LPXGD_SHORT_NAME, LpxGraphDeploymentSpecSchema, LpxGraphDeploymentStatusSchema } from './lpx.js';

/** The LPXGraphDeployment CRD (v1alpha1). Pure. */
export function lpxGraphDeploymentCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${LPXGD_PLURAL}.${DYNAMO_GROUP}`, annotations: { 'helm.sh/resource-policy': 'keep' } },
    spec: {
      group: DYNAMO_GROUP,
      names: { kind: LPXGD_KIND, listKind: `${LPXGD_KIND}List`, plural: LPXGD_PLURAL, singular: LPXGD_KIND.toLowerCase(), shortNames: [LPXGD_SHORT_NAME], categories: ['dynamo'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'LPXGraphDeployment is generated and owned by the Dynamo control plane, not authored by users. It owns one LPX PodCliqueSet and its pipeline requests. It serves only v1alpha1 and has no conversion contract.',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { ...toStructuralSchema(LpxGraphDeploymentSpecSchema), description: 'The DGD\'s handoff for all its LPX components; the owning DGD remains the only authored workload spec.' },
                status: { ...toStructuralSchema(LpxGraphDeploymentStatusSchema), description: 'The LPX lifecycle state; the DGD consumes readiness only for the current generation and input revision.' },
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  };
}

/** The CRDs installed only with `lpx.enabled=true`, by file name (in infra/chart/files/crds/). */
export function lpxCrds(): Readonly<Record<string, Record<string, unknown>>> {
  return { [`${DYNAMO_GROUP}_${LPXGD_PLURAL}.yaml`]: lpxGraphDeploymentCrd() };
}
