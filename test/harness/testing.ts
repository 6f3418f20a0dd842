/**
 * Helpers for integration tests running against the control plane of
 * test/integration/global-setup.ts. Import only from test files (they call vitest's inject).
 * @module
 */
import { randomBytes } from 'node:crypto';

import { KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { inject } from 'vitest';

/** The run's admin KubeConfig (from `inject('kubeconfigPath')`, else KUBECONFIG). */
export function testKubeConfig(): KubeConfig {
  const kubeconfigPath = inject('kubeconfigPath') ?? process.env['KUBECONFIG'];
  if (kubeconfigPath === undefined || kubeconfigPath === '') {
    throw new Error('no kubeconfig: run integration tests with `vitest run --project integration`');
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return kubeConfig;
}

/**
 * Creates a namespace `<prefix>-<random>` so test files never see each other's objects, and
 * returns its name. Deleting it is optional: the control plane lives for one run.
 */
export async function createTestNamespace(kubeConfig: KubeConfig, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await KubernetesObjectApi.makeApiClient(kubeConfig).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}
