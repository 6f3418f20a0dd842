/** The examples the quick start (docs/quick-start.md) walks through render, and their PodCliqueSets satisfy the Grove CRD schema. */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderYaml } from '../../shared/cli/render.js';
import { GROVE_PCS_CRD, crdValidator } from '../support/grove-schema.js';
import { groveCreateIssues } from '../support/grove-validation.js';
import { repoRoot } from '../support/paths.js';

const dir = resolve(repoRoot, 'examples');
// The DGDR examples (dgdr-*.yaml) are requests, not graphs: `profile --local` and dev take them.
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.startsWith('dgdr-')).sort();

describe('examples/', () => {
  it('ships the four documented DGD examples and the DGDR examples', () => {
    expect(files).toEqual(['sglang-multinode.yaml', 'trtllm-planner.yaml', 'vllm-aggregated.yaml', 'vllm-disaggregated-coherent.yaml']);
    expect(readdirSync(dir).filter((f) => f.startsWith('dgdr-'))).toEqual(['dgdr-qwen3-vllm.yaml']);
  });

  it.each(files)('%s renders without errors or warnings into a valid PodCliqueSet', (file) => {
    const out = renderYaml(readFileSync(resolve(dir, file), 'utf8'), file, { namespace: 'default', lpxEnabled: false, terminationDelay: '15m' });
    expect([out.errors, out.notes]).toEqual([[], []]);
    const validate = crdValidator(GROVE_PCS_CRD);
    const pcs = out.objects.filter((o) => o.kind === 'PodCliqueSet');
    expect(pcs).toHaveLength(1);
    expect(validate(pcs[0]) ? [] : validate.errors).toEqual([]);
    // Grove's webhook admits it too (test/support/grove-validation.ts).
    expect(groveCreateIssues(pcs[0] as Record<string, unknown>)).toEqual([]);
  });
});

describe('docs/quick-start.md worked example', () => {
  it('shows the worker hash and the worker defaults that render prints for vllm-disaggregated-coherent.yaml', () => {
    const page = readFileSync(resolve(repoRoot, 'docs', 'quick-start.md'), 'utf8');
    const out = renderYaml(readFileSync(resolve(dir, 'vllm-disaggregated-coherent.yaml'), 'utf8'), 'f', { namespace: 'default', lpxEnabled: false, terminationDelay: '15m' });
    const pcs = out.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; labels: Record<string, string>; spec: { podSpec: { containers: { livenessProbe?: unknown }[] } } }[] } } };
    const decode = pcs.spec.template.cliques.find((c) => c.name === 'decode');
    const hash = decode?.labels['nvidia.com/dynamo-worker-hash'] ?? 'missing';
    expect(page).toContain(`nvidia.com/dynamo-worker-hash: ${hash}`);
    expect(decode?.spec.podSpec.containers[0]?.livenessProbe).toEqual({ httpGet: { path: '/live', port: 'system' }, periodSeconds: 5, timeoutSeconds: 4, failureThreshold: 1 });
    expect(page).toContain('livenessProbe:  {httpGet: {path: /live, port: system}, periodSeconds: 5, timeoutSeconds: 4, failureThreshold: 1}');
  });
});

describe('examples the docs\' dev sessions apply (docs/dgdsa.md, docs/v1beta2.md)', () => {
  it('examples/dgdsa/vllm-aggregated-autoscale.yaml renders without errors into a valid PodCliqueSet, its worker behind a scaling adapter', () => {
    const text = readFileSync(resolve(dir, 'dgdsa', 'vllm-aggregated-autoscale.yaml'), 'utf8');
    const out = renderYaml(text, 'f', { namespace: 'default', lpxEnabled: false, terminationDelay: '15m' });
    expect([out.errors, out.notes]).toEqual([[], []]);
    const pcs = out.objects.filter((o) => o.kind === 'PodCliqueSet');
    expect(pcs).toHaveLength(1);
    expect(groveCreateIssues(pcs[0] as Record<string, unknown>)).toEqual([]);
    expect(text).toMatch(/- name: worker\n\s+type: worker\n\s+replicas: 2\n\s+scalingAdapter: \{\}/);
  });

  it('examples/dgdr/qwen3-trace-replay.yaml reads the claim examples/dgdr/request-traces-pvc.yaml creates, in the same namespace', () => {
    const request = readFileSync(resolve(dir, 'dgdr', 'qwen3-trace-replay.yaml'), 'utf8');
    const claim = readFileSync(resolve(dir, 'dgdr', 'request-traces-pvc.yaml'), 'utf8');
    expect(request).toContain('apiVersion: nvidia.com/v1beta2');
    expect(request).toMatch(/claimName: request-traces\n/);
    expect(claim).toMatch(/kind: PersistentVolumeClaim\nmetadata:\n {2}name: request-traces\n {2}namespace: default\n/);
    expect(request).toMatch(/metadata:\n {2}name: qwen3-trace-replay\n {2}namespace: default\n/);
  });
});
