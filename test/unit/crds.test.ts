/**
 * Our CRDs follow the Kubernetes conventions the issue asks for, and the committed files are
 * exactly what `dynamo-fn crds` generates (one source: the zod schemas).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRD_CATEGORY, ownCrds } from '../../shared/api/index.js';
import { crdFileText } from '../../shared/cli/crds.js';
import { repoRoot } from '../support/paths.js';
import { undescribedFields, type SchemaNode } from '../support/schema-descriptions.js';

const CRD_DIR = join(repoRoot, 'infra', 'chart', 'files', 'crds');

interface CrdVersion {
  readonly name: string;
  readonly storage?: boolean;
  readonly additionalPrinterColumns?: readonly { name: string; jsonPath: string }[];
  readonly schema: { openAPIV3Schema: SchemaNode };
}
interface Crd {
  readonly spec: { names: { categories?: string[]; kind: string }; versions: CrdVersion[] };
}

const crds = Object.entries(ownCrds()).map(([file, crd]) => ({ file, crd: crd as unknown as Crd }));

describe('our CRDs', () => {
  it('the committed infra/chart/files/crds/ files equal `dynamo-fn crds` output, file for file', () => {
    const committed = readdirSync(CRD_DIR).sort();
    expect(committed).toEqual(crds.map(({ file }) => file).sort());
    for (const { file, crd } of crds) {
      expect(readFileSync(join(CRD_DIR, file), 'utf8'), `${file} differs: run npm run crds`).toBe(crdFileText(crd as unknown as Record<string, unknown>));
    }
  });

  it('have no second copy: infra/crds/ is gone (the chart is the one source of install manifests)', () => {
    expect(existsSync(join(repoRoot, 'infra', 'crds'))).toBe(false);
  });

  // kubectl explain reads the preferred version (and `--api-version` any other), so every served
  // version of every kind is held to it; a new version or kind gets its descriptions in
  // shared/api/descriptions.ts (issue 9 part 5: "`kubectl explain` works for every field").
  const versions = crds.flatMap(({ file, crd }) => crd.spec.versions.map((version) => ({ file, kind: crd.spec.names.kind, version })));
  it.each(versions)('$file $version.name: every field has a description, so `kubectl explain` works for every field', ({ kind, version }) => {
    expect(undescribedFields(version.schema.openAPIV3Schema), `${kind} ${version.name}`).toEqual([]);
  });

  it.each(versions)('$file $version.name: the kind itself has a description (`kubectl explain <kind>`)', ({ version }) => {
    expect(version.schema.openAPIV3Schema.description ?? '').not.toBe('');
  });

  it.each(crds)(`$file: is in the "${CRD_CATEGORY}" category, so \`kubectl get dynamo\` lists it`, ({ crd }) => {
    expect(crd.spec.names.categories).toContain(CRD_CATEGORY);
  });

  it.each(crds)('$file: every served version has printer columns, the age last (kubectl get convention; DGDSA keeps upstream\'s upper-case names)', ({ crd }) => {
    for (const version of crd.spec.versions) {
      const columns = version.additionalPrinterColumns ?? [];
      expect(columns.length, `${crd.spec.names.kind} ${version.name}`).toBeGreaterThan(1);
      expect(columns.at(-1)?.jsonPath).toBe('.metadata.creationTimestamp');
      expect(columns.at(-1)?.name.toLowerCase()).toBe('age');
    }
  });

  // The values are the reference's and upstream's, written here, not read from our generator.
  it('DynamoGraphDeploymentCandidate: reference "spec: # Immutable, opaque DGD spec; preserved even when validation fails" — every served version keeps unknown spec fields and carries upstream\'s CEL rule (upstream-notes/profiler.md §4: `!has(oldSelf.spec) || self.spec == oldSelf.spec`, "spec is immutable")', () => {
    const candidate = crds.find(({ crd }) => crd.spec.names.kind === 'DynamoGraphDeploymentCandidate');
    expect(candidate?.file).toBe('nvidia.com_dynamographdeploymentcandidates.yaml');
    for (const version of candidate?.crd.spec.versions ?? []) {
      const schema = version.schema.openAPIV3Schema as unknown as { 'x-kubernetes-validations'?: unknown; properties: { spec: Record<string, unknown> } };
      expect(schema['x-kubernetes-validations'], version.name).toEqual([{ rule: '!has(oldSelf.spec) || self.spec == oldSelf.spec', message: 'spec is immutable' }]);
      expect(schema.properties.spec['x-kubernetes-preserve-unknown-fields'], version.name).toBe(true);
    }
    expect(candidate?.crd.spec.versions.map((v) => v.name)).toEqual(['v1beta2']);
  });
});

/** The value of `properties.<a>.properties.<b>...` in a version's schema. */
function schemaAt(version: CrdVersion, path: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = version.schema.openAPIV3Schema;
  for (const key of path) node = (node as { properties?: Record<string, SchemaNode> } | undefined)?.properties?.[key];
  return node;
}
const crdOf = (kind: string): Crd => {
  const found = crds.find(({ crd }) => crd.spec.names.kind === kind);
  if (found === undefined) throw new Error(`no CRD for ${kind}`);
  return found.crd;
};
const servedVersion = (kind: string, name: string): CrdVersion => {
  const version = crdOf(kind).spec.versions.find((v) => v.name === name);
  if (version === undefined) throw new Error(`no ${kind} ${name}`);
  return version;
};

