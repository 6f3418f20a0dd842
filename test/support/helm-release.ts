/**
 * Helpers for tests that `helm install` the chart onto the run's shared API server.
 * @module
 */
import { ownCrds } from '../../shared/api/index.js';
import type { Kube } from '../../shared/kube/index.js';

/**
 * The harness installed our CRDs before any release existed; marks them as `release`'s in
 * `namespace` (Helm's ownership label and annotations), as a cluster upgraded from an earlier
 * install of the chart has them, so `helm install` takes them over instead of refusing.
 */
export async function adoptOwnCrds(kube: Kube, release: string, namespace: string): Promise<void> {
  for (const crd of Object.values(ownCrds()) as unknown as { metadata: { name: string } }[]) {
    await kube.apply(
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: {
          name: crd.metadata.name,
          labels: { 'app.kubernetes.io/managed-by': 'Helm' },
          annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace },
        },
      },
      { force: true },
    );
  }
}

export { installCertManagerCrds } from '../harness/helm.js';

/**
 * `--set` flags pointing the chart's webhooks and CRD conversion at the run's admission server
 * (test/integration/global-setup.ts): the API server here cannot reach an in-cluster Service,
 * and the harness installed our CRDs with exactly this conversion clientConfig, so `helm
 * install` taking them over changes nothing in them. The Service + cert-manager form is checked
 * by `helm template` in chart.test.ts.
 */
export function externalAdmissionFlags(url: string, caBundle: string): string[] {
  return ['--set', `admission.external.url=${url}`, '--set', `admission.external.caBundle=${caBundle}`];
}
