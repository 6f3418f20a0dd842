/**
 * The lpx.enabled start-up check (upstream-notes/lpx.md §5.4): with LPX enabled and an API not
 * served, the process stops with upstream's message. The kube client here only answers `list`
 * the way shared/kube does for a kind discovery does not serve (PermanentError, UnknownKind);
 * the served case runs against the real API server in test/integration/lpx.test.ts.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Kube } from '../../shared/kube/index.js';
import { ConfigError, PermanentError, defaultConfig } from '../../shared/runtime/index.js';
import { depsWithKube } from './index.js';
import { checkLpxStartup } from './lpx-startup.js';

function kubeServing(served: readonly string[]): Kube {
  const list = async (apiVersion: string, kind: string) => {
    if (served.includes(`${apiVersion}/${kind}`)) return [];
    throw new PermanentError(`cannot list ${kind}: the API server does not serve ${kind} in ${apiVersion}`, { reason: 'UnknownKind' });
  };
  return { list } as unknown as Kube;
}
const deps = (lpxEnabled: boolean, kube: Kube, registry?: string) =>
  depsWithKube({ log: pino({ level: 'silent' }), now: () => new Date(), config: defaultConfig({ lpxEnabled, ...(registry === undefined ? {} : { lpxModelRegistryUrl: registry }) }) }, kube);

const LPR = 'scheduling.lpu.nvidia.com/v1alpha1/LpuPipelineRequest';
const PODGANG = 'scheduler.grove.io/v1alpha1/PodGang';

describe('checkLpxStartup (lpx.md §5.4)', () => {
  it('disabled: checks nothing', async () => {
    await expect(checkLpxStartup(deps(false, kubeServing([])))).resolves.toBeUndefined();
  });
  it('"LPX is explicitly enabled in config but the scheduling.lpu.nvidia.com/v1alpha1 LpuPipelineRequest API was not detected in the cluster"', async () => {
    await expect(checkLpxStartup(deps(true, kubeServing([PODGANG])))).rejects.toThrow(
      new PermanentError('LPX is explicitly enabled in config but the scheduling.lpu.nvidia.com/v1alpha1 LpuPipelineRequest API was not detected in the cluster', { reason: 'LPXAPIMissing' }),
    );
  });
  it('"LPX is explicitly enabled in config but the scheduler.grove.io/v1alpha1 PodGang API was not detected in the cluster"', async () => {
    await expect(checkLpxStartup(deps(true, kubeServing([LPR])))).rejects.toThrow('LPX is explicitly enabled in config but the scheduler.grove.io/v1alpha1 PodGang API was not detected in the cluster');
  });
  it('an unsupported model registry scheme stops the process naming LPX_MODEL_REGISTRY_URL', async () => {
    await expect(checkLpxStartup(deps(true, kubeServing([LPR, PODGANG]), 'https://unsupported.invalid'))).rejects.toThrow(ConfigError);
    await expect(checkLpxStartup(deps(true, kubeServing([LPR, PODGANG]), 'https://unsupported.invalid'))).rejects.toThrow(/LPX_MODEL_REGISTRY_URL must be .*unsupported model registry URL scheme "https"/);
  });
  it('passes with both APIs served', async () => {
    await expect(checkLpxStartup(deps(true, kubeServing([LPR, PODGANG])))).resolves.toBeUndefined();
  });
});
