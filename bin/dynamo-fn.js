#!/usr/bin/env node
// Entry point for the `dynamo-fn` command. The sources are TypeScript run through tsx, so a
// fresh clone needs no build step. Node.js 24 comes from the `node` devDependency when run
// through npm scripts or npx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../shared/cli/main.js');
process.exitCode = await main(process.argv.slice(2));
