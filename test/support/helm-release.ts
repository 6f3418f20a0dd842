/**
 * Helpers for tests that `helm install` the chart onto the run's shared API server.
 * @module
 */
import { DYNAMO_GROUP, ownCrds } from '../../shared/api/index.js';
import type { Kube } from '../../shared/kube/index.js';
import { withConversionWebhook } from '../harness/apiserver.js';
import { defaultCrdFiles, loadCrds } from '../harness/crds.js';
import { eventually } from './eventually.js';

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
 * Puts our CRDs back as the run's global setup installed them (every version served, conversion
 * through the run's admission server). A `helm install` or `upgrade` of the chart replaces them
 * cluster-wide with what its values render: with `dgdrV1Beta2.enabled=false` the DGDR CRD loses
 * its v1beta2 version, and uninstalling keeps the CRDs as they are (Helm's rule for CRDs). The
 * test files that install the chart call this when they finish, so the files that run after them
 * (the integration project runs its files one at a time, in an order of vitest's choosing) find
 * the cluster as the global setup left it. Waits until each CRD is Established again.
 */
export async function restoreHarnessCrds(kube: Kube, admissionUrl: string, admissionCaBundle: string): Promise<void> {
  const loaded = await loadCrds(await defaultCrdFiles());
  const ours = loaded.filter((entry) => entry.crd.spec.group === DYNAMO_GROUP).map((entry) => withConversionWebhook(entry, { url: `${admissionUrl}/convert`, caBundle: admissionCaBundle }));
  for (const { crd } of ours) await kube.apply(crd, { force: true });
  for (const { crd } of ours) {
    await eventually(`CRD ${crd.metadata.name} Established again`, async () => {
      const stored = await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd.metadata.name });
      const conditions = (stored?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      return conditions.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    }, 60_000);
  }
}

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
