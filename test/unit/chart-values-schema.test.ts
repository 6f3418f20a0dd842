/**
 * The chart's values schema (infra/chart/values.schema.json, issue 21 item 4): helm validates
 * values against it on install, upgrade, lint and template, so a misspelled or out-of-range value
 * is refused with its path. These checks keep it and values.yaml from drifting apart: the
 * defaults validate, every key of the schema has a default, and the three examples are
 * refused. (test/integration/chart.test.ts proves that helm itself refuses them.)
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_EXPORTER_NAMESPACES } from '../../shared/domain/index.js';
import { repoRoot } from '../support/paths.js';

const chartDir = resolve(repoRoot, 'infra', 'chart');
const schema = JSON.parse(readFileSync(resolve(chartDir, 'values.schema.json'), 'utf8')) as SchemaNode;
const defaults = parseYaml(readFileSync(resolve(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;

interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
}

const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

/** Deep copy of the defaults with one dotted path set, as `helm --set path=value` would. */
function withValue(path: string, value: unknown): Record<string, unknown> {
  const values = structuredClone(defaults);
  const keys = path.split('.');
  let node = values;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1) ?? ''] = value;
  return values;
}

/** Every dotted path of a schema's declared object properties (the leaves and the objects). */
function schemaPaths(node: SchemaNode, prefix = ''): string[] {
  return Object.entries(node.properties ?? {}).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...schemaPaths(child, path)];
  });
}

function valueAt(values: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), values);
}

function hasPath(values: Record<string, unknown>, path: string): boolean {
  let node: unknown = values;
  for (const key of path.split('.')) {
    if (typeof node !== 'object' || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

describe('infra/chart/values.schema.json', () => {
  it('the chart defaults (values.yaml) validate', () => {
    expect(validate(defaults), JSON.stringify(validate.errors)).toBe(true);
  });

  it('the reconcile function\'s memory limit is 256Mi (issue 17 item 3: "stays under 256 MiB RSS through 10,000 events, with the chart\'s memory limit brought down to match"; npm run bench:reconcile-memory measures the bundle against it)', () => {
    expect(valueAt(defaults, 'reconcile.resources.limits.memory')).toBe('256Mi');
  });

  it('every value the schema declares has a default in values.yaml (no schema-only keys)', () => {
    // The fields of an optional object whose default is {} (admission.certManager.issuerRef) have none.
    const isUnderEmptyDefault = (path: string) => path.split('.').some((_, index, keys) => {
      const parent = keys.slice(0, index).join('.');
      return index > 0 && hasPath(defaults, parent) && JSON.stringify(valueAt(defaults, parent)) === '{}';
    });
    const missing = schemaPaths(schema).filter((path) => path !== 'global' && !isUnderEmptyDefault(path) && !hasPath(defaults, path));
    expect(missing).toEqual([]);
  });

  it('hardwareDiscovery.exporterNamespaces defaults to what the functions trust when GPU_EXPORTER_NAMESPACES is unset (gpu-operator), so dev and the chart agree', () => {
    expect((defaults['hardwareDiscovery'] as { exporterNamespaces?: unknown }).exporterNamespaces).toEqual([...DEFAULT_EXPORTER_NAMESPACES]);
    expect(DEFAULT_EXPORTER_NAMESPACES).toEqual(['gpu-operator']);
  });

  it.each([
    { name: 'a misspelled gate (lpx.enabeld=true)', path: 'lpx.enabeld', value: true, want: { instancePath: '/lpx', keyword: 'additionalProperties' } },
    { name: 'an unknown gang scheduler (render.gangScheduler=slurm)', path: 'render.gangScheduler', value: 'slurm', want: { instancePath: '/render/gangScheduler', keyword: 'enum' } },
    { name: 'a webhook timeout past the API server\'s 30 s (admission.timeoutSeconds=99)', path: 'admission.timeoutSeconds', value: 99, want: { instancePath: '/admission/timeoutSeconds', keyword: 'maximum' } },
    { name: 'a Go duration that is not one (render.groveTerminationDelay=15 minutes)', path: 'render.groveTerminationDelay', value: '15 minutes', want: { instancePath: '/render/groveTerminationDelay', keyword: 'pattern' } },
    { name: 'a log level pino does not know (logLevel=verbose)', path: 'logLevel', value: 'verbose', want: { instancePath: '/logLevel', keyword: 'enum' } },
    { name: 'a negative min-scale (reconcile.minScale=-1)', path: 'reconcile.minScale', value: -1, want: { instancePath: '/reconcile/minScale', keyword: 'minimum' } },
    // Issue 18 item 5: no setting turns on finalizers without their release; cleanup runs whenever v1beta2 or LPX is on.
    { name: 'a switch that would turn cleanup off (cleanup.enabled=false)', path: 'cleanup.enabled', value: false, want: { instancePath: '/cleanup', keyword: 'additionalProperties' } },
    // Issue 20 item 1: the namespaces whose exporter pods discovery trusts are namespace names, or "*".
    { name: 'an exporter namespace that is not a namespace name (hardwareDiscovery.exporterNamespaces={GPU_Operator})', path: 'hardwareDiscovery.exporterNamespaces', value: ['GPU_Operator'], want: { instancePath: '/hardwareDiscovery/exporterNamespaces/0', keyword: 'pattern' } },
    { name: 'a comma-separated string instead of a list of exporter namespaces', path: 'hardwareDiscovery.exporterNamespaces', value: 'gpu-operator,intel-xpu', want: { instancePath: '/hardwareDiscovery/exporterNamespaces', keyword: 'type' } },
    { name: 'no exporter namespace at all (an empty list)', path: 'hardwareDiscovery.exporterNamespaces', value: [], want: { instancePath: '/hardwareDiscovery/exporterNamespaces', keyword: 'minItems' } },
  ])('refuses $name with its path', ({ path, value, want }) => {
    expect(validate(withValue(path, value))).toBe(false);
    expect(validate.errors?.map((error) => ({ instancePath: error.instancePath, keyword: error.keyword }))).toContainEqual(want);
  });

  it.each([
    { name: 'the matrix gates on', path: 'dgdrV1Beta2.enabled', value: true },
    { name: 'kai gang scheduling', path: 'render.gangScheduler', value: 'kai' },
    { name: 'the largest webhook timeout (30 s)', path: 'admission.timeoutSeconds', value: 30 },
    { name: 'a compound Go duration', path: 'render.groveTerminationDelay', value: '1h30m' },
    { name: 'a ClusterIssuer', path: 'admission.certManager.issuerRef', value: { name: 'corp-ca', kind: 'ClusterIssuer' } },
    { name: 'Intel XPU Manager\'s namespace beside the GPU Operator\'s', path: 'hardwareDiscovery.exporterNamespaces', value: ['gpu-operator', 'intel-xpu'] },
    { name: 'upstream\'s any-namespace discovery for a switch-over ("*")', path: 'hardwareDiscovery.exporterNamespaces', value: ['*'] },
  ])('accepts $name', ({ path, value }) => {
    expect(validate(withValue(path, value)), JSON.stringify(validate.errors)).toBe(true);
  });
});
