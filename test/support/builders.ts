/**
 * Test fixture builders: a valid DGD with overrides, so each test states only what it is about.
 * @module
 */
import { DgdSchema, type Component, type Dgd } from '../../shared/api/index.js';

/** A component with a main container; `overrides` replace top-level fields. */
export function aComponent(name: string, type: Component['type'], overrides: Partial<Component> = {}): Component {
  return {
    name,
    type,
    replicas: 1,
    podTemplate: { spec: { containers: [{ name: 'main', image: `nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0` }] } },
    ...overrides,
  };
}

/** A v1beta1 DGD `my-graph` in namespace `inference` with a frontend and a worker unless `components` is given. */
export function aDgd(overrides: { metadata?: Partial<Dgd['metadata']>; spec?: Partial<Dgd['spec']> } = {}): Dgd {
  return DgdSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'my-graph', namespace: 'inference', uid: '0b6c1e5e-1111-2222-3333-444455556666', ...overrides.metadata },
    spec: {
      backendFramework: 'vllm',
      components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker')],
      ...overrides.spec,
    },
  });
}

/** Recursively freezes a value, so a test proves a pure function does not modify its input. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
