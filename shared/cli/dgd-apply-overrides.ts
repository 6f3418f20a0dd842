/**
 * `dynamo-fn dgd-apply-overrides`: the `spec.overrides.dgd` merge engine
 * (shared/domain/dgdr/overrides.ts) behind the command-line protocol the Dynamo 1.6.1 profiler
 * calls through `$DYNAMO_DGD_APPLY_OVERRIDES_BIN` (protocol v1), so the profiler's own merge is ours.
 *
 * Protocol (upstream-notes/profiler.md §1.8; upstream deploy/operator/cmd/dgd-apply-overrides/main_test.go):
 * - `--protocol-version` prints `1`;
 * - otherwise stdin is one JSON object `{"blueprint": <DGD>, "override": <versioned partial DGD>}`
 *   and stdout the effective DGD as JSON; each warning is a `warning: <path>: <message>` line on
 *   stderr; a failure prints `apply DGD override: <error>` (or what could not be decoded) on
 *   stderr, nothing on stdout, and exits 1;
 * - `--install-to PATH` writes an executable at PATH that runs this command (what the
 *   operator's init container does with its binary), so `DYNAMO_DGD_APPLY_OVERRIDES_BIN` can name it:
 *   self-contained (Node.js and the bundled tool copied beside PATH) when run from the bundle
 *   `dist/dgd-apply-overrides.mjs`, as in our image; from the sources, a wrapper running this checkout.
 * @module
 */
import { applyDgdOverride, DGD_OVERRIDE_PROTOCOL_VERSION, formatOverrideWarning } from '../domain/dgdr/overrides.js';
import { installOverrideTool, type InstallOverrideToolOptions } from '../profiler/override-tool.js';

export { installOverrideTool };

export const summary = 'Apply a spec.overrides.dgd override to a generated DGD (the profiler\'s override tool, protocol v1)';

export const usage = `Usage: dynamo-fn dgd-apply-overrides < REQUEST.json
       dynamo-fn dgd-apply-overrides --protocol-version
       dynamo-fn dgd-apply-overrides --install-to PATH

Reads {"blueprint": <DynamoGraphDeployment>, "override": <partial DynamoGraphDeployment>} from
stdin and prints the effective DGD as JSON. The override is nvidia.com/v1beta1 (components,
containers and env merge by name; args, command and other atomic lists are replaced;
$patch: {args: append} appends to a container's generated args) or nvidia.com/v1alpha1
(spec.services; worker mainContainer args are appended). The result keeps the blueprint's
apiVersion, kind and name.

This is the tool the Dynamo profiler runs for spec.overrides.dgd: point
DYNAMO_DGD_APPLY_OVERRIDES_BIN at the file --install-to writes.

Options:
  --protocol-version   print the protocol version (${DGD_OVERRIDE_PROTOCOL_VERSION}) and exit
  --install-to PATH    write an executable at PATH that runs this command, and exit

Warnings go to stderr as 'warning: ...' lines. Exit status 1 with the error on stderr when the
request cannot be decoded or the override cannot be applied; nothing is printed on stdout then.`;

/** Streams the command uses; tests pass their own. */
export interface CommandIo {
  readonly readStdin: () => Promise<string>;
  readonly writeStdout: (text: string) => void;
  readonly writeStderr: (text: string) => void;
}

const processIo: CommandIo = {
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  writeStdout: (text) => process.stdout.write(text),
  writeStderr: (text) => process.stderr.write(text),
};

/** Runs the command. `install` says where the self-contained bundle is when running from it (./dgd-apply-overrides-entry.ts). */
export async function run(argv: readonly string[], io: CommandIo = processIo, install: InstallOverrideToolOptions = {}): Promise<number> {
  const fail = (message: string): number => {
    io.writeStderr(`${message}\n`);
    return 1;
  };
  const flags = argv.filter((arg) => arg.startsWith('-'));
  const installIndex = argv.indexOf('--install-to');
  const hasProtocolVersion = argv.includes('--protocol-version');
  const unknown = flags.filter((flag) => flag !== '--protocol-version' && flag !== '--install-to');
  if (unknown.length > 0) return fail(`flag provided but not defined: ${unknown[0] as string}\n\n${usage}`);
  if (hasProtocolVersion && installIndex >= 0) return fail('--install-to and --protocol-version are mutually exclusive');
  const installTo = installIndex >= 0 ? argv[installIndex + 1] : undefined;
  if (installIndex >= 0 && (installTo === undefined || installTo.startsWith('-'))) return fail('--install-to needs a PATH');
  const positional = argv.filter((arg, index) => !arg.startsWith('-') && !(installIndex >= 0 && index === installIndex + 1));
  if (positional.length > 0) return fail(`unexpected positional arguments: ${positional.join(' ')}`);

  if (hasProtocolVersion) {
    io.writeStdout(`${DGD_OVERRIDE_PROTOCOL_VERSION}\n`);
    return 0;
  }
  if (installTo !== undefined) {
    await installOverrideTool(installTo, install);
    return 0;
  }

  const decoded = decodeRequest(await io.readStdin());
  if (!decoded.ok) return fail(decoded.error);
  const result = applyDgdOverride(decoded.blueprint, decoded.override);
  for (const warning of result.warnings) io.writeStderr(`warning: ${formatOverrideWarning(warning)}\n`);
  if (!result.ok) return fail(`apply DGD override: ${result.error}`);
  io.writeStdout(`${JSON.stringify(result.dgd)}\n`);
  return 0;
}

type Decoded = { readonly ok: true; readonly blueprint: unknown; readonly override: unknown } | { readonly ok: false; readonly error: string };

/**
 * Decodes the request object: exactly the fields `blueprint` and `override`, both JSON objects.
 * Source: upstream cmd/dgd-apply-overrides/main_test.go (`decode request JSON`, `request blueprint
 * is required`, `unknown field "extra"`, `decode request blueprint object`).
 */
function decodeRequest(text: string): Decoded {
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `decode request JSON: ${(error as Error).message}` };
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return { ok: false, error: 'decode request JSON: the request must be a JSON object' };
  const fields = request as Record<string, unknown>;
  const extra = Object.keys(fields).find((key) => key !== 'blueprint' && key !== 'override');
  if (extra !== undefined) return { ok: false, error: `decode request JSON: unknown field ${JSON.stringify(extra)}` };
  for (const key of ['blueprint', 'override'] as const) {
    if (fields[key] === undefined || fields[key] === null) return { ok: false, error: `request ${key} is required` };
    if (typeof fields[key] !== 'object' || Array.isArray(fields[key])) return { ok: false, error: `decode request ${key} object: must be a JSON object` };
  }
  return { ok: true, blueprint: fields['blueprint'], override: fields['override'] };
}
