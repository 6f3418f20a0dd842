/**
 * Installs `dgd-apply-overrides` as a file the profiler can run (`DYNAMO_DGD_APPLY_OVERRIDES_BIN`):
 * a shell script running `dynamo-fn dgd-apply-overrides` of this checkout, as the operator's init
 * container installs its binary with `--install-to` (upstream-notes/profiler.md §1.4, §1.8).
 * @module
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { DGD_OVERRIDE_PROTOCOL_VERSION } from '../domain/dgdr/overrides.js';

/** The repository's CLI entry, which an installed wrapper runs. */
const CLI_ENTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'dynamo-fn.js');

/**
 * Writes an executable shell script at `file` that runs `dgd-apply-overrides` of this checkout
 * with the Node.js running now (the profiler's PATH may hold an older `node`). Mode 0755.
 */
export async function installOverrideTool(file: string): Promise<string> {
  const target = path.resolve(file);
  await mkdir(path.dirname(target), { recursive: true });
  const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
  await writeFile(target, `#!/bin/sh\n# dgd-apply-overrides protocol ${DGD_OVERRIDE_PROTOCOL_VERSION}, installed by dynamo-fn\nexec ${quoted(process.execPath)} ${quoted(CLI_ENTRY)} dgd-apply-overrides "$@"\n`);
  await chmod(target, 0o755);
  return target;
}
