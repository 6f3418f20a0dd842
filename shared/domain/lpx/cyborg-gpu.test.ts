import { describe, expect, it } from 'vitest';
import type { Component, Dgd } from '../../api/index.js';
import { deepFreeze } from '../../../test/support/builders.js';
import type { LpxBuild } from './build.js';
import { effectiveCyborgGpuCount, parseQuantity, validateHybridConductorDevices } from './cyborg-gpu.js';
import { deriveLpxWorkloads, resolveLpxWorkloads } from './workloads.js';

const GPU = 'nvidia.com/gpu';
/** Upstream testCyborgGPUResources: only the maps a row names, keyed by the row's resource (default nvidia.com/gpu). */
const resourcesOf = ({ resourceName = GPU, request, limit }: { resourceName?: string; request?: string; limit?: string }) => ({
  ...(request === undefined ? {} : { requests: { [resourceName]: request } }),
  ...(limit === undefined ? {} : { limits: { [resourceName]: limit } }),
});

describe('effectiveCyborgGpuCount (upstream EffectiveCyborgGPUCount; rows of TestEffectiveCyborgGPUCount, "the exact LPX Cyborg scalar resource contract")', () => {
  it.each([
    { name: 'absent', resources: {}, want: { ok: true, value: 0 } },
    { name: 'MIG does not satisfy classic inventory', resources: { resourceName: 'nvidia.com/mig-3g.20gb', limit: '1' }, want: { ok: true, value: 0 } },
    { name: 'limits only', resources: { limit: '2' }, want: { ok: true, value: 2 } },
    { name: 'equal request and limit', resources: { request: '2', limit: '2' }, want: { ok: true, value: 2 } },
    { name: 'request without limit', resources: { request: '1' }, want: { ok: false, error: 'Cyborg GPU request "nvidia.com/gpu" requires an equal limit' } },
    { name: 'request does not equal limit', resources: { request: '1', limit: '2' }, want: { ok: false, error: 'Cyborg GPU request "nvidia.com/gpu" must equal its limit, got request "1" and limit "2"' } },
    { name: 'fractional limit', resources: { limit: '500m' }, want: { ok: false, error: 'Cyborg GPU limit: GPU resource "nvidia.com/gpu" quantity "500m" must be a whole number' } },
    { name: 'fractional request', resources: { request: '500m', limit: '1' }, want: { ok: false, error: 'Cyborg GPU request: GPU resource "nvidia.com/gpu" quantity "500m" must be a whole number' } },
    { name: 'zero limit', resources: { limit: '0' }, want: { ok: false, error: 'Cyborg GPU limit "nvidia.com/gpu" must be positive, got "0"' } },
    { name: 'negative request', resources: { request: '-1', limit: '1' }, want: { ok: false, error: 'Cyborg GPU request "nvidia.com/gpu" must be positive, got "-1"' } },
  ])('$name', ({ resources, want }) => {
    expect(effectiveCyborgGpuCount(deepFreeze(resourcesOf(resources)))).toEqual(want);
  });

  it('a request equal in value to its limit is equal however it is written (Quantity.Cmp), and a JSON number is a quantity', () => {
    expect(effectiveCyborgGpuCount({ requests: { [GPU]: '2000m' }, limits: { [GPU]: 2 } })).toEqual({ ok: true, value: 2 });
  });
});

