// JSON Schema validation for the core (core/src/schema.rs, DESIGN.md §2): a maintained
// validator, @cfworker/json-schema, run in the library's own ECMAScript engine. JSON Schema
// gives `pattern` ECMA-262's regular expressions, which the engine has; a validator in Rust
// links a second and third regex engine, 2 MB of the library's 10 MiB (docs/size.md). Built by
// sdk/build.mjs into sdk/validator.js; the core stores it deflated and evaluates it once per
// thread that validates. The core writes every problem's words from the units returned here.
import './url';
import { format, Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import draft07 from './json-schema-draft-07.json';

/** The draft a schema names in `$schema`; 2020-12 (what zod emits) when it names none. */
function draftOf(schema: unknown): SchemaDraft {
  const named = typeof schema === 'object' && schema !== null ? (schema as Schema).$schema : undefined;
  if (typeof named !== 'string') return '2020-12';
  if (named.includes('draft-04')) return '4';
  if (named.includes('draft-06') || named.includes('draft-07')) return '7';
  if (named.includes('2019-09')) return '2019-09';
  return '2020-12';
}

// `format` asserts in drafts 4 to 7 and only annotates from 2019-09 on, unless a schema's
// vocabulary asks otherwise (JSON Schema 2020-12 Validation §7.2): the validator asserts
// every format it knows, so each validation sets which it knows.
const formats = { ...format };
function assertFormats(draft: SchemaDraft): void {
  const assert = draft === '4' || draft === '7';
  for (const name of Object.keys(formats) as (keyof typeof formats)[]) {
    if (assert) format[name] = formats[name];
    else delete (format as Partial<typeof formats>)[name];
  }
}

// A schema is checked against the draft-07 meta-schema, whatever its draft: it names every
// keyword a tool's schema uses with the same meaning in each draft, and lets any other keyword
// through. Its `format: "regex"` compiles each `pattern` as the validator will.
const meta = new Validator(draft07 as Schema, '7', true);

/** Compiled validators by schema text: a tool's schema is compiled on its first validation. */
const compiled = new Map<string, { validator: Validator; draft: SchemaDraft }>();
const MAX_COMPILED = 512;

function compiledFor(schemaText: string) {
  let entry = compiled.get(schemaText);
  if (entry === undefined) {
    const schema = JSON.parse(schemaText) as Schema | boolean;
    const draft = draftOf(schema);
    entry = { validator: new Validator(schema, draft, false), draft };
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(schemaText, entry);
  }
  return entry;
}

/** Each gives the units of the keywords that failed, as JSON: `[]` when there are none. */
const schemaChecks = {
  /** `schemaText` against the meta-schema. */
  check(schemaText: string): string {
    const schema = JSON.parse(schemaText) as Schema | boolean;
    assertFormats('7');
    // A draft-04 schema writes `exclusiveMinimum` as a boolean, which draft-07 refuses.
    const units: OutputUnit[] = draftOf(schema) === '4' ? [] : meta.validate(schema).errors;
    if (units.length === 0) compiledFor(schemaText);
    return JSON.stringify(units);
  },
  /** `instanceText` against the schema `schemaText`. */
  validate(schemaText: string, instanceText: string): string {
    const { validator, draft } = compiledFor(schemaText);
    assertFormats(draft);
    return JSON.stringify(validator.validate(JSON.parse(instanceText)).errors);
  },
};

Object.defineProperty(globalThis, '__pkuSchema', { value: Object.freeze(schemaChecks) });
