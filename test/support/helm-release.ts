/**
 * Helpers for tests that `helm install` the chart onto the run's shared API server.
 * @module
 */
import { ownCrds } from '../../shared/api/index.js';
import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { loadCrds } from '../harness/crds.js';
import { CERT_MANAGER_CRD_FILES, ensureCertManagerCrds } from '../harness/helm.js';
import type { HarnessLog } from '../harness/log.js';
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

/** Installs cert-manager's CRDs (from its Go module, test/harness/helm.ts) and waits until they are Established. */
export async function installCertManagerCrds(kube: Kube, log: HarnessLog): Promise<void> {
  const dir = await ensureCertManagerCrds({ log });
  for (const { crd } of await loadCrds(CERT_MANAGER_CRD_FILES.map((file) => `${dir}/${file}`))) {
    await kube.apply(crd as unknown as KubeObject, { force: true });
  }
  for (const name of ['issuers.cert-manager.io', 'certificates.cert-manager.io']) {
    await eventually(`CRD ${name} Established`, async () => {
      const crd = await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
      const conditions = (crd?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      return conditions.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
  }
}
