/**
 * Every DynamoGraphDeployment in ../shared/corpus/dgd/ renders, and every rendered
 * PodCliqueSet validates against Grove's Coherent CRD schema and Grove's webhook rules
 * (test/support/grove-validation.ts)
 * (../shared/crds/grove/grove.io_podcliquesets.coherent.yaml). Manifests that cannot render
 * are listed with the reason and the exact field error they must give.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { formatIssue, parseDgd } from '../../shared/api/index.js';
import { renderDgd } from '../../shared/domain/index.js';
import { GROVE_PCS_CRD, crdValidator } from '../support/grove-schema.js';
import { groveCreateIssues } from '../support/grove-validation.js';
import { sharedDir } from '../support/paths.js';

const corpusDir = resolve(sharedDir, 'corpus', 'dgd');

/** Documents that must fail, keyed `<file>#<document index>`, with the reason and the error. */
const EXPECTED_FAILURES: Readonly<Record<string, { reason: string; error: string }>> = {
  'trtllm-v1beta1-snapshot-restore-nogrove.yaml#0': {
    reason: 'nvidia.com/enable-grove: "false" selects the non-Grove component pathway, which this control plane does not render',
    error: 'metadata.annotations[nvidia.com/enable-grove]: Unsupported value: "false": only the Grove workload provider is rendered by this control plane',
  },
};

interface Case {
  readonly name: string;
  readonly object: unknown;
}

function corpusDgds(): Case[] {
  const cases: Case[] = [];
  for (const file of readdirSync(corpusDir).sort()) {
    parseAllDocuments(readFileSync(resolve(corpusDir, file), 'utf8')).forEach((document, index) => {
      const object = document.toJS() as { kind?: string } | null;
      if (object?.kind === 'DynamoGraphDeployment') cases.push({ name: `${file}#${index}`, object });
    });
  }
  return cases;
}

const cases = corpusDgds();

describe('corpus: real DGD manifests render into Grove objects', () => {
  it('finds the corpus (41 files, of which one is a DGDSA+HPA and one holds three DGDs)', () => {
    expect(cases.length).toBe(42);
  });

  it('the Grove schema check can fail: an unknown strategy and a clique without roleName are rejected', () => {
    const validate = crdValidator(GROVE_PCS_CRD);
    const bad = {
      apiVersion: 'grove.io/v1alpha1',
      kind: 'PodCliqueSet',
      metadata: { name: 'x' },
      spec: { replicas: 1, updateStrategy: { type: 'Bogus' }, template: { cliques: [{ name: 'a', spec: { replicas: 1, podSpec: { containers: [] } } }] } },
    };
    expect(validate(bad)).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath).sort()).toEqual(['/spec/template/cliques/0/spec', '/spec/updateStrategy/type']);
  });

  it.each(cases)('$name', ({ name, object }) => {
    const parsed = parseDgd(object);
    if (!parsed.ok) throw new Error(parsed.issues.map(formatIssue).join('\n'));
    const result = renderDgd(parsed.dgd);
    const expectedFailure = EXPECTED_FAILURES[name];
    if (expectedFailure !== undefined) {
      expect(result.ok ? [] : result.issues.map(formatIssue)).toEqual([expectedFailure.error]);
      return;
    }
    if (!result.ok) throw new Error(result.issues.map(formatIssue).join('\n'));
    const pcsList = result.objects.filter((o) => o.kind === 'PodCliqueSet');
    expect(pcsList).toHaveLength(1);
    const validate = crdValidator(GROVE_PCS_CRD);
    for (const pcs of pcsList) {
      const valid = validate(pcs);
      expect(valid ? [] : validate.errors).toEqual([]);
      // And Grove's webhook admits it (test/support/grove-validation.ts; kai-scheduler and volcano as a cluster may enable them).
      expect(groveCreateIssues(pcs, { enabledSchedulers: ['kai-scheduler', 'volcano'] })).toEqual([]);
    }
    const services = result.objects.filter((o) => o.kind === 'Service');
    expect(services).toHaveLength(parsed.dgd.spec.components.filter((c) => c.type !== 'lpx').length);
  });

  it('the corpus GMS and failover DGDs render them (no "not rendered" warning); what is left to the user is named', () => {
    const warningsOf = (file: string) => {
      const found = cases.find((c) => c.name === `${file}#0`);
      const parsed = parseDgd(found?.object);
      if (!parsed.ok) throw new Error(parsed.issues.map(formatIssue).join('\n'));
      const result = renderDgd(parsed.dgd);
      return result.ok ? result.warnings : result.issues.map(formatIssue);
    };
    expect(warningsOf('vllm-agg-failover-gms.yaml')).toEqual([]);
    expect(warningsOf('vllm-multinode-failover.yaml')).toEqual([
      'spec.components[1].experimental.failover ("VllmDecodeWorker"): requires experimental.gpuMemoryService; without it the failover engines do not share GPU memory',
      'spec.components[1].experimental.failover ("VllmDecodeWorker"): requires the annotation nvidia.com/dynamo-kube-discovery-mode: container, so that each engine registers on its own',
    ]);
  });
});
