/**
 * Simulated GPU nodes for the test and dev control plane: Node objects as GPU Feature Discovery
 * labels them, with `nvidia.com/gpu` capacity, annotated so kwok keeps them Ready
 * (`kwok.x-k8s.io/node: fake`). Pods bound to them move through the harness's kwok Stages.
 *
 * A fleet is written `<nodes>x<gpu.product>:<gpus per node>[:<gpu.memory MiB>]`, comma
 * separated, e.g. `2xNVIDIA-H200:8,1xNVIDIA-L40S:4`. The memory defaults from KNOWN_GPU_MEMORY_MIB
 * for the products it lists; any other product needs it.
 *
 * Source: ../../../shared/upstream-notes/kwok.md "Nodes"; profiler.md §2.3 (the labels discovery
 * reads: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory).
 * @module
 */
import type { ApplyObject, Kube } from '../../shared/kube/index.js';
import { KWOK_NODE_ANNOTATION } from './apiserver.js';

/** One shape of node in a fleet. */
export interface GpuNodeGroup {
  /** Number of nodes of this shape (>= 1). */
  readonly count: number;
  /** GPU Feature Discovery's `nvidia.com/gpu.product`, e.g. `NVIDIA-H100-80GB-HBM3`. */
  readonly product: string;
  /** GPUs per node: `nvidia.com/gpu.count` and the `nvidia.com/gpu` capacity (>= 1). */
  readonly gpusPerNode: number;
  /** VRAM per GPU in MiB: `nvidia.com/gpu.memory`. */
  readonly memoryMiB: number;
}

/** VRAM per GPU (MiB) as GPU Feature Discovery reports it for common products. */
export const KNOWN_GPU_MEMORY_MIB: Readonly<Record<string, number>> = {
  'NVIDIA-H100-80GB-HBM3': 81559,
  'NVIDIA-H200': 143771,
  'H200-SXM5-141GB': 141312,
  'NVIDIA-A100-SXM4-80GB': 81920,
  'NVIDIA-B200': 183359,
  'NVIDIA-GB200': 189471,
  'NVIDIA-L40S': 46068,
};

/** The fleet `dynamo-fn dev` starts with unless `--gpu-nodes` says otherwise: 2 nodes of 8 H200. */
export const DEFAULT_GPU_FLEET = '2xNVIDIA-H200:8';

/** A fleet string that cannot be read; the message names the part and the expected form. */
export class GpuFleetError extends Error {
  override readonly name = 'GpuFleetError';
}

/**
 * Parses a fleet string (module docstring). In: e.g. `2xNVIDIA-H200:8`. Out: its groups, in order.
 * Failures: GpuFleetError naming the group, for a malformed group, counts below 1, or a product
 * with no known memory and none given. Pure.
 */
export function parseGpuFleet(fleet: string): GpuNodeGroup[] {
  const groups = fleet.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (groups.length === 0) throw new GpuFleetError('a GPU fleet needs at least one group, e.g. 2xNVIDIA-H200:8');
  return groups.map((part) => {
    const match = /^(\d+)x([A-Za-z0-9][A-Za-z0-9._-]*):(\d+)(?::(\d+))?$/.exec(part);
    if (match === null) {
      throw new GpuFleetError(`GPU fleet group "${part}" is not <nodes>x<gpu.product>:<gpus per node>[:<memory MiB>]`);
    }
    const [, count, product = '', gpus, memory] = match;
    const memoryMiB = memory !== undefined ? Number(memory) : KNOWN_GPU_MEMORY_MIB[product];
    if (memoryMiB === undefined) {
      throw new GpuFleetError(
        `GPU fleet group "${part}": no known memory for product ${product}; add it as :<memory MiB> ` +
          `(known: ${Object.keys(KNOWN_GPU_MEMORY_MIB).join(', ')})`,
      );
    }
    const group = { count: Number(count), product, gpusPerNode: Number(gpus), memoryMiB };
    if (group.count < 1 || group.gpusPerNode < 1 || group.memoryMiB < 1) {
      throw new GpuFleetError(`GPU fleet group "${part}": node count, GPUs per node and memory must be at least 1`);
    }
    return group;
  });
}

/**
 * The Node objects of a fleet, named `<prefix>-<index>` (index over the whole fleet, from 0).
 * Each carries GFD labels, `nvidia.com/gpu.present: "true"`, the kwok annotation, its own
 * InternalIP (kwok.md: otherwise all nodes share one), and capacity = allocatable =
 * {cpu: 64, memory: 1Ti, pods: 110, nvidia.com/gpu: gpusPerNode}. Create them with a plain
 * create (status is kept on create). Pure.
 */
export function gpuNodeObjects(groups: readonly GpuNodeGroup[], prefix = 'gpu-node'): ApplyObject[] {
  const nodes: ApplyObject[] = [];
  for (const group of groups) {
    for (let i = 0; i < group.count; i += 1) {
      const index = nodes.length;
      const name = `${prefix}-${index}`;
      const capacity = { cpu: '64', memory: '1Ti', pods: '110', 'nvidia.com/gpu': String(group.gpusPerNode) };
      nodes.push({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            'type': 'kwok',
            'nvidia.com/gpu.present': 'true',
            'nvidia.com/gpu.product': group.product,
            'nvidia.com/gpu.count': String(group.gpusPerNode),
            'nvidia.com/gpu.memory': String(group.memoryMiB),
          },
        },
        spec: {},
        status: {
          capacity,
          allocatable: capacity,
          addresses: [
            { type: 'InternalIP', address: `10.1.${Math.floor(index / 250)}.${(index % 250) + 2}` },
            { type: 'Hostname', address: name },
          ],
        },
      });
    }
  }
  return nodes;
}

/**
 * Creates the fleet's Nodes (server-side apply, then their status through the status
 * subresource, so capacity holds however the API server treats status on create). kwok marks
 * them Ready within about a second. Out: the Node names. Failures: the kube client's errors.
 */
export async function createGpuNodes(
  kube: Pick<Kube, 'apply' | 'applyStatus'>,
  groups: readonly GpuNodeGroup[],
  prefix = 'gpu-node',
): Promise<string[]> {
  const nodes = gpuNodeObjects(groups, prefix);
  for (const node of nodes) {
    await kube.apply(node, { force: true });
    await kube.applyStatus({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name }, status: node['status'] }, { force: true });
  }
  return nodes.map((node) => node.metadata.name);
}
