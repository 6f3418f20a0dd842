/**
 * Our generated CRDs against upstream's shapes: the DGDSA CRD as upstream serves it
 * (../shared/crds/dynamo/nvidia.com_dynamographdeploymentscalingadapters.yaml: names, versions,
 * storage, the scale subresource an HPA drives, printer columns, spec/status fields), and the DGD
 * CRD serving v1alpha1 and v1beta1 (storage) through the conversion webhook (upstream-notes/dgd.md §1-§2).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sharedDir } from '../../test/support/paths.js';
import { dynamoGraphDeploymentCrd, dynamoGraphDeploymentScalingAdapterCrd, ownCrds } from './crd.js';

type Obj = Record<string, unknown>;

/** The validating shape of a structural schema: types, required, bounds, property names. */
function shape(node: unknown): unknown {
  if (typeof node !== 'object' || node === null) return node;
  const schema = node as Obj;
  const out: Obj = {};
  for (const key of ['type', 'required', 'minimum', 'minLength']) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema['properties'] !== undefined) out['properties'] = Object.fromEntries(Object.entries(schema['properties'] as Obj).map(([k, v]) => [k, shape(v)]));
  return out;
}

function versionShape(version: Obj): Obj {
  return {
    name: version['name'],
    served: version['served'],
    storage: version['storage'],
    subresources: version['subresources'],
    columns: (version['additionalPrinterColumns'] as Obj[]).map((c) => ({ name: c['name'], type: c['type'], jsonPath: c['jsonPath'] })),
    schema: shape((version['schema'] as { openAPIV3Schema: Obj }).openAPIV3Schema),
  };
}

describe('DGDSA CRD', () => {
  const upstream = parse(readFileSync(resolve(sharedDir, 'crds', 'dynamo', 'nvidia.com_dynamographdeploymentscalingadapters.yaml'), 'utf8')) as { spec: Obj & { versions: Obj[] } };
  const ours = dynamoGraphDeploymentScalingAdapterCrd() as { spec: Obj & { versions: Obj[] } };

  it('has upstream names, group and scope (short name dgdsa), plus our category dynamo', () => {
    const { categories, ...names } = ours.spec['names'] as Record<string, unknown>;
    expect({ group: ours.spec['group'], names, scope: ours.spec['scope'] }).toEqual({ group: upstream.spec['group'], names: upstream.spec['names'], scope: upstream.spec['scope'] });
    expect(categories).toEqual(['dynamo']);
  });

  it('serves v1alpha1 and v1beta1 (storage) with the scale subresource, columns and fields upstream has', () => {
    // Upstream marks spec.replicas and status.replicas `format: int32`; ours bounds them instead.
    expect(ours.spec.versions.map(versionShape)).toEqual(upstream.spec.versions.map(versionShape));
  });

  it('needs no conversion webhook: both versions share one schema', () => {
    expect(ours.spec['conversion']).toBeUndefined();
    expect(upstream.spec['conversion']).toBeUndefined();
  });
});

describe('DGD CRD', () => {
  const crd = dynamoGraphDeploymentCrd() as { spec: { conversion: Obj; versions: Obj[] } };

  it('serves v1beta1 (storage) and v1alpha1, converted by the admission function /convert over its Service', () => {
    expect(crd.spec.versions.map((v) => [v['name'], v['served'], v['storage']])).toEqual([
      ['v1beta1', true, true],
      ['v1alpha1', true, false],
    ]);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'dynamo-system', name: 'dynamo-admission', path: '/convert', port: 443 } } },
    });
  });

  it('keeps unknown v1alpha1 fields (preserved, so the conversion sees everything the user wrote)', () => {
    const alpha = crd.spec.versions[1] as { schema: { openAPIV3Schema: { properties: { spec: Obj } } } };
    expect(alpha.schema.openAPIV3Schema.properties.spec['x-kubernetes-preserve-unknown-fields']).toBe(true);
  });

  it('is written to infra/chart/files/crds as generated', () => {
    for (const [file, generated] of Object.entries(ownCrds())) {
      const written = parse(readFileSync(resolve(import.meta.dirname, '..', '..', 'infra', 'chart', 'files', 'crds', file), 'utf8')) as unknown;
      expect(written, `infra/chart/files/crds/${file} is stale: run dynamo-fn crds`).toEqual(generated);
    }
  });
});
