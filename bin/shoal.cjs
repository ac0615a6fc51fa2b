#!/usr/bin/env node
// Entry point of the `shoal` command. The CLI itself is bundled by `npm run build`.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const cli = join(__dirname, '..', 'dist', 'cli.cjs');
if (!existsSync(cli)) {
  console.error('shoal: the command line is not built yet (dist/cli.cjs is missing). Run `npm run build` in the Shoal folder, then try again.');
  process.exit(1);
}
require(cli);
