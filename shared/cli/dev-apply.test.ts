/**
 * `dynamo-fn dev --apply` checks each DGD with our admission before anything starts
 * (admitForApply: the defaulting webhook's patch, then validation, as the API server would call
 * them), so a DGD admission denies fails at once instead of after the control plane boots.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ApplyObject } from '../kube/index.js';
import { admitForApply } from './dev.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => ({ ...(parse(readFileSync(path.join(root, file), 'utf8')) as ApplyObject) });

describe('admitForApply', () => {
  it('denies what the validating webhook denies (an unsupported nvidia.com/grove-update-strategy), with its message', () => {
    const dgd = read('test/fixtures/dev-apply-denied.yaml');
    const { denial } = admitForApply({ ...dgd, metadata: { ...dgd.metadata, namespace: 'default' } }, { lpxEnabled: false });
    expect(denial).toMatch(/^DynamoGraphDeployment\.nvidia\.com "denied" is invalid: .*nvidia\.com\/grove-update-strategy/);
  });

  it('admits the README example', () => {
    expect(admitForApply(read('examples/vllm-aggregated.yaml'), { lpxEnabled: false }).denial).toBeUndefined();
  });
});
