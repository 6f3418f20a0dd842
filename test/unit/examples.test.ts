/** The examples the README walks through render, and their PodCliqueSets satisfy the Grove CRD schema. */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderYaml } from '../../shared/cli/render.js';
import { GROVE_PCS_CRD, crdValidator } from '../support/grove-schema.js';
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
  });
});
