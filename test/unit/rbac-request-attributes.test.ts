/**
 * The RBAC tests' request recorder (test/support/rbac.ts) reads each request as the API server's
 * authorizer does. The rows are upstream's: kubernetes/kubernetes
 * staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo_test.go `TestGetAPIRequestInfo`
 * (success cases and error cases; the proxy-verb cases are left out, no function sends them),
 * with an empty namespace written as undefined.
 */
import { describe, expect, it } from 'vitest';
import { blockingOwnerRefs, requestAttributes, usedGrants } from '../support/rbac.js';

const rows: { method: string; url: string; verb: string; group: string; namespace?: string; resource: string }[] = [
  { method: 'GET', url: '/api/v1/namespaces', verb: 'list', group: '', resource: 'namespaces' },
  { method: 'GET', url: '/api/v1/namespaces/other', verb: 'get', group: '', namespace: 'other', resource: 'namespaces' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods', verb: 'list', group: '', namespace: 'other', resource: 'pods' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods/foo', verb: 'get', group: '', namespace: 'other', resource: 'pods' },
  { method: 'HEAD', url: '/api/v1/namespaces/other/pods/foo', verb: 'get', group: '', namespace: 'other', resource: 'pods' },
  { method: 'GET', url: '/api/v1/pods', verb: 'list', group: '', resource: 'pods' },
  { method: 'HEAD', url: '/api/v1/pods', verb: 'list', group: '', resource: 'pods' },
  { method: 'PATCH', url: '/api/v1/namespaces/new-namespace', verb: 'patch', group: '', namespace: 'new-namespace', resource: 'namespaces' },
  { method: 'GET', url: '/api/v1/watch/pods', verb: 'watch', group: '', resource: 'pods' },
  { method: 'GET', url: '/api/v1/pods?watch=true', verb: 'watch', group: '', resource: 'pods' },
  { method: 'GET', url: '/api/v1/pods?watch=false', verb: 'list', group: '', resource: 'pods' },
  { method: 'GET', url: '/api/v1/watch/namespaces/other/pods', verb: 'watch', group: '', namespace: 'other', resource: 'pods' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods?watch=1', verb: 'watch', group: '', namespace: 'other', resource: 'pods' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods?watch=0', verb: 'list', group: '', namespace: 'other', resource: 'pods' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods/foo/status', verb: 'get', group: '', namespace: 'other', resource: 'pods/status' },
  { method: 'GET', url: '/api/v1/namespaces/other/pods/foo/proxy/subpath', verb: 'get', group: '', namespace: 'other', resource: 'pods/proxy' },
  { method: 'PUT', url: '/api/v1/namespaces/other/finalize', verb: 'update', group: '', namespace: 'other', resource: 'namespaces/finalize' },
  { method: 'PUT', url: '/api/v1/namespaces/other/status', verb: 'update', group: '', namespace: 'other', resource: 'namespaces/status' },
  { method: 'PATCH', url: '/api/v1/namespaces/other/pods/foo', verb: 'patch', group: '', namespace: 'other', resource: 'pods' },
  { method: 'DELETE', url: '/api/v1/namespaces/other/pods/foo', verb: 'delete', group: '', namespace: 'other', resource: 'pods' },
  { method: 'POST', url: '/api/v1/namespaces/other/pods', verb: 'create', group: '', namespace: 'other', resource: 'pods' },
  { method: 'DELETE', url: '/api/v1/nodes', verb: 'deletecollection', group: '', resource: 'nodes' },
  { method: 'DELETE', url: '/api/v1/namespaces', verb: 'deletecollection', group: '', resource: 'namespaces' },
  { method: 'DELETE', url: '/api/v1/namespaces/other/pods', verb: 'deletecollection', group: '', namespace: 'other', resource: 'pods' },
  { method: 'DELETE', url: '/apis/extensions/v1/namespaces/other/pods', verb: 'deletecollection', group: 'extensions', namespace: 'other', resource: 'pods' },
  { method: 'POST', url: '/apis/extensions/v1/namespaces/other/pods', verb: 'create', group: 'extensions', namespace: 'other', resource: 'pods' },
  { method: 'POST', url: '/apis/extensions/v1beta3/namespaces/other/pods', verb: 'create', group: 'extensions', namespace: 'other', resource: 'pods' },
];

describe('requestAttributes: the authorizer attributes of a request (upstream requestinfo_test.go TestGetAPIRequestInfo)', () => {
  it.each(rows)('$method $url is $verb $resource', ({ method, url, verb, group, namespace, resource }) => {
    expect(requestAttributes(method, url)).toEqual({ verb, group, namespace, resource });
  });

  it.each([
    { name: 'no resource path', url: '/' },
    { name: 'just apiversion', url: '/api/version/' },
    { name: 'just prefix, group, version', url: '/apis/group/version/' },
    { name: 'bad prefix', url: '/badprefix/version/resource' },
    { name: 'missing api group', url: '/apis/version/resource' },
  ])('$name ($url) is a non-resource request (no grant)', ({ url }) => {
    expect(requestAttributes('GET', url)).toBeUndefined();
  });
});

describe('usedGrants', () => {
  it('counts a server-side apply answered 201 as create and patch (k8s.io/apiserver handlers/patch.go authorizes the create), a 200 as patch only, a 404 as used, and a 403 as nothing', () => {
    const used = usedGrants([
      { verb: 'patch', group: 'grove.io', resource: 'podcliquesets', namespace: 'a', status: 201 },
      { verb: 'patch', group: '', resource: 'services', namespace: 'a', status: 200 },
      { verb: 'delete', group: '', resource: 'configmaps', namespace: 'a', status: 404 },
      { verb: 'get', group: '', resource: 'secrets', namespace: 'a', status: 403 },
    ]);
    expect([...used].sort()).toEqual(['create grove.io/podcliquesets', 'delete core/configmaps', 'patch core/services', 'patch grove.io/podcliquesets']);
  });
});

describe('blockingOwnerRefs', () => {
  const owned = (blockOwnerDeletion: unknown) =>
    Buffer.from(JSON.stringify({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', metadata: { name: 'p', ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'd', uid: 'u', controller: true, blockOwnerDeletion }] } }));

  it.each([
    { name: 'a create with blockOwnerDeletion: true names its owner', verb: 'create', body: owned(true), want: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }] },
    { name: 'a server-side apply (patch) names it too', verb: 'patch', body: owned(true), want: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }] },
    { name: 'an update names it too', verb: 'update', body: owned(true), want: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }] },
    { name: 'blockOwnerDeletion false is not checked by the plugin', verb: 'create', body: owned(false), want: [] },
    { name: 'a delete body (DeleteOptions) is not an object write', verb: 'delete', body: owned(true), want: [] },
    { name: 'an empty body names nothing', verb: 'create', body: Buffer.alloc(0), want: [] },
    { name: 'a JSON Patch (an array) names nothing', verb: 'patch', body: Buffer.from('[{"op":"replace","path":"/spec/replicas","value":2}]'), want: [] },
  ])('$name (OwnerReferencesPermissionEnforcement checks blockOwnerDeletion: true refs of creates and updates)', ({ verb, body, want }) => {
    expect(blockingOwnerRefs(verb, body)).toEqual(want);
  });
});

describe('usedGrants with blockOwnerDeletion', () => {
  it('counts update on the owner\'s <resource>/finalizers for an accepted write that set blockOwnerDeletion, and nothing for a refused one (gc_admission.go authorizes update on the finalizers subresource of the owner)', () => {
    const used = usedGrants([
      { verb: 'patch', group: 'grove.io', resource: 'podcliquesets', namespace: 'a', status: 201, ownerFinalizers: [{ group: 'nvidia.com', resource: 'dynamographdeployments/finalizers' }] },
      { verb: 'create', group: 'scheduling.lpu.nvidia.com', resource: 'lpupipelinerequests', namespace: 'a', status: 403, ownerFinalizers: [{ group: 'grove.io', resource: 'podcliquesets/finalizers' }] },
    ]);
    expect([...used].sort()).toEqual(['create grove.io/podcliquesets', 'patch grove.io/podcliquesets', 'update nvidia.com/dynamographdeployments/finalizers']);
  });
});
