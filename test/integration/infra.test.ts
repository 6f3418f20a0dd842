/**
 * The deployment manifests under infra/ are accepted by a real API server with the Knative
 * CRDs installed (server-side dry run: schema, defaults and CEL rules checked, nothing stored).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createKube } from '../../shared/kube/index.js';
import { testKubeConfig } from '../harness/testing.js';
import { repoRoot } from '../support/paths.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return entry.endsWith('.yaml') ? [path] : [];
  });
}

const infraDir = resolve(repoRoot, 'infra');
const documents = yamlFiles(infraDir)
  .filter((file) => !file.includes(`${join('infra', 'crds')}`))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((d) => ({ file: relative(repoRoot, file), object: d.toJS() as { kind: string; metadata: { name: string } } })),
  )
  .map(({ file, object }) => ({ name: `${file}: ${object.kind} ${object.metadata.name}`, object }));

describe('infra/ manifests', () => {
  it('has the reconcile function deployable: Knative Service, ApiServerSource, PingSource, Broker, Trigger, RBAC', () => {
    expect(documents.map((d) => d.object.kind).sort()).toEqual(
      ['ApiServerSource', 'Broker', 'ClusterRole', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'Namespace', 'PingSource', 'Service', 'ServiceAccount', 'ServiceAccount', 'Trigger'].sort(),
    );
  });

  it('are accepted by the API server (server-side apply, dry run)', async () => {
    const kubeConfig = testKubeConfig();
    const kube = createKube(kubeConfig, { fieldManager: 'infra-test' });
    // The namespace must exist for the namespaced dry runs.
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dynamo-system' } });
    const { KubernetesObjectApi } = await import('@kubernetes/client-node');
    const api = KubernetesObjectApi.makeApiClient(kubeConfig);
    const failures: string[] = [];
    for (const { name, object } of documents) {
      try {
        await api.patch(object as never, undefined, 'All', 'infra-test', true, 'application/apply-patch+yaml' as never);
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
