/**
 * `dynamo-fn render`: renders DynamoGraphDeployments from YAML files into the Grove objects
 * the reconcile function would apply, without a cluster.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { ANNOTATION_DGD_SPEC, DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, convertDgd, formatIssue, parseDgd, type Dgd } from '../api/index.js';
import { DEFAULT_RENDER_CONFIG, isDns1123Label, isDns1123Subdomain, renderDgd, type RenderConfig, type RenderedObject } from '../domain/index.js';
import { formatUnknownField, unknownDgdFields } from './strict-fields.js';
import { readKubeObjects } from './yaml-input.js';

export const summary = 'Render DynamoGraphDeployments (v1beta1 or v1alpha1) into Grove PodCliqueSets and Services';

export const usage = `Usage: dynamo-fn render [options] FILE...

Reads YAML files (multi-document files allowed; "-" reads standard input), renders every
DynamoGraphDeployment into the Grove PodCliqueSet and component Services the reconcile
function would server-side apply, and prints them as a YAML stream on standard output.
Documents of other kinds are skipped with a note on standard error; warnings also go there.

Options:
  --namespace NS     namespace for objects without metadata.namespace (default "default")
  --lpx-enabled      as with the operator setting lpx.enabled=true. LPX components are never
                     rendered here (their PodCliqueSet needs the decoded build, which only
                     the reconcile function reads): either way they are skipped with a note
                     (without the flag: that they need lpx.enabled=true) and the rest of a
                     hybrid graph is rendered
  --termination-delay D
                     PodCliqueSet template.terminationDelay (default "${DEFAULT_RENDER_CONFIG.terminationDelay}")
  --scheduler S      gang scheduler integration of the installation: none (default), kai
                     (schedulerName kai-scheduler, kai.scheduler/queue label) or volcano
  --mpi-ssh-secret NAME
                     Secret with the TensorRT-LLM multinode SSH keys (default "mpi-run-ssh-secret")
  --discovery-backend B
                     operator default discovery backend: kubernetes (default) or etcd
  --lenient          report unknown or misspelled fields as warnings instead of errors
                     (by default they fail as the API server's strict field validation would)
  -h, --help         show this help

Exit status: 0 when every DynamoGraphDeployment rendered; 1 when any was invalid or had an
unknown field (each error names the file, the object and the field path, e.g.
unknown field "spec.components[0].replcas"), or on a usage error.`;

interface Output {
  readonly objects: RenderedObject[];
  readonly errors: string[];
  readonly notes: string[];
}

/** Renders every DGD document of one YAML text; `source` names it in messages. */
export function renderYaml(
  text: string,
  source: string,
  options: { namespace: string; lpxEnabled: boolean; terminationDelay: string; lenient?: boolean; config?: Partial<RenderConfig> },
): Output {
  const out: Output = { objects: [], errors: [], notes: [] };
  const input = readKubeObjects(text, source);
  out.errors.push(...input.errors);
  for (const { where, object } of input.objects) {
    if (object['kind'] !== DGD_KIND) {
      out.notes.push(`${where}: skipped ${String(object['kind'])} (not a ${DGD_KIND})`);
      continue;
    }
    const name = String((object as { metadata?: { name?: unknown } }).metadata?.name ?? '') || '<unnamed>';
    const label = `${where}: ${DGD_KIND} "${name}"`;
    const unknown = unknownDgdFields(object).map(formatUnknownField);
    if (options.lenient === true) for (const field of unknown) out.notes.push(`${label}: warning: ${field}`);
    else if (unknown.length > 0) {
      for (const field of unknown) out.errors.push(`${label}: ${field}`);
      continue;
    }
    const parsed = parseDgd(object);
    if (!parsed.ok) {
      for (const issue of parsed.issues) out.errors.push(`${label}: ${formatIssue(issue)}`);
      continue;
    }
    for (const note of parsed.notes) out.notes.push(`${label}: ${note}`);
    const rendered = renderDgd(asStored(parsed.dgd, object), { namespace: options.namespace, config: { ...options.config, lpxEnabled: options.lpxEnabled, terminationDelay: options.terminationDelay } });
    if (!rendered.ok) {
      for (const issue of rendered.issues) out.errors.push(`${label}: ${formatIssue(issue)}`);
      continue;
    }
    for (const warning of rendered.warnings) out.notes.push(`${label}: warning: ${warning}`);
    out.objects.push(...rendered.objects);
  }
  return out;
}

