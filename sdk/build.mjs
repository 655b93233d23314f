// Bundles each TypeScript plugin into the one JavaScript file the core ships (DESIGN.md §11):
// plugins/<id>/index.ts -> plugins/<id>/bundle.js, and the core's test plugins under
// sdk/test-plugins/ the same way. A plugin's bundle leaves out the SDK and zod: it reads them
// from `globalThis.__pkuModules`, which sdk/runtime.js (the SDK and zod, bundled once from
// sdk/src/runtime.ts) sets up in each plugin's runtime before the bundle runs. Beside each
// shipped plugin's bundle, plugins/<id>/manifest.json: the exact JSON its `__pku.manifest()`
// gives, read here by evaluating the SDK runtime and the bundle in a `vm` context, so the core
// reads a shipped plugin's manifest as JSON at open and runs no JavaScript until its first call
// (`plugins::script::Shipped`; a core test checks QuickJS reads the same JSON from the bundle).
// `--check` builds in memory and fails, naming each plugin, when a committed bundle or manifest
// differs from what its source builds to (scripts/test.sh runs it).
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext, runInContext } from 'node:vm';

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

/** One of the SDK's own scripts (sdk/src/<name>.ts), bundled whole with what it imports. */
async function script(name) {
  const result = await build({
    ...common,
    entryPoints: [join(sdk, 'src', `${name}.ts`)],
    format: 'iife',
  });
  return result.outputFiles[0].text;
}

/**
 * The JSON a bundle's `__pku.manifest()` gives in the core (core/src/plugins/script_prelude.js:
 * `JSON.stringify(__pkuBundle.default.manifest)`), with the SDK runtime evaluated before it as
 * the core does.
 */
function manifestOf(runtimeText, bundleText) {
  const context = createContext({});
  runInContext(runtimeText, context);
  runInContext(bundleText, context);
  return runInContext('JSON.stringify(__pkuBundle.default.manifest)', context);
}

const stale = [];
let failed = false;
// The SDK runtime first: each shipped manifest is read with the runtime as built.
let runtimeText;
const outputs = [
  [sdk, 'runtime.js', () => script('runtime')],
  // The JSON Schema validator the core runs (core/src/schema.rs), not a plugin's.
  [sdk, 'validator.js', () => script('validator')],
];
for (const dir of pluginDirs(join(root, 'plugins'))) {
  let bundleText;
  outputs.push([dir, 'bundle.js', async () => (bundleText = await bundle(dir))]);
  // Only the shipped plugins: the core loads sdk/test-plugins as an author's bundles, reading
  // their manifests from the bundle.
  outputs.push([
    dir,
    'manifest.json',
    async () => {
      if (bundleText === undefined || runtimeText === undefined) {
        throw new Error('its bundle or the SDK runtime does not build');
      }
      return manifestOf(runtimeText, bundleText);
    },
  ]);
}
for (const dir of pluginDirs(join(sdk, 'test-plugins'))) {
  outputs.push([dir, 'bundle.js', () => bundle(dir)]);
}
for (const [dir, file, make] of outputs) {
  const name =
    file === 'runtime.js'
      ? 'the SDK runtime'
      : file === 'validator.js'
        ? 'the schema validator'
        : `${relative(root, dir)}/${file}`;
  let text;
  try {
    text = await make();
  } catch (e) {
    failed = true;
    const messages = (e.errors ?? []).map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`);
    console.error(`${name} does not build:\n  ${messages.join('\n  ') || e.message}`);
    continue;
  }
  if (file === 'runtime.js') runtimeText = text;
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
    `these files differ from what their TypeScript builds to: ${stale.join(', ')}\n` +
      `rebuild them with \`scripts/check-bundles.sh --write\` and commit the bundle.js and manifest.json files`,
  );
}
process.exit(failed || stale.length > 0 ? 1 : 0);
