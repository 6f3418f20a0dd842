/**
 * The harness points only our CRDs' conversion webhooks at the run's `/convert`: the CRDs it
 * installs are read from their files as shipped (ours from infra/chart/files/crds/, Knative's
 * from ../shared/crds/knative/), and a CRD that is not ours keeps its own webhook Service, since
 * our `/convert` refuses every kind it does not convert (functions/admission/convert.ts).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { withConversionWebhook } from '../harness/apiserver.js';
import { loadCrds, type LoadedCrd } from '../harness/crds.js';
import { repoRoot, sharedDir } from '../support/paths.js';

const WEBHOOK = { url: 'https://127.0.0.1:8443/convert', caBundle: 'Q0E=' };

async function crd(file: string): Promise<LoadedCrd> {
  const [loaded] = await loadCrds([file]);
  if (loaded === undefined) throw new Error(`no CRD in ${file}`);
  return loaded;
}

const ours = (name: string) => path.join(repoRoot, 'infra', 'chart', 'files', 'crds', name);
const conversionOf = (loaded: LoadedCrd) => loaded.crd.spec['conversion'];

describe('withConversionWebhook', () => {
  it.each([
    { name: 'the DGD CRD', file: ours('nvidia.com_dynamographdeployments.yaml') },
    { name: 'the DGDR CRD', file: ours('nvidia.com_dynamographdeploymentrequests.yaml') },
  ])('points $name (ours, converted by our admission Service) at the given URL and CA', async ({ file }) => {
    const loaded = await crd(file);
    expect(conversionOf(withConversionWebhook(loaded, WEBHOOK))).toEqual({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: WEBHOOK } });
    // A copy: the CRD as loaded is not changed.
    expect(conversionOf(loaded)).toEqual({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'dynamo-system', name: 'dynamo-admission', path: '/convert', port: 443 } } } });
  });

  it("leaves Knative's PingSource CRD with its own webhook Service", async () => {
    const loaded = await crd(path.join(sharedDir, 'crds', 'knative', 'sources.knative.dev_pingsource.yaml'));
    expect(withConversionWebhook(loaded, WEBHOOK)).toBe(loaded);
  });

  it('leaves an nvidia.com CRD converted by another Service (the upstream operator\'s) unchanged', async () => {
    const loaded = await crd(ours('nvidia.com_dynamographdeployments.yaml'));
    const upstream: LoadedCrd = { file: loaded.file, crd: { ...loaded.crd, spec: { ...loaded.crd.spec, conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'dynamo-system', name: 'dynamo-operator-webhook-service', path: '/convert' } } } } } } };
    expect(withConversionWebhook(upstream, WEBHOOK)).toBe(upstream);
  });

  it('leaves every CRD unchanged without a webhook', async () => {
    const loaded = await crd(ours('nvidia.com_dynamographdeployments.yaml'));
    expect(withConversionWebhook(loaded, undefined)).toBe(loaded);
  });
});
