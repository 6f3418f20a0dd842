/**
 * The Coherent capability check against Grove's real CRDs (../shared/crds/grove): the released
 * CRD without Coherent, and PR #649's with it (README: "enum is [Coherent, RollingRecreate,
 * OnDelete]").
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sharedDir } from '../../../test/support/paths.js';
import { aDgd } from '../../../test/support/builders.js';
import { decideDgd } from './reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG } from './render.js';
import { isGroveCoherentSupported } from './grove-coherent.js';

const crd = (file: string): unknown => parse(readFileSync(resolve(sharedDir, 'crds', 'grove', file), 'utf8'));

describe('Coherent capability check: "The served v1alpha1 schema must list "Coherent" in the spec.updateStrategy.type enum" (upstream-notes/dgd.md §3.1)', () => {
  it.each([
    { file: 'grove.io_podcliquesets.yaml', want: false },
    { file: 'grove.io_podcliquesets.coherent.yaml', want: true },
  ])('$file -> $want', ({ file, want }) => {
    expect(isGroveCoherentSupported(crd(file))).toBe(want);
  });

  it('a missing CRD, or a v1alpha1 that is not served, does not support Coherent', () => {
    const coherent = crd('grove.io_podcliquesets.coherent.yaml') as { spec: { versions: { name: string; served: boolean }[] } };
    const unserved = { ...coherent, spec: { ...coherent.spec, versions: coherent.spec.versions.map((v) => ({ ...v, served: false })) } };
    expect([isGroveCoherentSupported(undefined), isGroveCoherentSupported(unserved)]).toEqual([false, false]);
  });

  it('a DGD selecting Coherent on a Grove without it writes no PodCliqueSet (its Services still are, as upstream reconciles stable resources first) and reports upstream\'s error: "Grove Coherent updates require Grove v0.1.0-alpha.14 or later and its matching CRDs"', () => {
    const dgd = aDgd({ metadata: { annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' }, generation: 1 } });
    const empty = { PodCliqueSet: new Map(), Service: new Map(), PodClique: new Map(), PodCliqueScalingGroup: new Map() };
    const refused = decideDgd({ parent: dgd, children: empty, groveCoherentSupported: false }, DEFAULT_RENDER_CONFIG, new Date('2026-12-01T00:00:00Z'));
    expect(refused.apply.filter((o) => o.kind === 'PodCliqueSet')).toEqual([]);
    expect(refused.apply.filter((o) => o.kind === 'Service').map((o) => o.metadata.name)).toEqual(['my-graph-frontend', 'my-graph-worker']);
    expect([refused.scale, refused.status.state]).toEqual([[], 'failed']);
    expect(refused.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'False', reason: 'failed_to_reconcile_the_resources', message: 'Grove Coherent updates require Grove v0.1.0-alpha.14 or later and its matching CRDs' });
    const supported = decideDgd({ parent: dgd, children: empty, groveCoherentSupported: true }, DEFAULT_RENDER_CONFIG, new Date('2026-12-01T00:00:00Z'));
    expect(supported.apply.some((o) => o.kind === 'PodCliqueSet')).toBe(true);
  });
});
