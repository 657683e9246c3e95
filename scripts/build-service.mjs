// Compiles the service and the tests (every .ts file tsconfig.json includes) into dist, one .js and
// source map per file, with esbuild: it strips the types and checks none, in about half a second.
// The types are checked by scripts/typecheck.sh (tsc), which npm test runs beside the stack's
// start. What a deleted or renamed source left in dist goes (scripts/prune-dist.mjs).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// As tsconfig.json's include and exclude say.
const FOLDERS = ['src', 'ledger', 'consumers', 'migrations', 'test'];
const EXCLUDED = new Set([path.join(root, 'src', 'dashboard'), path.join(root, 'test', 'generated-client')]);

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!EXCLUDED.has(full)) yield* sources(full);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      yield full;
    }
  }
}

const entryPoints = [
  ...FOLDERS.flatMap((folder) => [...sources(path.join(root, folder))]),
  ...readdirSync(path.join(root, 'scripts')).filter((name) => name.endsWith('.ts')).map((name) => path.join(root, 'scripts', name)),
];
await build({
  entryPoints, outdir: path.join(root, 'dist'), outbase: root, format: 'cjs', platform: 'node', target: 'node20',
  sourcemap: true, logLevel: 'warning', tsconfig: path.join(root, 'tsconfig.json'),
});
