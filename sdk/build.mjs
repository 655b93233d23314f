// Bundles each TypeScript plugin into the one JavaScript file the core ships (DESIGN.md §11):
// plugins/<id>/index.ts -> plugins/<id>/bundle.js, and the core's test plugins under
// sdk/test-plugins/ the same way. `--check` builds in memory and fails, naming each plugin,
// when a committed bundle differs from what its source builds to (scripts/test.sh runs it).
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = dirname(fileURLToPath(import.meta.url));
const root = dirname(sdk);
const check = process.argv.includes('--check');

function pluginDirs(parent) {
  if (!existsSync(parent)) return [];
  return readdirSync(parent, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(parent, e.name, 'index.ts')))
    .map((e) => join(parent, e.name))
    .sort();
}

async function bundle(dir) {
  const result = await build({
    entryPoints: [join(dir, 'index.ts')],
    bundle: true,
    write: false,
    // The core evaluates the bundle as a script and reads `__pkuBundle.default`.
    format: 'iife',
    globalName: '__pkuBundle',
    platform: 'neutral',
    target: 'es2020',
    minify: true,
    charset: 'utf8',
    legalComments: 'none',
    alias: { '@pku-harness/sdk': join(sdk, 'src', 'index.ts') },
    nodePaths: [join(sdk, 'node_modules')],
    mainFields: ['module', 'main'],
    // A tool written twice in `tools: {…}` would silently keep the last one: refuse it here.
    logOverride: { 'duplicate-object-key': 'error' },
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

const stale = [];
let failed = false;
for (const dir of [...pluginDirs(join(root, 'plugins')), ...pluginDirs(join(sdk, 'test-plugins'))]) {
  const name = relative(root, dir);
  let text;
  try {
    text = await bundle(dir);
  } catch (e) {
    failed = true;
    const messages = (e.errors ?? []).map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`);
    console.error(`plugin ${name} does not build:\n  ${messages.join('\n  ') || e.message}`);
    continue;
  }
  const out = join(dir, 'bundle.js');
  const committed = existsSync(out) ? readFileSync(out, 'utf8') : null;
  if (check) {
    if (committed !== text) stale.push(name);
  } else if (committed !== text) {
    writeFileSync(out, text);
    console.log(`built ${relative(root, out)} (${text.length} bytes)`);
  }
}
if (stale.length > 0) {
  console.error(
    `these bundles differ from what their TypeScript builds to: ${stale.join(', ')}\n` +
      `rebuild them with \`node sdk/build.mjs\` and commit the bundle.js files`,
  );
}
process.exit(failed || stale.length > 0 ? 1 : 0);
