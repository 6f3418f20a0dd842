/**
 * `dynamo-fn dev --chart` end to end: its own API server (not the run's shared one), the chart
 * installed with helm, the admission webhooks (failurePolicy Fail) answered by the admission
 * server on loopback, the reconcile function running with the chart ServiceAccount's token,
 * and an example DGD applied and reconciled (--wait). Grove's controllers do not run, and dev's
 * Grove simulation is turned off (--no-simulate-grove), so the DGD stays Ready=False "resource not found".
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

describe('dynamo-fn dev --chart', () => {
  it('installs through the chart, admits and reconciles an example DGD with the chart RBAC, and prints kubectl lines that work as printed', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), 'dev', '--chart', '--apply', path.join(repoRoot, 'examples', 'vllm-aggregated.yaml'), '--wait', '--timeout-seconds', '90', '--no-simulate-grove'], {
      cwd: '/',
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(output).toContain('Installed the chart release=dynamo-fn namespace=dynamo-system');
    expect(output).toContain('The reconcile function runs with the chart ServiceAccount token serviceAccount=dynamo-system/dynamo-reconcile');
    expect(output).toMatch(/Answered AdmissionReview webhook=validate version=v1beta1 kind=DynamoGraphDeployment .* name=qwen3-agg allowed=true/);
    // The chart's webhook configurations are the only ones: each request is admitted once.
    expect(output.match(/Answered AdmissionReview webhook=validate version=v1beta1 kind=DynamoGraphDeployment .*name=qwen3-agg /g)).toHaveLength(1);
    expect(output).toContain("Knative's controllers do not run here, so `dynamo-fn status` shows each function's Knative Service Ready=Unknown (nothing writes its status)");
    // dynamo-fn status also lists the admission Deployment: READY Unknown, DESIRED 2, ACTUAL 0 (seen in dev --chart, 2026-12-02).
    expect(output).toContain('and the admission Deployment Unknown with 0 pods (no Deployment controller runs either); the functions run on loopback instead');
    expect(output).toMatch(/Reconciled DynamoGraphDeployment dgd=inference\/qwen3-agg podCliqueSets=qwen3-agg ready=False reason=some_resources_are_not_ready/);
    // Run from `/`: the printed apply line names the example by absolute path.
    const applyLine = /kubectl apply --server-side -f (\S+)/.exec(output)?.[1] ?? '';
    expect(path.isAbsolute(applyLine) && existsSync(applyLine)).toBe(true);
    expect(code).toBe(0);
  }, 240_000);
});
