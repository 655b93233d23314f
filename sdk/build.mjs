// Bundles each TypeScript plugin into the one JavaScript file the core ships (DESIGN.md §11):
// plugins/<id>/index.ts -> plugins/<id>/bundle.js, and the core's test plugins under
// sdk/test-plugins/ the same way. A plugin's bundle leaves out the SDK and zod: it reads them
// from `globalThis.__pkuModules`, which sdk/runtime.js (the SDK and zod, bundled once from
// sdk/src/runtime.ts) sets up in each plugin's runtime before the bundle runs. `--check` builds in memory and fails, naming each plugin,
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

/** The modules a plugin imports from the runtime instead of bundling its own copy. */
const SHARED = ['@pku-harness/sdk', 'zod'];

const shared = {
  name: 'pku-shared-modules',
  setup(build) {
    build.onResolve({ filter: /^(@pku-harness\/sdk|zod)(\/.*)?$/ }, (args) => {
      if (!SHARED.includes(args.path)) {
        return { errors: [{ text: `import "${SHARED.join('" or "')}", not "${args.path}"` }] };
      }
      return { path: args.path, namespace: 'pku-shared' };
    });
    build.onLoad({ filter: /.*/, namespace: 'pku-shared' }, (args) => ({
      contents: `module.exports = globalThis.__pkuModules[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  write: false,
  platform: 'neutral',
  target: 'es2020',
  minify: true,
  charset: 'utf8',
  legalComments: 'none',
  nodePaths: [join(sdk, 'node_modules')],
  mainFields: ['module', 'main'],
  logLevel: 'silent',
};

async function bundle(dir) {
  const result = await build({
    ...common,
    entryPoints: [join(dir, 'index.ts')],
    // The core evaluates the bundle as a script and reads `__pkuBundle.default`.
    format: 'iife',
    globalName: '__pkuBundle',
    plugins: [shared],
    // A tool written twice in `tools: {…}` would silently keep the last one: refuse it here.
    logOverride: { 'duplicate-object-key': 'error' },
  });
  return result.outputFiles[0].text;
}

async function runtime() {
  const result = await build({
    ...common,
    entryPoints: [join(sdk, 'src', 'runtime.ts')],
    format: 'iife',
  });
  return result.outputFiles[0].text;
}

const stale = [];
let failed = false;
const outputs = [[sdk, 'runtime.js', runtime]];
for (const dir of [...pluginDirs(join(root, 'plugins')), ...pluginDirs(join(sdk, 'test-plugins'))]) {
  outputs.push([dir, 'bundle.js', () => bundle(dir)]);
}
for (const [dir, file, make] of outputs) {
  const name = file === 'runtime.js' ? 'the SDK runtime' : relative(root, dir);
  let text;
  try {
    text = await make();
  } catch (e) {
    failed = true;
    const messages = (e.errors ?? []).map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`);
    console.error(`${name} does not build:\n  ${messages.join('\n  ') || e.message}`);
    continue;
  }
  const out = join(dir, file);
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
