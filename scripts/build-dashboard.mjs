// Builds the browser dashboard (src/dashboard) into dist/dashboard: one JavaScript and one CSS
// file named by their content's hash (cached for good), and index.html naming them.
// `scripts/build.sh` runs it after compiling the service; scripts/typecheck.sh checks its types.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const out = path.join(root, 'dist', 'dashboard');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  entryPoints: { app: path.join(root, 'src', 'dashboard', 'main.tsx') },
  bundle: true, minify: true, format: 'esm', target: 'es2020', jsx: 'automatic', jsxImportSource: 'preact',
  outdir: path.join(out, 'assets'), entryNames: '[name]-[hash]', metafile: true, legalComments: 'none', logLevel: 'warning',
});
const asset = (ext) => `/dashboard/assets/${path.basename(Object.keys(result.metafile.outputs).find((file) => file.endsWith(ext)))}`;
writeFileSync(path.join(out, 'index.html'), `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox dashboard</title>
<link rel="icon" type="image/svg+xml" href="/favicon.ico">
<link rel="stylesheet" href="${asset('.css')}">
<script type="module" src="${asset('.js')}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The dashboard needs JavaScript. Everything it shows is also in the API: see /v1/openapi.json.</noscript>
</body>
</html>
`);
