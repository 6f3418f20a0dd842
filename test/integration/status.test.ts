/**
 * `dynamo-fn status` and `dynamo-fn install --wait` against the real API server with Knative's
 * CRDs installed. Knative Serving's and the Deployment controller's controllers do not run
 * here: the tests write the status they would write (Ready conditions and reasons, URL, latest
 * revisions, Revision desired/actual replicas), and say so at each write.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { collectStatus, createKnativeClient, type FunctionStatus, type KnativeClient } from '../../shared/knative/index.js';
import { run as install } from '../../shared/cli/install.js';
import { ensureHelm, runHelm } from '../harness/helm.js';
import { createLineLog } from '../harness/log.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { adoptOwnCrds, externalAdmissionFlags, installCertManagerCrds, restoreHarnessCrds } from '../support/helm-release.js';
import { repoRoot } from '../support/paths.js';

const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'status-test' });
/** The field manager standing in for Knative's and the Deployment controller's status writes. */
const controllers: Kube = createKube(kubeConfig, { fieldManager: 'knative-serving-controller-stand-in' });
let client: KnativeClient;

beforeAll(async () => {
  client = await createKnativeClient(kubeConfig);
});
afterAll(async () => {
  await client.close();
});

async function aKnativeService(namespace: string, name: string): Promise<void> {
  await admin.apply({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { template: { spec: { containers: [{ image: 'ghcr.io/dynamo-fn/dynamo-fn:0.1.0' }] } } },
  } as unknown as KubeObject);
}

/** Writes the Service status Knative Serving's service controller would write. */
async function knativeServiceStatusIs(namespace: string, name: string, status: Record<string, unknown>): Promise<void> {
  await controllers.applyStatus({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name, namespace }, status } as unknown as KubeObject, { force: true });
}

/** A Revision of `service` with the replicas Knative's autoscaler would report. */
async function aRevision(namespace: string, service: string, name: string, replicas: { desiredReplicas: number; actualReplicas: number }): Promise<void> {
  await admin.apply({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: { name, namespace, labels: { 'serving.knative.dev/service': service } },
    spec: { containers: [{ image: 'ghcr.io/dynamo-fn/dynamo-fn:0.1.0' }] },
  } as unknown as KubeObject);
  await controllers.applyStatus({ apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name, namespace }, status: replicas } as unknown as KubeObject, { force: true });
}

async function anAdmissionDeployment(namespace: string, status: Record<string, unknown>): Promise<void> {
  await admin.apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'dynamo-admission', namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'a' } },
      template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'admission', image: 'ghcr.io/dynamo-fn/dynamo-fn:0.1.0' }] } },
    },
  } as unknown as KubeObject);
  // As the Deployment controller would (kube-controller-manager runs without it here).
  await controllers.applyStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dynamo-admission', namespace }, status } as unknown as KubeObject, { force: true });
}

/** `install --set` pairs for the run's admission server (see externalAdmissionFlags). */
// The profile function is left out to keep the stand-in status writes to two functions.
const externalSet = () => [...externalAdmissionFlags(inject('admissionUrl'), inject('admissionCaBundle')), '--set', 'profile.enabled=false'];

const readyTrue = { type: 'Ready', status: 'True', lastTransitionTime: '2026-12-01T08:00:00Z' };

