/**
 * Every event the chart sends a function reaches one of its routes (issue 18 leftover: the
 * profile function answered the Candidate resync PingSource `NoResyncRoute`). For each gate
 * combination, shared/api chartFunctions (what the chart renders, test/integration/chart.test.ts
 * checks the two are equal, and what dev's bridge subscribes) is checked against the functions'
 * own route tables: every ApiServerSource resource finds a route (findRoute: same kind and API
 * group), and every PingSource (a resync with `kind` and `apiversion`, or a tick with `kind` only)
 * finds a route with a resync (resyncRoutes, as the host dispatches it).
 */
import { describe, expect, it } from 'vitest';
import { chartFunctions, type ChartFunction } from '../../shared/api/index.js';
import { findRoute } from '../../shared/runtime/index.js';
import profile from '../../functions/profile/index.js';
import { DEFINITIONS, unroutedChartEvents } from '../support/chart-routes.js';

const GATES = [
  { name: 'lpx off, v1beta2 off', lpxEnabled: false, dgdrV1Beta2Enabled: false },
  { name: 'lpx on, v1beta2 off', lpxEnabled: true, dgdrV1Beta2Enabled: false },
  { name: 'lpx on, v1beta2 on', lpxEnabled: true, dgdrV1Beta2Enabled: true },
  { name: 'lpx off, v1beta2 on', lpxEnabled: false, dgdrV1Beta2Enabled: true },
] as const;

describe('chart wiring reaches the functions\' routes', () => {
  it.each(GATES)('$name: every ApiServerSource resource has a route and every PingSource a resync route in the function it is sent to', (gates) => {
    expect(unroutedChartEvents(chartFunctions(gates), DEFINITIONS)).toEqual([]);
  });

  it('the check fails on a PingSource or an ApiServerSource resource without a route (the Candidate resync before this fix)', () => {
    const broken: ChartFunction[] = [
      {
        name: 'profile',
        sources: [{ name: 'dynamo-profile', mode: 'Reference', resources: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'NoSuchKind', group: 'nvidia.com', resource: 'nosuchkinds' }] }],
        pings: [{ name: 'dynamo-profile-dynamographdeploymentcandidate-resync', kind: 'DynamoGraphDeploymentCandidate', apiVersion: 'nvidia.com/v1beta2' }],
      },
    ];
    expect(unroutedChartEvents(broken, DEFINITIONS)).toEqual([
      'ApiServerSource dynamo-profile: nvidia.com/v1beta1 NoSuchKind has no route in profile',
      'PingSource dynamo-profile-dynamographdeploymentcandidate-resync: nvidia.com/v1beta2 DynamoGraphDeploymentCandidate has no resync route in profile (the function answers NoResyncRoute)',
    ]);
  });

  it('with v1beta2 on, the profile function takes Candidate events (a Candidate wakes its Run) and the chart sends no Candidate resync (the Runs\' resync reads them)', () => {
    const wiring = chartFunctions({ lpxEnabled: false, dgdrV1Beta2Enabled: true }).find((f) => f.name === 'profile');
    expect(wiring?.sources.flatMap((s) => s.resources.map((r) => r.kind))).toContain('DynamoGraphDeploymentCandidate');
    expect(wiring?.pings.map((p) => p.name)).toEqual(['dynamo-profile-dynamographdeploymentrequest-resync', 'dynamo-profile-dynamographdeploymentrun-resync']);
    expect(findRoute(profile.routes, { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentCandidate' })).toBeDefined();
  });
});
