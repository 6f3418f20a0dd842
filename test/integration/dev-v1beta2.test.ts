/**
 * `dynamo-fn dev --dgdr-v1beta2-enabled` end to end, through dev's own entry point (bin/dynamo-fn.js
 * in its own process, its own API server): the reference's trace-claim lifecycle
 * (../shared/reference/dgdr-reference.txt "Trace claim lifecycle") run by dev's admission,
 * profile and cleanup functions fed by dev's event bridge exactly as the chart wires them
 * (cleanup gets Reference-mode events only), and a DGDSA scale reaching its DGD through dev's
 * admission given the chart's replica-modifier identities. The test acts as a user would with
 * kubectl (field manager "kubectl"); it calls no function itself.
 * No PersistentVolume controller runs in dev, so a claim stays Pending (a Pending claim is
 * accepted) and the Job's pod is never scheduled: the Job stays active until it is stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError } from '../../shared/runtime/index.js';
import { eventually } from '../support/eventually.js';
import { repoRoot } from '../support/paths.js';

const NAMESPACE = 'default';
const REQUEST = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest' } as const;
const RUN = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun' } as const;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;
const TRACE = 'windows/2026-10-27T10-00.jsonl.gz';
const TIMEOUT_MS = 90_000;

let child: ChildProcess;
let output = '';
let kubeConfig: KubeConfig;
let user: Kube;

beforeAll(async () => {
  child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'dev', '--dgdr-v1beta2-enabled', '--resync-seconds', '10'], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`dev exited ${String(code)} before it ran:\n${output}`))));
  const kubeconfigPath = await Promise.race([
    exited,
    eventually('dev to print its kubeconfig', async () => /export KUBECONFIG=(\S+)/.exec(output)?.[1], 280_000, 250),
  ]);
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  user = createKube(kubeConfig, { fieldManager: 'kubectl' });
  // Dev creates its simulated GPU nodes just after printing; v1beta2 hardware discovery lists them.
  await eventually('the simulated GPU nodes', async () => ((await user.list('v1', 'Node')).length > 0 ? true : undefined), 60_000, 250);
}, 300_000);

afterAll(async () => {
  if (child === undefined || child.exitCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGINT');
  await closed;
}, 60_000);

const finalizersOf = (object: KubeObject | undefined): string[] => (object?.metadata['finalizers'] as string[] | undefined) ?? [];
const completedOf = (object: KubeObject | undefined) => ((object?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Completed');
const getClaim = (name: string) => user.get({ ...CLAIM, namespace: NAMESPACE, name });
const getRun = (name: string) => user.get({ ...RUN, namespace: NAMESPACE, name });
const getJob = (name: string) => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, name });

async function createClaim(name: string): Promise<void> {
  await user.apply({ ...CLAIM, metadata: { name, namespace: NAMESPACE }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' } });
}

describe('dynamo-fn dev --dgdr-v1beta2-enabled', () => {
  it('prints the functions and gates that run: admission, reconcile, profile and cleanup, v1beta2 on', () => {
    expect(output).toContain('Functions: admission (webhooks, /convert), reconcile, profile, cleanup; each on its own host');
    expect(output).toContain('Gates: lpx.enabled=false dgdrV1Beta2.enabled=true');
    expect(output).toContain('Started function cleanup');
  });

  it('the trace-claim lifecycle: "When the claim does not exist, the Run stays Pending with Completed=False and reason TraceSourceMissing, and starts once you create the claim"; "Before a Run creates its Job, the operator adds the finalizer nvidia.com/dgdr-run-<run-uid> to the claim"; "When the claim has a deletionTimestamp, the operator stops the Job ... Once the Job and its pod are gone, the Run fails with reason TraceSourceDeleted, and the operator then removes the Run\'s finalizer"', async () => {
    await user.apply({
      ...REQUEST,
      metadata: { name: 'qwen3-trace-replay', namespace: NAMESPACE },
      spec: { model: { name: 'Qwen/Qwen3-0.6B' }, workload: { trace: { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: TRACE } } } } },
    });
    const runName = await eventually(
      'the request to start its Run',
      async () => ((await user.get({ ...REQUEST, namespace: NAMESPACE, name: 'qwen3-trace-replay' }))?.['status'] as { activeRunRef?: { name?: string } } | undefined)?.activeRunRef?.name,
      TIMEOUT_MS,
      250,
    );
    const missing = await eventually('the Run to report TraceSourceMissing', async () => {
      const run = await getRun(runName);
      return completedOf(run)?.reason === 'TraceSourceMissing' ? run : undefined;
    }, TIMEOUT_MS, 250);
    expect(completedOf(missing)).toMatchObject({ status: 'False', reason: 'TraceSourceMissing' });
    expect((missing['status'] as { phase?: string }).phase).toBe('Pending');

    // Creating the claim: the Run's finalizer on the claim, then its Job (no event names the Run: the claim's does).
    await createClaim('request-traces');
    const finalizer = `nvidia.com/dgdr-run-${missing.metadata.uid ?? ''}`;
    await eventually('the finalizer and the Job', async () => (finalizersOf(await getClaim('request-traces')).includes(finalizer) && (await getJob(`${runName}-aisimulate`)) !== undefined ? true : undefined), TIMEOUT_MS, 250);

    // Deleting the claim cancels the Run, then releases the claim, which goes away.
    await user.delete({ ...CLAIM, namespace: NAMESPACE, name: 'request-traces' });
    const failed = await eventually('the Run to fail TraceSourceDeleted', async () => {
      const run = await getRun(runName);
      return completedOf(run)?.status === 'True' ? run : undefined;
    }, TIMEOUT_MS, 250);
    expect(completedOf(failed)).toMatchObject({ reason: 'TraceSourceDeleted', message: `PersistentVolumeClaim "request-traces" was deleted; Job ${runName}-aisimulate was stopped` });
    expect(await getJob(`${runName}-aisimulate`)).toBeUndefined();
    await eventually('the claim to go away', async () => ((await getClaim('request-traces')) === undefined ? true : undefined), TIMEOUT_MS, 250);
  }, 300_000);

  it('"or once the Run and its Jobs are deleted": the finalizer of a Run deleted while its Job runs is released, cleanup getting Reference-mode events only', async () => {
    await createClaim('inflight-traces');
    const run = await user.apply({
      ...RUN,
      metadata: { name: 'inflight', namespace: NAMESPACE },
      spec: {
        model: { name: 'Qwen/Qwen3-0.6B' },
        hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
        workload: { trace: { source: { persistentVolumeClaim: { claimName: 'inflight-traces', subPath: TRACE } } } },
      },
    });
    const finalizer = `nvidia.com/dgdr-run-${run.metadata.uid ?? ''}`;
    await eventually('the finalizer and the Job', async () => (finalizersOf(await getClaim('inflight-traces')).includes(finalizer) && (await getJob('inflight-aisimulate')) !== undefined ? true : undefined), TIMEOUT_MS, 250);
    expect(completedOf(await getRun('inflight'))?.status).not.toBe('True');
    await user.delete({ ...RUN, namespace: NAMESPACE, name: 'inflight' });
    await eventually('the deleted Run\'s finalizer to be released', async () => (finalizersOf(await getClaim('inflight-traces')).includes(finalizer) ? undefined : true), TIMEOUT_MS, 250);
    expect(await getJob('inflight-aisimulate')).toBeUndefined();
    // The bridge delivered Reference-mode events only to cleanup, as the chart's ApiServerSource does.
    expect(output).not.toMatch(/subscriber=cleanup .*dev\.knative\.apiserver\.resource\./);
  }, 300_000);

  it('an opt-in DynamoGraphDeploymentScalingAdapter scaled through its /scale (as `kubectl scale dgdsa` does) moves its DGD component: admission lets the reconcile function\'s ServiceAccount write it', async () => {
    const image = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
    await user.apply({
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'scaled', namespace: NAMESPACE },
      spec: {
        backendFramework: 'vllm',
        components: [
          { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image }] } } },
          { name: 'decode', type: 'decode', replicas: 1, scalingAdapter: {}, podTemplate: { spec: { containers: [{ name: 'main', image }] } } },
        ],
      },
    });
    const adapter = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter', namespace: NAMESPACE, name: 'scaled-decode' };
    await eventually('the adapter', async () => ((await user.get(adapter)) === undefined ? undefined : true), TIMEOUT_MS, 250);
    // As `kubectl scale` sends it (k8s.io/kubectl pkg/scale ScaleSimple without preconditions): a
    // merge patch of spec.replicas on /scale, no resourceVersion, so the reconcile function's
    // own status write on the new adapter cannot make it a 409; kubectl retries a conflict
    // (ScaleCondition) and a loaded API server can time out, so this retries those too.
    await eventually('the adapter scaled to 3 through /scale', async () => {
      try {
        return await user.scale(adapter, 3);
      } catch (error) {
        if (error instanceof TransientError) return undefined;
        throw error;
      }
    }, TIMEOUT_MS, 250);
    await eventually('the DGD component to have 3 replicas', async () => {
      const dgd = await user.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: NAMESPACE, name: 'scaled' });
      return (dgd?.['spec'] as { components: { name: string; replicas?: number }[] } | undefined)?.components.find((c) => c.name === 'decode')?.replicas === 3 ? true : undefined;
    }, TIMEOUT_MS, 250);
    expect(output).not.toContain('cannot be modified directly when scaling adapter is enabled');
  }, 300_000);
});

describe('dynamo-fn dev --apply', () => {
  it('refuses a DGD our admission denies before starting anything, with the denial', async () => {
    const file = path.join(repoRoot, 'test', 'fixtures', 'dev-apply-denied.yaml');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const dev = spawn(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'dev', '--apply', file], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      dev.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      dev.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .*dev-apply-denied\.yaml#1: admission webhook denied the request: .*nvidia.com\/grove-update-strategy/m);
    expect(result.stderr).not.toContain('The control plane is running');
    expect(result.stderr).not.toContain('Started control plane');
  }, 60_000);
});