describe('dynamo-fn status', () => {
  let namespace = '';

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'status');
    // reconcile: Ready, scaled to zero (Knative keeps the Revision, with 0 replicas).
    await aKnativeService(namespace, 'dynamo-reconcile');
    await aRevision(namespace, 'dynamo-reconcile', 'dynamo-reconcile-00001', { desiredReplicas: 0, actualReplicas: 0 });
    await knativeServiceStatusIs(namespace, 'dynamo-reconcile', {
      observedGeneration: 1,
      conditions: [readyTrue],
      url: `http://dynamo-reconcile.${namespace}.svc.cluster.local`,
      latestCreatedRevisionName: 'dynamo-reconcile-00001',
      latestReadyRevisionName: 'dynamo-reconcile-00001',
    });
    // profile: a new Revision that is not ready yet, scaling to 3 with 1 running; the old one serves.
    await aKnativeService(namespace, 'dynamo-profile');
    await aRevision(namespace, 'dynamo-profile', 'dynamo-profile-00001', { desiredReplicas: 3, actualReplicas: 1 });
    await aRevision(namespace, 'dynamo-profile', 'dynamo-profile-00002', { desiredReplicas: 1, actualReplicas: 0 });
    await knativeServiceStatusIs(namespace, 'dynamo-profile', {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionFailed', message: 'Revision "dynamo-profile-00002" failed with message: Back-off pulling image.', lastTransitionTime: '2026-12-01T08:00:00Z' }],
      url: `http://dynamo-profile.${namespace}.svc.cluster.local`,
      latestCreatedRevisionName: 'dynamo-profile-00002',
      latestReadyRevisionName: 'dynamo-profile-00001',
    });
    await anAdmissionDeployment(namespace, {
      observedGeneration: 1,
      replicas: 2,
      readyReplicas: 2,
      conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }],
    });
  });

  it('shows Ready and reason, URL, latest created and ready revisions and desired/actual scale per function, scale to zero included', async () => {
    const rows = await collectStatus(client, namespace);
    const expected: FunctionStatus[] = [
      { function: 'admission', workload: 'Deployment', installed: true, ready: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.', url: `https://dynamo-admission.${namespace}.svc`, latestCreatedRevision: '', latestReadyRevision: '', desiredScale: 2, actualScale: 2 },
      { function: 'reconcile', workload: 'Service', installed: true, ready: 'True', reason: '', message: '', url: `http://dynamo-reconcile.${namespace}.svc.cluster.local`, latestCreatedRevision: 'dynamo-reconcile-00001', latestReadyRevision: 'dynamo-reconcile-00001', desiredScale: 0, actualScale: 0 },
      {
        function: 'profile',
        workload: 'Service',
        installed: true,
        ready: 'False',
        reason: 'RevisionFailed',
        message: 'Revision "dynamo-profile-00002" failed with message: Back-off pulling image.',
        url: `http://dynamo-profile.${namespace}.svc.cluster.local`,
        latestCreatedRevision: 'dynamo-profile-00002',
        latestReadyRevision: 'dynamo-profile-00001',
        desiredScale: 3,
        actualScale: 1,
      },
      { function: 'cleanup', workload: 'Service', installed: false, ready: 'Unknown', reason: 'NotInstalled', message: 'Service dynamo-cleanup not found', url: '', latestCreatedRevision: '', latestReadyRevision: '', desiredScale: undefined, actualScale: undefined },
    ];
    expect(rows).toEqual(expected);
  });

  it('prints it as a table from the command line', async () => {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'status', '-n', namespace], { env: { ...process.env, KUBECONFIG: process.env['KUBECONFIG'] } }, (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
      );
    });
    const lines = output.trimEnd().split('\n').map((line) => line.split(/\s{2,}/));
    expect(lines).toEqual([
      ['FUNCTION', 'KIND', 'READY', 'REASON', 'URL', 'LATESTCREATED', 'LATESTREADY', 'DESIRED', 'ACTUAL'],
      ['admission', 'Deployment', 'True', 'MinimumReplicasAvailable', `https://dynamo-admission.${namespace}.svc`, '-', '-', '2', '2'],
      ['reconcile', 'Service', 'True', '-', `http://dynamo-reconcile.${namespace}.svc.cluster.local`, 'dynamo-reconcile-00001', 'dynamo-reconcile-00001', '0', '0'],
      ['profile', 'Service', 'False', 'RevisionFailed', `http://dynamo-profile.${namespace}.svc.cluster.local`, 'dynamo-profile-00002', 'dynamo-profile-00001', '3', '1'],
      ['cleanup', 'Service', '-', 'NotInstalled', '-', '-', '-', '-', '-'],
    ]);
  });
});

