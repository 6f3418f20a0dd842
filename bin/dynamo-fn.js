#!/usr/bin/env node
// Entry point for the `dynamo-fn` command. The sources are TypeScript run through tsx, so a
// fresh clone needs no build step. Node.js 24 comes from the `node` devDependency: npm
// scripts and npx put it first on PATH.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `dynamo-fn: Node.js 24 or newer is required (this is ${process.version}); ` +
      'run it through npx or an npm script, which use the node package from devDependencies\n',
  );
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
const { main, exitWhenDone } = await import('../shared/cli/main.ts');
exitWhenDone(await main(process.argv.slice(2)));
