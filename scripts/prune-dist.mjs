// Removes from dist what no source compiles to any more (a deleted or renamed .ts file leaves its
// .js and .js.map behind, and the build only writes). dist/dashboard is the
// dashboard build's own and is left alone.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');

function* outputs(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full !== path.join(dist, 'dashboard')) yield* outputs(full);
    } else if (/\.js(\.map)?$/.test(entry.name)) {
      yield full;
    }
  }
}

for (const output of outputs(dist)) {
  const source = path.join(root, path.relative(dist, output)).replace(/\.js(\.map)?$/, '');
  if (!existsSync(`${source}.ts`) && !existsSync(`${source}.tsx`)) rmSync(output);
}