describe('dynamo-fn install --wait', () => {
  const namespace = `dynamo-install-${randomBytes(3).toString('hex')}`;
  const release = 'dynamo-fn';
  let helm = '';

  beforeAll(async () => {
    helm = await ensureHelm({ log: createLineLog() });
    await installCertManagerCrds(admin, createLineLog());
    await adoptOwnCrds(admin, release, namespace);
  });

  afterAll(async () => {
    // The release's webhooks (failurePolicy Fail, no pods behind them here) would deny later DGD writes.
    await runHelm(helm, ['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '60s'], { kubeconfig: process.env['KUBECONFIG'] ?? '' });
    // helm replaced our CRDs with what the matrix rendered (v1beta2 off drops the DGDR's v1beta2 version); later files need them as the global setup installed them.
    await restoreHarnessCrds(admin, inject('admissionUrl'), inject('admissionCaBundle'));
  });

  it('installs the chart and prints a progress line per function until every function is Ready', async () => {
    const lines: string[] = [];
    const installing = install(['-n', namespace, '--wait', '--timeout', '60', '--helm', helm, ...externalSet()], (text) => lines.push(...text.trimEnd().split('\n')));
    // Stand in for Knative Serving and the Deployment controller once the chart's objects exist:
    // first not ready (no Revision yet, no pods), then ready and scaled to zero / to 2.
    const exists = async () =>
      (await admin.get({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', namespace, name: 'dynamo-reconcile' })) !== undefined &&
      (await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: 'dynamo-admission' })) !== undefined;
    for (let i = 0; i < 300 && !(await exists()); i++) await new Promise((resolve) => setTimeout(resolve, 200));
    await knativeServiceStatusIs(namespace, 'dynamo-reconcile', {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionMissing', message: 'Configuration "dynamo-reconcile" does not have any ready Revision.', lastTransitionTime: '2026-12-01T08:00:00Z' }],
      latestCreatedRevisionName: 'dynamo-reconcile-00001',
    });
    await controllers.applyStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dynamo-admission', namespace }, status: { observedGeneration: 1, replicas: 2, readyReplicas: 0, conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }] } } as unknown as KubeObject, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await aRevision(namespace, 'dynamo-reconcile', 'dynamo-reconcile-00001', { desiredReplicas: 0, actualReplicas: 0 });
    await knativeServiceStatusIs(namespace, 'dynamo-reconcile', {
      observedGeneration: 1,
      conditions: [readyTrue],
      url: `http://dynamo-reconcile.${namespace}.svc.cluster.local`,
      latestCreatedRevisionName: 'dynamo-reconcile-00001',
      latestReadyRevisionName: 'dynamo-reconcile-00001',
    });
    await controllers.applyStatus({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dynamo-admission', namespace }, status: { observedGeneration: 1, replicas: 2, readyReplicas: 2, conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }] } } as unknown as KubeObject, { force: true });

    expect(await installing).toBe(0);
    expect(lines[0]).toBe(`Installed release ${release} in namespace ${namespace}`);
    expect(lines).toContain('reconcile: Ready=False (RevisionMissing: Configuration "dynamo-reconcile" does not have any ready Revision.)');
    expect(lines).toContain('admission: Ready=False (MinimumReplicasUnavailable: Deployment does not have minimum availability.) scale 0/2');
    expect(lines).toContain('reconcile: Ready=True scale 0/0');
    expect(lines).toContain('admission: Ready=True (MinimumReplicasAvailable: Deployment has minimum availability.) scale 2/2');
    expect(lines.at(-1)).toBe('All 2 functions are Ready');
  });

  it('fails with the functions still waiting when --timeout passes', async () => {
    await knativeServiceStatusIs(namespace, 'dynamo-reconcile', { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionMissing', message: 'no ready Revision', lastTransitionTime: '2026-12-01T08:00:00Z' }] });
    const lines: string[] = [];
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (stderr.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      expect(await install(['-n', namespace, '--wait', '--timeout', '1', '--helm', helm, ...externalSet()], (text) => lines.push(text))).toBe(1);
    } finally {
      process.stderr.write = write;
    }
    expect(stderr.join('')).toContain(`dynamo-fn install: timed out after 1s waiting for reconcile to be Ready (see \`dynamo-fn status -n ${namespace}\`)`);
  });
});
