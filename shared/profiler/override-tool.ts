/**
 * Installs `dgd-apply-overrides` as a file the profiler can run (`DYNAMO_DGD_APPLY_OVERRIDES_BIN`),
 * as the operator's init container `dgd-override-installer` installs its binary with
 * `--install-to` into the emptyDir the profiler container mounts read-only at `/opt/dynamo/bin`
 * (upstream-notes/profiler.md §1.4, §1.8).
 *
 * Upstream's tool is a static Go binary, so copying it is enough. Ours is a Node.js program and the
 * profiler container (the `dynamo-planner` image) has no Node.js, so the install is
 * self-contained: the Node.js binary running now and the one-file bundle
 * `dist/dgd-apply-overrides.mjs` (`npm run build`; our image carries it) are copied into
 * `.dgd-apply-overrides/` beside the installed file, which is a `/bin/sh` script running them by
 * its own location. The profiler container then needs only `/bin/sh` and the C/C++ runtime
 * libraries Node.js links against (glibc 2.28+, libstdc++), which the Ubuntu-based planner image has.
 * Run from the sources (no bundle beside them) the script runs this checkout instead, which is
 * enough on this machine.
 * @module
 */
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { DGD_OVERRIDE_PROTOCOL_VERSION } from '../domain/dgdr/overrides.js';

/** The bundle's file name, in `dist/` of a checkout and of our image (`/app/dist/`). */
export const OVERRIDE_TOOL_BUNDLE_NAME = 'dgd-apply-overrides.mjs';
/** The folder beside the installed file holding its Node.js binary and bundle. */
export const OVERRIDE_TOOL_SUPPORT_DIR = '.dgd-apply-overrides';

const MODULE_DIR = path.dirname(fileURLToPath(import.meta.url));
/** The repository's CLI entry, which a checkout install runs. */
const CLI_ENTRY = path.resolve(MODULE_DIR, '..', '..', 'bin', 'dynamo-fn.js');

export interface InstallOverrideToolOptions {
  /** The bundle to install; default {@link findOverrideToolBundle}. */
  readonly bundle?: string;
}

/**
 * The bundle `dgd-apply-overrides.mjs` beside the running module, i.e. when this code runs bundled
 * from `dist/` (our image's `/app/dist/`), where both bundles come from one build; undefined when
 * running from the sources, which never pick up a `dist/` that may be older than they are.
 */
export function findOverrideToolBundle(): string | undefined {
  const candidate = path.join(MODULE_DIR, OVERRIDE_TOOL_BUNDLE_NAME);
  return existsSync(candidate) ? candidate : undefined;
}

const quoted = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;

/**
 * Writes an executable `/bin/sh` script at `file` (mode 0755) that speaks protocol v1: with a
 * bundle, self-contained (module docstring: `.dgd-apply-overrides/node` and
 * `.dgd-apply-overrides/dgd-apply-overrides.mjs` beside it, found from the script's own path, so
 * the folder can be mounted anywhere); without one, running `dgd-apply-overrides` of this
 * checkout with the Node.js running now (the profiler's PATH may hold an older `node`).
 * Out: the installed path. Failures: the file system's errors.
 */
export async function installOverrideTool(file: string, options: InstallOverrideToolOptions = {}): Promise<string> {
  const target = path.resolve(file);
  await mkdir(path.dirname(target), { recursive: true });
  const bundle = options.bundle ?? findOverrideToolBundle();
  const header = `#!/bin/sh\n# dgd-apply-overrides protocol ${DGD_OVERRIDE_PROTOCOL_VERSION}, installed by dynamo-fn\n`;
  if (bundle === undefined) {
    await writeFile(target, `${header}exec ${quoted(process.execPath)} ${quoted(CLI_ENTRY)} dgd-apply-overrides "$@"\n`);
  } else {
    const support = path.join(path.dirname(target), OVERRIDE_TOOL_SUPPORT_DIR);
    await mkdir(support, { recursive: true });
    await copyFile(process.execPath, path.join(support, 'node'));
    await chmod(path.join(support, 'node'), 0o755);
    await copyFile(bundle, path.join(support, OVERRIDE_TOOL_BUNDLE_NAME));
    await writeFile(target, `${header}here=$(dirname "$0")\nexec "$here/${OVERRIDE_TOOL_SUPPORT_DIR}/node" "$here/${OVERRIDE_TOOL_SUPPORT_DIR}/${OVERRIDE_TOOL_BUNDLE_NAME}" "$@"\n`);
  }
  await chmod(target, 0o755);
  return target;
}
