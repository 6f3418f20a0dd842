import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aRun } from '../../../test/support/v1beta2-builders.js';
import { sharedDir } from '../../../test/support/paths.js';
import { compileAisimulateInputSchema } from './aisimulate-input.js';
import { validateV1Beta2Spec } from './admission.js';

const validateInput = compileAisimulateInputSchema(JSON.parse(readFileSync(resolve(sharedDir, 'fixtures', 'aisimulate', 'aisimulate-0.13.0.dev85-recommend-input.schema.json'), 'utf8')) as Record<string, unknown>);
const trace = { trace: { format: 'Dynamo' as const, source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'a.jsonl.gz' } } } };

describe('v1beta2 request and Run admission', () => {
  const rows = [
    {
      name: 'a bundled SKU with a trace is valid',
      reason: 'reference "v1beta2 hardware SKU"',
      spec: { workload: trace },
      want: { issues: [], warnings: [] },
    },
    {
      name: 'an SKU missing from the bundled catalog is passed through with a warning when budget and numGpusPerNode are set',
      reason: 'reference "v1beta2 hardware SKU": "It warns when the bundled catalog does not contain that identifier, but does not reject it"',
      spec: { hardware: { gpu: { sku: 'future_accelerator', budget: 8, numGpusPerNode: 8 } }, workload: trace },
      want: { issues: [], warnings: ['spec.hardware.gpu.sku: "future_accelerator" is not in the bundled AISimulate system catalog (a100_pcie, a100_sxm, a30, b200_sxm, b300_sxm, b60, gb200, gb300, h100_pcie, h100_sxm, h200_sxm, l4, l40s, rtx_pro_6000_server); it is passed to AISimulate unchanged'] },
    },
    {
      name: 'an unknown SKU without budget and numGpusPerNode is refused',
      reason: 'reference "v1beta2 hardware SKU": "An unknown SKU must provide both budget and numGpusPerNode"',
      spec: { hardware: { gpu: { sku: 'future_accelerator' } }, workload: trace },
      want: {
        issues: [
          { path: 'spec.hardware.gpu.budget', type: 'Required', detail: 'an SKU missing from the bundled AISimulate catalog ("future_accelerator") needs an explicit budget' },
          { path: 'spec.hardware.gpu.numGpusPerNode', type: 'Required', detail: 'an SKU missing from the bundled AISimulate catalog ("future_accelerator") needs an explicit numGpusPerNode' },
        ],
        warnings: [expect.stringContaining('future_accelerator')],
      },
    },
    {
      name: 'trace and static together are refused',
      reason: 'reference "Replay a recorded trace": "the two are mutually exclusive"',
      spec: { workload: { ...trace, static: { isl: 4000, osl: 1000 } } },
      want: { issues: [{ path: 'spec.workload.static', type: 'Forbidden', detail: 'may not be set together with spec.workload.trace; set it to null to switch to a trace' }], warnings: [] },
    },
    {
      name: 'a v1alpha1 DGD override is refused',
      reason: 'reference "v1beta2 DGD Overrides": "Other DGD API versions are not accepted here"',
      spec: { workload: trace, overrides: { dgd: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment' } } },
      want: { issues: [{ path: 'spec.overrides.dgd.apiVersion', type: 'NotSupported', value: 'nvidia.com/v1alpha1', detail: 'supported values: "nvidia.com/v1beta1"' }], warnings: [] },
    },
    {
      name: 'reference "Request and Run admission validate the merged input against the bundled AISimulate input schema": hardware: {} with a static workload and no overrides leaves the merged input without engine.hardware and is refused',
      reason: 'reference "v1beta2 hardware SKU": "supply both the upstream hardware selector and candidate GPU budget yourself"',
      spec: { hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } },
      want: { issues: [{ path: 'spec.aisim.inputOverrides.engine.hardware', type: 'Required', detail: 'must be specified (AISimulate input schema)' }], warnings: [] },
    },
    {
      name: 'reference "admission does not validate it against the AISimulate schema yet" (trace section, the more specific rule): a trace request whose merged input the bundled schema would refuse is admitted',
      reason: 'reference "Replay a recorded trace": "AISimulate validates the resulting input when the Run\'s Job starts, and an input it rejects fails the Run; admission does not validate it against the AISimulate schema yet" (the reference\'s own override example: traffic.source: null)',
      spec: { hardware: {}, workload: trace, aisim: { inputOverrides: { traffic: { source: null } } } },
      want: { issues: [], warnings: [] },
    },
    {
      name: 'reference "When neither field is set ... the profiler uses its default maximum-throughput selection": a static workload without concurrency or requestRate is admitted',
      reason: 'dgdr-reference "Spec reference" workload.concurrency/requestRate; the v1beta2 examples future-accelerator, hardware: {} and custom-worker-image set no workload',
      spec: { workload: { static: { isl: 4000, osl: 1000 } } },
      want: { issues: [], warnings: [] },
    },
    {
      name: 'reference "concurrency ... Mutually exclusive with requestRate": a static workload with both load targets is refused',
      reason: 'dgdr-reference "Spec reference" workload.concurrency and requestRate; upstream v1beta2 StaticWorkload (upstream-notes/dgdr.md §5)',
      spec: { workload: { static: { isl: 4000, osl: 1000, concurrency: 8, requestRate: 2 } } },
      want: { issues: [{ path: 'spec.workload.static.requestRate', type: 'Forbidden', detail: 'may not be set together with spec.workload.static.concurrency: they are mutually exclusive' }], warnings: [] },
    },
  ];
  it.each(rows)('$name', ({ spec, want }) => {
    expect(validateV1Beta2Spec(aRun({ spec }).spec, validateInput)).toEqual(want);
  });
});