describe('short names and phase enums pinned to the reference (not only to the generator)', () => {
  it.each([
    { kind: 'DynamoGraphDeployment', want: ['dgd'], source: 'dgd-reference "Inspect a DGD": "List graph deployments (short name: dgd)"' },
    { kind: 'DynamoGraphDeploymentRequest', want: ['dgdr'], source: 'dgdr-reference "Monitoring": `kubectl get dgdr my-model`' },
    { kind: 'LPXGraphDeployment', want: ['lpxgd'], source: 'upstream-notes/dgd.md §5 "shortName lpxgd"' },
  ])('$kind: shortNames $want ($source)', ({ kind, want }) => {
    expect((crdOf(kind).spec.names as { shortNames?: string[] }).shortNames).toEqual(want);
  });

  it('DGD v1beta1 status.state is one of "initializing|pending|successful|failed" (upstream-notes/dgd.md §2.4; the reference is silent)', () => {
    expect((schemaAt(servedVersion('DynamoGraphDeployment', 'v1beta1'), ['status', 'state']) as { enum?: string[] }).enum).toEqual(['initializing', 'pending', 'successful', 'failed']);
  });

  it('DGD v1beta1 status.checkpoints is typed: "Checkpoint information for a single component, keyed by component name in status.checkpoints" (dgd-reference "ComponentCheckpointStatus"), with checkpointName, checkpointID, identityHash and ready', () => {
    const checkpoints = schemaAt(servedVersion('DynamoGraphDeployment', 'v1beta1'), ['status', 'checkpoints']) as { type?: string; additionalProperties?: { properties?: Record<string, { type?: string }> } };
    expect(checkpoints.type).toBe('object');
    expect(Object.fromEntries(Object.entries(checkpoints.additionalProperties?.properties ?? {}).map(([k, v]) => [k, v.type]))).toEqual({ checkpointName: 'string', checkpointID: 'string', identityHash: 'string', ready: 'boolean' });
  });

  it('DGDR v1beta1 status.phase is the reference\'s lifecycle: Pending, Profiling, Ready, Deploying, Deployed, Failed (dgdr-reference "Lifecycle")', () => {
    expect((schemaAt(servedVersion('DynamoGraphDeploymentRequest', 'v1beta1'), ['status', 'phase']) as { enum?: string[] }).enum).toEqual(['Pending', 'Profiling', 'Ready', 'Deploying', 'Deployed', 'Failed']);
  });

  it('DGDR v1beta1 status.profilingPhase is the reference\'s sub-phases: "Initializing, SweepingPrefill, SweepingDecode, SelectingConfig, BuildingCurves, GeneratingDGD, Done" (dgdr-reference "Lifecycle")', () => {
    expect((schemaAt(servedVersion('DynamoGraphDeploymentRequest', 'v1beta1'), ['status', 'profilingPhase']) as { enum?: string[] }).enum).toEqual(['Initializing', 'SweepingPrefill', 'SweepingDecode', 'SelectingConfig', 'BuildingCurves', 'GeneratingDGD', 'Done']);
  });
});
