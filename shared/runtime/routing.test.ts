import { describe, expect, it } from 'vitest';
import { apiGroupOf, findRoute, resyncRoutes } from './routing.js';
import { aRoute } from './test-support.js';

describe('apiGroupOf', () => {
  it.each([
    { name: 'custom group', apiVersion: 'nvidia.com/v1beta1', want: 'nvidia.com' },
    { name: 'named built-in group', apiVersion: 'apps/v1', want: 'apps' },
    { name: 'core group', apiVersion: 'v1', want: '' },
  ])('$name', ({ apiVersion, want }) => {
    expect(apiGroupOf(apiVersion)).toBe(want);
  });
});

describe('findRoute and resyncRoutes', () => {
  const dgd = aRoute({ listKeys: async () => [] });
  const service = aRoute({ apiVersion: 'v1', kind: 'Service' });
  const routes = [dgd, service];

  it.each([
    { name: 'same kind and version', key: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }, want: dgd },
    { name: 'another version of the group', key: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment' }, want: dgd },
    { name: 'core kind', key: { apiVersion: 'v1', kind: 'Service' }, want: service },
    { name: 'same kind, other group', key: { apiVersion: 'example.com/v1', kind: 'DynamoGraphDeployment' }, want: undefined },
    { name: 'unknown kind', key: { apiVersion: 'v1', kind: 'Pod' }, want: undefined },
  ])('findRoute: $name', ({ key, want }) => {
    expect(findRoute(routes, key)).toBe(want);
  });

  it.each([
    { name: 'no filter: every route with listKeys', filter: { kind: undefined, apiVersion: undefined }, want: [dgd] },
    { name: 'by kind', filter: { kind: 'DynamoGraphDeployment', apiVersion: undefined }, want: [dgd] },
    { name: 'kind without listKeys', filter: { kind: 'Service', apiVersion: undefined }, want: [] },
    { name: 'other group', filter: { kind: 'DynamoGraphDeployment', apiVersion: 'example.com/v1' }, want: [] },
  ])('resyncRoutes: $name', ({ filter, want }) => {
    expect(resyncRoutes(routes, filter)).toEqual(want);
  });
});
