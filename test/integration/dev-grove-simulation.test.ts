/**
 * `dynamo-fn dev` with and without its Grove simulation, through dev's own entry point
 * (bin/dynamo-fn.js in its own process, its own API server), on the README's example DGD
 * (examples/vllm-disaggregated-coherent.yaml, `--apply ... --wait`). With the simulation (the
 * default) the simulated Grove creates the PodCliques the PodCliqueSet names and reports them
 * ready, so the DGD reaches Ready=True as upstream's readiness table says it does once every
 * child is ready at its generation (upstream-notes/dgd.md §4.7 step 5); with `--simulate none`
 * nothing plays Grove and the DGD stays Ready=False "resource not found". With --lpx-enabled,
 * the LPX example (examples/lpx/llama-lpx.yaml, the sample build shipped in examples/lpx/builds)
 * reaches Ready=True with both simulations: Grove's and the LPX scheduler's "bound" receipts.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createKube } from '../../shared/kube/index.js';
import { eventually } from '../support/eventually.js';
import { repoRoot } from '../support/paths.js';

const EXAMPLE = path.join(repoRoot, 'examples', 'vllm-disaggregated-coherent.yaml');

async function runDev(args: readonly string[], example = EXAMPLE): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'dev', '--apply', example, '--wait', '--timeout-seconds', '150', ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // dev stops itself (--timeout-seconds 150); if it has not 380 s in, it is killed, so the
  // failure shows what it printed instead of only the test's timeout.
  const deadline = setTimeout(() => child.kill('SIGKILL'), 380_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(deadline);
  return { code, output };
}

describe('dynamo-fn dev: the Grove simulation', () => {
  it('by default simulates Grove, named as a simulation, and the README example DGD reaches Ready=True (--wait exits 0)', async () => {
    const { code, output } = await runDev([]);
    expect(output).toContain('Simulating Grove (PodCliques, PodCliqueScalingGroups and their ready status from each PodCliqueSet; no pods; not the real Grove controller)');
    expect(output).toContain('Simulations: Grove (');
    expect(output).toMatch(/Reconciled DynamoGraphDeployment dgd=inference\/llama-disagg podCliqueSets=llama-disagg ready=True reason=all_resources_are_ready message="All resources are ready"/);
    expect(code, output).toBe(0);
  }, 420_000);

  it('with --simulate none nothing plays Grove: "resource not found" keeps the DGD Ready=False, as without Grove', async () => {
    const { code, output } = await runDev(['--simulate', 'none']);
    expect(output).not.toContain('Simulating Grove');
    expect(output, output).toContain('Simulations: none');
    expect(output).toMatch(/Reconciled DynamoGraphDeployment dgd=inference\/llama-disagg podCliqueSets=llama-disagg ready=False reason=some_resources_are_not_ready message=".*resource not found/);
    expect(code, output).toBe(0);
  }, 420_000);

  it('with --lpx-enabled, the LPX example DGD of the shipped sample build reaches Ready=True: Grove and the LPX scheduler simulated ("bound" receipts at the current generation)', async () => {
    const { code, output } = await runDev(['--lpx-enabled'], path.join(repoRoot, 'examples', 'lpx', 'llama-lpx.yaml'));
    expect(output).toContain('Simulating the LPX scheduler (');
    expect(output).toContain('not the real LPX scheduler)');
    expect(output).toMatch(/Reconciled DynamoGraphDeployment dgd=inference\/llama-lpx podCliqueSets=llama-lpx,llama-lpx-[0-9a-f]{4} ready=True reason=all_resources_are_ready/);
    expect(code, output).toBe(0);
  }, 420_000);

  it('a settled world makes no writes (no PodClique event once the DGD is Ready), and Ctrl-C, which reaches the whole process group, stops dev within seconds and without warnings', async () => {
    // detached: dev and its npm-less parent in a group of their own, so the test can signal the
    // group as a terminal does (SIGINT to every process of the foreground group).
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'dev', '--apply', EXAMPLE, '--resync-seconds', '0'], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // A dev that exits before printing it fails the test at once, with what it printed.
      let kubeconfigPath: string | undefined;
      for (const deadline = Date.now() + 280_000; ; await sleep(250)) {
        kubeconfigPath = /export KUBECONFIG=(\S+)/.exec(output)?.[1];
        if (kubeconfigPath !== undefined) break;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`dev ${child.exitCode === null ? 'printed no kubeconfig in 280 s' : `exited (${child.exitCode}) before printing its kubeconfig`}:\n${output}`);
      }
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(kubeconfigPath);
      const kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
      await eventually('the DGD to be Ready=True', async () => {
        const dgd = await kube.get({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'inference', name: 'llama-disagg' });
        const ready = ((dgd?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
        return ready?.status === 'True' ? true : undefined;
      }, 150_000, 250);
      // The simulation runs a pass each second: before its statuses compared whatever their key
      // order, each pass rewrote every PodClique's status, 3 PodClique events a second here.
      // Late writes of the first passes (the worker-hash annotation) may land after Ready=True on
      // a loaded machine: wait for a 3 s spell without PodClique events (at most 60 s), then
      // nothing may come for 5 s more.
      const pcEvents = (text: string) => text.match(/Handled event kind=PodClique /g) ?? [];
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const mark = output.length;
        await sleep(3_000);
        if (pcEvents(output.slice(mark)).length === 0) break;
      }
      const before = output.length;
      await sleep(5_000);
      expect(pcEvents(output.slice(before)), output.slice(before)).toEqual([]);
    } finally {
      const stopAt = Date.now();
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGINT');
      const code = await closed;
      const stopSeconds = (Date.now() - stopAt) / 1000;
      const afterStop = output.slice(output.lastIndexOf('Stopping'));
      expect(afterStop, output).toContain('Stopped control plane');
      expect(afterStop).not.toMatch(/ WARN | ERROR /);
      // 3-4 s measured (2026-12-02); 30-45 s when the group's SIGINT reached etcd and kube-apiserver.
      expect(stopSeconds, afterStop).toBeLessThan(20);
      expect(code, output).toBe(0);
    }
  }, 420_000);
});
