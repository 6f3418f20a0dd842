/**
 * `dynamo-fn`: the command-line entry. Each subcommand lives in its own module in this folder
 * exporting `summary` (one line), `usage` (the full `--help` text) and
 * `run(argv): Promise<number>` (the exit code). Modules are loaded only when their command runs,
 * so `dynamo-fn render` never pays for the API-server harness.
 * @module
 */

export interface Command {
  /** One line for the top-level `--help`. */
  readonly summary: string;
  /** The full help text printed by `dynamo-fn <command> --help`. */
  readonly usage: string;
  /** Runs the command; resolves to the process exit code. */
  readonly run: (argv: readonly string[]) => Promise<number>;
  /** The command prints its own help (e.g. `serve admission --help` shows admission's options). */
  readonly handlesHelp?: boolean;
}

const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  render: () => import('./render.js'),
  crds: () => import('./crds.js'),
  serve: () => import('./serve.js'),
  'kube-build': () => import('./kube-build.js'),
  'helm-build': () => import('./helm-build.js'),
  install: () => import('./install.js'),
  status: () => import('./status.js'),
  dev: () => import('./dev.js'),
  replay: () => import('./replay.js'),
  'py-setup': () => import('./py-setup.js'),
  'dgd-apply-overrides': () => import('./dgd-apply-overrides.js'),
  profile: () => import('./profile.js'),
};

const ORDER = ['render', 'crds', 'serve', 'dev', 'replay', 'install', 'status', 'kube-build', 'helm-build', 'py-setup', 'profile', 'dgd-apply-overrides'] as const;

async function topLevelHelp(): Promise<string> {
  const lines = ['Usage: dynamo-fn <command> [options]', '', 'Commands:'];
  for (const name of ORDER) {
    const load = COMMANDS[name];
    if (load === undefined) continue;
    try {
      lines.push(`  ${name.padEnd(12)}${name.length >= 12 ? '  ' : ''}${(await load()).summary}`);
    } catch {
      // A command whose module is not present in this build is simply not listed.
    }
  }
  lines.push('', "Run 'dynamo-fn <command> --help' for a command's options; 'dynamo-fn --version' for the version.");
  return lines.join('\n');
}

/** Parses the first argument as the command and runs it. Returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(`${await topLevelHelp()}\n`);
    return 1;
  }
  if (name === '--version' || name === 'version') {
    const { buildInfo } = await import('../runtime/build-info.js');
    const info = buildInfo();
    process.stdout.write(`dynamo-fn ${info.version} (Node.js ${info.nodeVersion})\n`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${await topLevelHelp()}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (load === undefined) {
    process.stderr.write(`dynamo-fn: unknown command "${name}"\n\n${await topLevelHelp()}\n`);
    return 1;
  }
  const command = await load();
  if (command.handlesHelp !== true && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${command.usage}\n`);
    return 0;
  }
  return command.run(rest);
}

/** How long the process may stay alive after {@link main} returned before {@link exitWhenDone} ends it. */
export const EXIT_GRACE_MS = 10_000;

/**
 * Ends the CLI's process with `code` once {@link main} has returned: the exit code is set and
 * Node exits when nothing is left to run, as always; if something still holds the event loop
 * `graceMs` later (a socket or timer a command forgot, which made `dev --wait` outlive its own
 * timeout in two loaded test runs), it names what is still open on stderr and exits with `code`.
 * The timer is unref'd: it never keeps the process alive itself.
 */
export function exitWhenDone(code: number, graceMs: number = EXIT_GRACE_MS): void {
  process.exitCode = code;
  setTimeout(() => {
    process.stderr.write(`dynamo-fn: still running ${graceMs / 1000} s after the command finished (open: ${process.getActiveResourcesInfo().join(', ') || 'nothing named'}); exiting with ${code}\n`);
    process.exit(code);
  }, graceMs).unref();
}
