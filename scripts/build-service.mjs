// Compiles the service and the tests (every .ts file tsconfig.json includes) into dist, one .js and
// source map per file, with esbuild: it strips the types and checks none, in about half a second.
// The types are checked by scripts/typecheck.sh (tsc), which npm test runs beside the stack's
// start. What a deleted or renamed source left in dist goes (scripts/prune-dist.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// What tsconfig.json includes (folders, and `folder/*.ts` for the files of one folder alone), less what it excludes.
const tsconfig = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
const excluded = new Set(tsconfig.exclude.map((entry) => path.join(root, entry)));
const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts');

function* sources(dir, deep) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (deep && !excluded.has(full)) yield* sources(full, deep);
    } else if (isSource(entry.name)) {
      yield full;
    }
  }
}

const entryPoints = tsconfig.include.flatMap((entry) => (entry.endsWith('/*.ts')
  ? [...sources(path.join(root, path.dirname(entry)), false)]
  : [...sources(path.join(root, entry), true)]));
await build({
  entryPoints, outdir: path.join(root, 'dist'), outbase: root, format: 'cjs', platform: 'node', target: 'node20',
  sourcemap: true, logLevel: 'warning', tsconfig: path.join(root, 'tsconfig.json'),
});
