/**
 * The entry of the self-contained override tool, `dist/dgd-apply-overrides.mjs` (`npm run build`):
 * `dynamo-fn dgd-apply-overrides` alone, bundled with its dependencies into one ES module, so it
 * runs with nothing but a Node.js binary beside it. Its `--install-to PATH` copies that binary and
 * this bundle next to PATH (shared/profiler/override-tool.ts): what a profiling Job's init
 * container `dgd-override-installer` does so the profiler container, which has Python but no
 * Node.js and not our image's files, can run our merge (upstream-notes/profiler.md §1.4, §1.8).
 * @module
 */
import { fileURLToPath } from 'node:url';

import { run } from './dgd-apply-overrides.js';

process.exitCode = await run(process.argv.slice(2), undefined, { bundle: fileURLToPath(import.meta.url) });
