#!/usr/bin/env node
// The `payctl` command (package.json bin): runs the compiled CLI (src/cli), compiling the project
// first in a checkout where it was not compiled yet.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const main = path.join(root, 'dist', 'src', 'cli', 'main.js');
if (!fs.existsSync(main)) {
  process.stderr.write('payctl: compiling the project once (npm run build)...\n');
  execFileSync('bash', [path.join(root, 'scripts', 'build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
}
require(main).main();
