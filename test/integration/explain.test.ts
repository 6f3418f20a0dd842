/**
 * `kubectl explain` prints what the API server publishes as OpenAPI v3
 * (`/openapi/v3/apis/<group>/<version>`), not the CRD files. This reads what the run's real
 * kube-apiserver publishes for our CRDs and finds a description on every field of every served
 * version of every kind (issue 9 part 5: "CRD field descriptions from the zod schemas (`kubectl
 * explain` works for every field)"), and the reference's words on the fields users look up.
 * The API server publishes a CRD's schema shortly after the CRD is established, so each document
 * is awaited with `eventually`.
 */
import { describe, expect, it } from 'vitest';

import { DYNAMO_GROUP, ownCrds } from '../../shared/api/index.js';
import { apiClient, type Obj } from '../support/api.js';
import { eventually } from '../support/eventually.js';
import { fields, undescribedFields, type SchemaNode } from '../support/schema-descriptions.js';

const api = apiClient();

interface PublishedSchema extends SchemaNode {
  readonly 'x-kubernetes-group-version-kind'?: readonly { group: string; version: string; kind: string }[];
}

/** Every served version of every kind we define: `{ version, kind, crdFields }` (the field paths of our CRD's schema). */
const served = Object.values(ownCrds()).flatMap((crd) => {
  const spec = crd['spec'] as { names: { kind: string }; versions: { name: string; served: boolean; schema: { openAPIV3Schema: SchemaNode } }[] };
  return spec.versions.filter((v) => v.served).map((v) => ({ version: v.name, kind: spec.names.kind, crdFields: fields(v.schema.openAPIV3Schema).map(({ path }) => path) }));
});

/** The published schema of `kind` in `nvidia.com/<version>`, once the API server publishes it. */
async function publishedSchema(version: string, kind: string): Promise<PublishedSchema> {
  return eventually(`the OpenAPI v3 schema of ${kind} ${DYNAMO_GROUP}/${version}`, async () => {
    const { status, body } = await api('GET', `/openapi/v3/apis/${DYNAMO_GROUP}/${version}`);
    if (status !== 200) return undefined;
    const schemas = ((body['components'] as Obj | undefined)?.['schemas'] ?? {}) as Record<string, PublishedSchema>;
    return Object.values(schemas).find((schema) => schema['x-kubernetes-group-version-kind']?.some((gvk) => gvk.group === DYNAMO_GROUP && gvk.version === version && gvk.kind === kind));
  }, 60_000, 250);
}

/** The published schema node at a `kubectl explain` path (`spec.hardware.totalGpus`). */
function at(schema: SchemaNode, path: string): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema;
  for (const name of path.split('.')) node = (node?.items ?? node)?.properties?.[name];
  return node;
}

describe('kubectl explain on the real API server', () => {
  it.each(served)('$kind $version: every field the API server publishes has a description', async ({ version, kind, crdFields }) => {
    const schema = await publishedSchema(version, kind);
    expect(schema.description ?? '').not.toBe('');
    // Published inline, field for field (no field hidden behind a $ref the walk would not follow).
    expect(fields(schema).map(({ path }) => path)).toEqual(expect.arrayContaining(crdFields));
    expect(undescribedFields(schema)).toEqual([]);
  });

  // The reference's own words (dgdr-reference "Spec reference" and "Status").
  it.each([
    { kind: 'DynamoGraphDeploymentRequest', version: 'v1beta1', path: 'spec.hardware.totalGpus', starts: 'GPU budget' },
    { kind: 'DynamoGraphDeploymentRequest', version: 'v1beta1', path: 'status.profilingJobName', starts: 'Name of the Kubernetes Job running the profiler.' },
    { kind: 'DynamoGraphDeploymentRequest', version: 'v1alpha1', path: 'spec.model', starts: 'Model to deploy' },
    { kind: 'DynamoGraphDeploymentRun', version: 'v1beta2', path: 'spec.workload.trace.source.persistentVolumeClaim.subPath', starts: 'One file relative to the claim root; directories and globs are not expanded.' },
    { kind: 'DynamoGraphDeploymentRun', version: 'v1beta2', path: 'status.phase', starts: 'A concise presentation state' },
  ])('$kind $version $path: "$starts..."', async ({ kind, version, path, starts }) => {
    const schema = await publishedSchema(version, kind);
    expect(at(schema, path)?.description?.startsWith(starts), at(schema, path)?.description).toBe(true);
  });
});