describe('parseQuantity (Kubernetes resource.ParseQuantity: exact values)', () => {
  it.each([
    { text: '2', value: 2 },
    { text: '500m', value: 0.5 },
    { text: '1.5', value: 1.5 },
    { text: '1k', value: 1000 },
    { text: '1Ki', value: 1024 },
    { text: '1E', value: 1e18 },
    { text: '1e3', value: 1000 },
    { text: '25E-2', value: 0.25 },
    { text: '-1', value: -1 },
  ])('$text is $value', ({ text, value }) => {
    const parsed = parseQuantity(text);
    expect(parsed === undefined ? undefined : Number(parsed.numerator) / Number(parsed.denominator)).toBe(value);
  });

  it.each(['', 'one', '1x', '1e', '1.2.3', '1 Gi'])('"%s" is not a quantity', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  it('a GPU count that is not a quantity is refused with Go\'s format error, not thrown', () => {
    expect(effectiveCyborgGpuCount({ limits: { [GPU]: 'two' } })).toEqual({ ok: false, error: "Cyborg GPU limit: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" });
  });
});

const DENIED = 'component "lpu" conductor main container requires a declared resourceClaim or a positive nvidia.com/gpu request';
/** Upstream's claim table: the Pod declares claims "other" (external-other) and "gpu" (external-gpu). */
const DECLARED = [{ name: 'other', resourceClaimName: 'external-other' }, { name: 'gpu', resourceClaimName: 'external-gpu' }];
function aConductor({ claims, declared = true, sidecar = false, scalarGpu = false }: { claims?: { name: string }[]; declared?: boolean; sidecar?: boolean; scalarGpu?: boolean }) {
  const main = { name: 'main', image: 'cyborg-runtime', resources: { ...(claims === undefined ? {} : { claims }), ...(scalarGpu ? { limits: { [GPU]: '1' } } : {}) } };
  const containers = sidecar ? [main, { name: 'sidecar', image: 'sidecar', resources: { claims: [{ name: 'gpu' }] } }] : [main];
  return { name: 'lpu', roles: [{ name: 'agent', podTemplate: { spec: { containers: [{ name: 'main', image: 'lpu-runtime' }] } } }, { name: 'conductor', podTemplate: { spec: { containers, ...(declared ? { resourceClaims: DECLARED } : {}) } } }] };
}

/** The rows' components as the rule reads them (name and roles; the pod templates are free-form). */
const asComponent = (component: unknown) => component as Pick<Component, 'name' | 'roles'>;

describe('validateHybridConductorDevices (upstream validateWorkloadConductor; TestResolveWorkload "Validate claim consumption by the Cyborg main container")', () => {
  it.each([
    { name: 'no resources at all', conductor: aConductor({ declared: false }), want: DENIED },
    { name: 'unused claim', conductor: aConductor({}), want: DENIED },
    { name: 'sidecar-only claim', conductor: aConductor({ sidecar: true }), want: DENIED },
    { name: 'mismatched claim', conductor: aConductor({ claims: [{ name: 'missing' }] }), want: DENIED },
    { name: 'external name is not the alias', conductor: aConductor({ claims: [{ name: 'external-gpu' }] }), want: DENIED },
    { name: 'consumed claim', conductor: aConductor({ claims: [{ name: 'gpu' }] }), want: undefined },
    { name: 'scalar GPU with unused claim', conductor: aConductor({ scalarGpu: true }), want: undefined },
  ])('$name', ({ conductor, want }) => {
    expect(validateHybridConductorDevices(asComponent(deepFreeze(conductor)), true)).toBe(want);
  });

  it('"Hybrid execution is selected by immutable build metadata, not template presence": an LPU-only build needs no conductor GPU', () => {
    expect(validateHybridConductorDevices(asComponent(aConductor({ declared: false })), false)).toBeUndefined();
  });

  it('a malformed count names the component: "component %q conductor resources: ..."', () => {
    const conductor = { name: 'lpu', roles: [{ name: 'conductor', podTemplate: { spec: { containers: [{ name: 'main', image: 'cyborg', resources: { requests: { [GPU]: '1' } } }] } } }] };
    expect(validateHybridConductorDevices(asComponent(conductor), true)).toBe('component "lpu" conductor resources: Cyborg GPU request "nvidia.com/gpu" requires an equal limit');
  });

  it('deriveLpxWorkloads refuses a hybrid build whose conductor holds no GPU (upstream: "Require resources on the independently authored hybrid conductor")', () => {
    const dgd = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'test' }, spec: { components: [{ ...aConductor({ declared: false }), type: 'lpx', replicas: 1, lpx: { buildId: 'b' } }] } } as unknown as Dgd;
    const build: LpxBuild = { path: 'file:///models/b', family: 'xt8888', compilationMode: 'lpx', partitions: [{ sourcePartitionId: 0, partPath: 'part-0', topology: { raw: 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA', chipCount: 32, nodeCount: 4 }, hxExtent: undefined }], selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined };
    expect(deriveLpxWorkloads(dgd, resolveLpxWorkloads(dgd), new Map([['lpu', { build, buildId: 'b' }]]))).toEqual({ ok: false, error: DENIED });
  });
});
