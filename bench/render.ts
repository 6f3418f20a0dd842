/**
 * Render benchmark (not a test): `renderDgd` on DGDs of 5 to 25 components (the most a DGD may have) (a quarter each
 * prefill, decode, aggregated worker and multinode decode, plus a frontend), beside copying
 * the same DGD once (`structuredClone`, the least any renderer must do), in one run.
 * Aims (issue 17 item 4): a 25-component DGD in at most 3x the `structuredClone` of the same DGD,
 * and linear in components: the time per component at 25 components at most 1.5x that at 5
 * (the slope and the fit's r² are printed too). Times are CPU time in alternating batches (bench/table.ts
 * `timeSyncPair`), so a shared machine's load does not decide the ratio.
 *
 * Usage: npm run bench:render [-- --iterations N]
 * @module
 */
import { parseArgs } from 'node:util';
import { parseDgd, type Dgd } from '../shared/api/index.js';
import { renderDgd } from '../shared/domain/index.js';
import { linearFit, renderTable, timeSyncPair, type BenchRow } from './table.js';

type Obj = Record<string, unknown>;

function workerPod(args: string[]): Obj {
  return {
    spec: {
      containers: [
        {
          name: 'main',
          image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1',
          command: ['python3', '-m', 'dynamo.vllm'],
          args,
          env: Array.from({ length: 8 }, (_, i) => ({ name: `DYN_SETTING_${i}`, value: `value-${i}` })),
          resources: { limits: { 'nvidia.com/gpu': '1' }, requests: { cpu: '8', memory: '64Gi' } },
        },
      ],
    },
  };
}

/** A Coherent vLLM DGD with `components` components (>= 5): a frontend and four worker kinds in turn. */
export function aDgdOf(components: number): Dgd {
  const kinds = ['prefill', 'decode', 'worker', 'decode-mn'] as const;
  const list: Obj[] = [{ name: 'Frontend', type: 'frontend', replicas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1' }] } } }];
  for (let index = 0; list.length < components; index += 1) {
    const kind = kinds[index % kinds.length] ?? 'worker';
    const name = `${kind}-${index}`;
    const type = kind === 'decode-mn' ? 'decode' : kind;
    list.push({
      name,
      type,
      replicas: 4,
      podTemplate: workerPod(['--model', 'Qwen/Qwen3-0.6B', '--tensor-parallel-size', '1']),
      ...(kind === 'decode-mn' ? { multinode: { nodeCount: 2 } } : {}),
      providerOverride: { apiVersion: 'grove.io/v1alpha1', value: kind === 'decode-mn' ? { minAvailable: 1 } : { spec: { minAvailable: 1 }, rollingUpdate: { maxUnavailable: 1 } } },
    });
  }
  const parsed = parseDgd({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'bench', namespace: 'bench', uid: '00000000-0000-0000-0000-000000000001', annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } },
    spec: { backendFramework: 'vllm', components: list },
  });
  if (!parsed.ok) throw new Error(`bench DGD does not parse: ${JSON.stringify(parsed.issues)}`);
  return parsed.dgd;
}

export function runRenderBench(iterations: number): string {
  // 25 is the most components a DGD may have (the CRD's maxItems).
  const sizes = [5, 10, 15, 20, 25];
  const rows: BenchRow[] = [];
  const points: { x: number; y: number }[] = [];
  const perComponent = new Map<number, number>();
  for (const size of sizes) {
    const dgd = aDgdOf(size);
    const check = renderDgd(dgd);
    if (!check.ok) throw new Error(`bench DGD of ${size} does not render: ${JSON.stringify(check.issues)}`);
    const { measuredMs: ms, baselineMs: copyMs } = timeSyncPair(() => renderDgd(dgd), () => structuredClone(dgd), { iterations, warmup: Math.min(200, iterations), batches: 15 });
    points.push({ x: size, y: ms });
    perComponent.set(size, ms / size);
    rows.push({
      name: `renderDgd, ${size} components`,
      value: ms,
      unit: 'ms',
      baseline: { name: 'structuredClone of the DGD', value: copyMs },
      ...(size === 25 ? { aim: { text: '<= 3x structuredClone', isMet: ms <= 3 * copyMs } } : {}),
    });
  }
  const at5 = perComponent.get(5) ?? 0;
  const at25 = perComponent.get(25) ?? 0;
  rows.push({ name: 'renderDgd per component, 5 components', value: at5, unit: 'ms' });
  rows.push({
    name: 'renderDgd per component, 25 components',
    value: at25,
    unit: 'ms',
    baseline: { name: 'per component at 5', value: at5 },
    aim: { text: 'linear: <= 1.5x', isMet: at25 <= 1.5 * at5 },
  });
  const fit = linearFit(points);
  rows.push({ name: `slope (per component), r² ${fit.r2.toFixed(3)}`, value: fit.slope, unit: 'ms' });
  return renderTable('Render (renderDgd beside structuredClone in alternating batches, CPU time, median of 15 batches)', rows);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { iterations: { type: 'string', default: '2000' } } });
  process.stdout.write(runRenderBench(Number(values.iterations)));
}