/**
 * The DGD as the API server would store it: a v1alpha1 object keeps what v1beta1 cannot
 * express (`spec.pvcs`, whose `create: true` claims render) in the conversion webhook's
 * `nvidia.com/dgd-spec` annotation.
 */
function asStored(dgd: Dgd, source: Record<string, unknown>): Dgd {
  if (source['apiVersion'] !== DGD_V1ALPHA1) return dgd;
  const hub = convertDgd(source, DGD_V1BETA1);
  const saved = hub.ok ? (hub.object['metadata'] as { annotations?: Record<string, string> } | undefined)?.annotations?.[ANNOTATION_DGD_SPEC] : undefined;
  return saved === undefined ? dgd : { ...dgd, metadata: { ...dgd.metadata, annotations: { ...dgd.metadata.annotations, [ANNOTATION_DGD_SPEC]: saved } } };
}

/** Prints objects as a YAML stream (`---` between documents), stable line layout. */
export function toYamlStream(objects: readonly RenderedObject[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

/** A metav1.Duration as Go's time.ParseDuration reads it (Grove's terminationDelay). */
const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

export async function run(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        namespace: { type: 'string', default: 'default' },
        'lpx-enabled': { type: 'boolean', default: false },
        'termination-delay': { type: 'string', default: DEFAULT_RENDER_CONFIG.terminationDelay },
        lenient: { type: 'boolean', default: false },
        scheduler: { type: 'string', default: 'none' },
        'mpi-ssh-secret': { type: 'string' },
        'discovery-backend': { type: 'string', default: 'kubernetes' },
      },
    });
  } catch (error) {
    process.stderr.write(`dynamo-fn render: ${(error as Error).message}\n\n${usage}\n`);
    return 1;
  }
  if (!GO_DURATION.test(parsed.values['termination-delay'])) {
    process.stderr.write(`dynamo-fn render: --termination-delay must be a duration such as 15m, 1h30m or 90s, got "${parsed.values['termination-delay']}"\n`);
    return 1;
  }
  if (!isDns1123Label(parsed.values.namespace)) {
    process.stderr.write(`dynamo-fn render: --namespace must be a lowercase RFC 1123 label, got "${parsed.values.namespace}"\n`);
    return 1;
  }
  const scheduler = parsed.values.scheduler;
  if (scheduler !== 'none' && scheduler !== 'kai' && scheduler !== 'volcano') {
    process.stderr.write(`dynamo-fn render: --scheduler must be none, kai or volcano, got "${scheduler}"\n`);
    return 1;
  }
  const discoveryBackend = parsed.values['discovery-backend'];
  if (discoveryBackend !== 'kubernetes' && discoveryBackend !== 'etcd') {
    process.stderr.write(`dynamo-fn render: --discovery-backend must be kubernetes or etcd, got "${discoveryBackend}"\n`);
    return 1;
  }
  const mpiSshSecretName = parsed.values['mpi-ssh-secret'];
  if (mpiSshSecretName !== undefined && !isDns1123Subdomain(mpiSshSecretName)) {
    process.stderr.write(`dynamo-fn render: --mpi-ssh-secret must be a Secret name (a lowercase RFC 1123 subdomain), got "${mpiSshSecretName}"\n`);
    return 1;
  }
  const config: Partial<RenderConfig> = { scheduler, discoveryBackend, ...(mpiSshSecretName === undefined ? {} : { mpiSshSecretName }) };
  if (parsed.positionals.length === 0) {
    process.stderr.write(`dynamo-fn render: no FILE given\n\n${usage}\n`);
    return 1;
  }
  const objects: RenderedObject[] = [];
  let failed = false;
  for (const file of parsed.positionals) {
    let text: string;
    try {
      text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (error) {
      process.stderr.write(`error: ${file}: cannot read: ${(error as Error).message}\n`);
      failed = true;
      continue;
    }
    const out = renderYaml(text, file, { namespace: parsed.values.namespace, lpxEnabled: parsed.values['lpx-enabled'], terminationDelay: parsed.values['termination-delay'], lenient: parsed.values.lenient, config });
    for (const note of out.notes) process.stderr.write(`${note}\n`);
    for (const error of out.errors) process.stderr.write(`error: ${error}\n`);
    if (out.errors.length > 0) failed = true;
    objects.push(...out.objects);
  }
  if (objects.length > 0) process.stdout.write(toYamlStream(objects));
  return failed ? 1 : 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
