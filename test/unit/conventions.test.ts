/**
 * Kubernetes and Prometheus conventions every function keeps: `dynamo-fn --version`, a
 * `dynamo_fn_build_info` metric, one metric prefix (`dynamo_fn_`) for every metric we define
 * (the prom-client process_* and nodejs_* collector metrics keep their standard names).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startAdmissionServer } from '../../functions/admission/index.js';
import { METRIC_PREFIX, defaultConfig, startFunctionServer, type FunctionDefinition } from '../../shared/runtime/index.js';
import * as api from '../../shared/api/index.js';
import * as domain from '../../shared/domain/index.js';
import { repoRoot } from '../support/paths.js';

const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const silent = pino({ level: 'silent' });

/** Names of the metrics in a Prometheus text exposition, from their `# TYPE` lines. */
function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] ?? '');
}
const isOurs = (name: string) => !name.startsWith('process_') && !name.startsWith('nodejs_');

describe('conventions', () => {
  it('`dynamo-fn --version` prints the package version and the Node.js version', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [path.join(repoRoot, 'bin', 'dynamo-fn.js'), '--version'], (error, out) => (error === null ? resolve(out) : reject(error))),
    );
    expect(stdout).toBe(`dynamo-fn ${version} (Node.js ${process.version})\n`);
  });

  it('the CloudEvents host serves dynamo_fn_build_info and only dynamo_fn_ metrics of its own', async () => {
    const registry = new Registry();
    const definition: FunctionDefinition<never> = { name: 'reconcile', routes: [], init: async () => ({}) as never };
    const server = await startFunctionServer(definition, { config: defaultConfig({ port: 0 }), log: silent, host: '127.0.0.1', registry });
    try {
      const text = await (await request(`${server.url.replace(/\/$/, '')}/metrics`)).body.text();
      expect(text).toContain(`dynamo_fn_build_info{function="reconcile",version="${version}",nodejs_version="${process.version}"} 1`);
      expect(metricNames(text).filter(isOurs).filter((name) => !name.startsWith(METRIC_PREFIX))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('the admission webhook serves dynamo_fn_build_info and only dynamo_fn_ metrics of its own', async () => {
    const server = await startAdmissionServer({ port: 0, host: '127.0.0.1', config: { lpxEnabled: false }, shutdownDelaySeconds: 0, log: silent });
    try {
      const text = await (await request(`${server.url}/metrics`)).body.text();
      expect(text).toContain(`dynamo_fn_build_info{function="admission",version="${version}",nodejs_version="${process.version}"} 1`);
      expect(metricNames(text).filter(isOurs).filter((name) => !name.startsWith(METRIC_PREFIX))).toEqual([]);
      expect(metricNames(text).filter(isOurs).length).toBeGreaterThan(3);
    } finally {
      await server.close();
    }
  });

  // Upstream's DGD Ready reasons, kept as upstream writes them because users and their tooling
  // match on them (upstream-notes/dgd.md §2.4; deploy/operator/internal/controller/
  // dynamographdeployment_controller.go).
  // upstream-notes/dgd.md §2.4: the Ready reasons of dynamographdeployment_controller.go, scaling_deferred included.
  const UPSTREAM_REASONS = ['all_resources_are_ready', 'some_resources_are_not_ready', 'failed_to_reconcile_the_resources', 'scaling_deferred', 'insufficient_capacity', 'pods_not_ready', 'updating', 'mixed_not_ready_reasons', 'waiting_for_checkpoint'];

  it('condition reasons are CamelCase (Kubernetes API conventions), except the upstream values users depend on', () => {
    const reasons = [...Object.entries(api), ...Object.entries(domain)].filter(([key, value]) => key.startsWith('REASON_') && typeof value === 'string').map(([, value]) => value as string);
    expect(reasons.length).toBeGreaterThan(3);
    expect(reasons.filter((reason) => !UPSTREAM_REASONS.includes(reason) && !/^[A-Z][A-Za-z0-9]*$/.test(reason))).toEqual([]);
  });

  it('lastTransitionTime is RFC 3339 with whole seconds, as metav1.Time stores it (the fraction is dropped)', () => {
    expect(domain.toKubeTime(new Date('2026-12-01T08:00:59.987Z'))).toBe('2026-12-01T08:00:59Z');
  });
});
