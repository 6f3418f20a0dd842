/**
 * `dynamo-fn py-setup`: installs (once) the Python venv with the real Dynamo 1.6.1 profiler and
 * the AISimulate CLI (see shared/profiler/venv.ts). Idempotent: a cached venv is kept and the
 * command returns in about a second. `.ci/run` calls it.
 * @module
 */
import { createLineLog } from '../../test/harness/log.js';
import { ENV_PYTHON, ENV_VENV_DIR, ensureVenv, venvCacheRoot, VenvError } from '../profiler/venv.js';

export const summary = 'Install the Dynamo 1.6.1 profiler and AISimulate into a cached Python venv';

export const usage = `Usage: dynamo-fn py-setup [--force] [--verbose]

Creates a Python venv in ${venvCacheRoot().replace(process.env['HOME'] ?? '\u0000', '~')}/<key>/ and installs the pinned
recipe of shared/profiler/requirements*.txt from PyPI (ai-dynamo 1.6.1 with --no-deps, the
aisimulate manylinux wheel, scikit-learn; no torch, no GPU), then checks that
'python -m dynamo.profiler --help' and 'aisimulate --help' work. <key> hashes the Python
version and the pins, so a change of either installs a new venv. A cold install takes a few
minutes and about 2.1 GB; a cached one is reused.

Options:
  --force     reinstall even when the cached venv is complete
  --verbose   print debug lines

Environment:
  ${ENV_PYTHON}     the interpreter to build the venv from (default python3; 3.11)
  ${ENV_VENV_DIR}   use this prebuilt venv instead (nothing is installed)

Prints the venv folder on stdout.`;

export async function run(argv: readonly string[]): Promise<number> {
  const unknown = argv.filter((arg) => arg !== '--force' && arg !== '--verbose');
  if (unknown.length > 0) {
    process.stderr.write(`dynamo-fn py-setup: unknown option ${unknown.join(' ')}\n\n${usage}\n`);
    return 2;
  }
  const log = createLineLog({ verbose: argv.includes('--verbose') });
  try {
    const dir = await ensureVenv({ log, force: argv.includes('--force') });
    process.stdout.write(`${dir}\n`);
    return 0;
  } catch (error) {
    if (error instanceof VenvError) {
      process.stderr.write(`dynamo-fn py-setup: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
