/**
 * The chart's CRD gating as dev applies it (gateCrd), on the CRDs `dynamo-fn crds` generates:
 * the chart's templates/crds.yaml drops a gated CRD, and a gated version, while its gate is off
 * (test/integration/chart.test.ts checks the rendered chart gives the same versions).
 */
import { describe, expect, it } from 'vitest';
import { gateCrd, labelSelectorText, ownCrds } from './index.js';

const served = (lpxEnabled: boolean, dgdrV1Beta2Enabled: boolean) =>
  Object.fromEntries(
    Object.values(ownCrds()).flatMap((crd) => {
      const gated = gateCrd(crd as unknown as { metadata: Record<string, unknown>; spec: { versions: { name: string }[] } }, { lpxEnabled, dgdrV1Beta2Enabled });
      return gated === undefined ? [] : [[(crd as { metadata: { name: string } }).metadata.name, gated.spec.versions.map((v) => v.name)]];
    }),
  );

describe('gateCrd', () => {
  it('with dgdrV1Beta2 off the DGDR serves v1beta1 and v1alpha1 only (so kubectl prefers v1beta1), and no Run or Candidate CRD is installed; LPXGraphDeployment only with lpx', () => {
    expect(served(false, false)).toEqual({
      'dynamographdeployments.nvidia.com': ['v1beta1', 'v1alpha1'],
      'dynamographdeploymentscalingadapters.nvidia.com': ['v1alpha1', 'v1beta1'],
      'dynamographdeploymentrequests.nvidia.com': ['v1beta1', 'v1alpha1'],
    });
  });

  it('with both gates on every CRD and version is served', () => {
    expect(served(true, true)).toEqual({
      'dynamographdeployments.nvidia.com': ['v1beta1', 'v1alpha1'],
      'dynamographdeploymentscalingadapters.nvidia.com': ['v1alpha1', 'v1beta1'],
      'dynamographdeploymentrequests.nvidia.com': ['v1beta1', 'v1alpha1', 'v1beta2'],
      'dynamographdeploymentruns.nvidia.com': ['v1beta2'],
      'dynamographdeploymentcandidates.nvidia.com': ['v1beta2'],
      'lpxgraphdeployments.nvidia.com': ['v1alpha1'],
    });
  });
});

describe('labelSelectorText', () => {
  it('writes matchLabels as key=value and Exists as the bare key', () => {
    expect(labelSelectorText({ matchLabels: { app: 'dynamo-profiler' }, matchExpressions: [{ key: 'nvidia.com/dgdr-run-uid', operator: 'Exists' }] })).toBe('app=dynamo-profiler,nvidia.com/dgdr-run-uid');
  });
});
