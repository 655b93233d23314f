// @pku-harness/sdk: plugins written in TypeScript (seed 004, DESIGN.md §2 and §11).
//
// `definePlugin` turns what an author writes into the manifest the core checks like every
// other kind's (ids, exactly one effect, data sources, JSON Schema, grants) and the code it
// runs. Inputs are zod schemas; the model sees the JSON Schema zod 4 emits from them, with
// each field's `.describe()` text. The core validates every input against that schema before
// `execute` runs (seed 000's invoke order, step 3); `execute` is handed that input as zod parses
// it (defaults filled in, transforms applied).

import { z } from 'zod';

declare global {
  /**
   * The runtime's one timer: calls `callback` after `ms` milliseconds, during a tool call only
   * (elsewhere it throws), at most 16 waiting at once in one call; the call's 30 s deadline
   * bounds it, and a timer still waiting when the call ends never fires.
   */
  function setTimeout(callback: () => void, ms?: number): number;
  /** Stops a timer that has not fired. */
  function clearTimeout(id: number): void;
  /** The runtime's only console: each line goes to the app's log, never to the student or the model. */
  const console: {
    log(...values: unknown[]): void;
    info(...values: unknown[]): void;
    warn(...values: unknown[]): void;
    error(...values: unknown[]): void;
  };
}

/** What a tool changes (seed 004). If more than one applies, pick the strongest. */
export type Effect = 'read' | 'write' | 'money' | 'public';

/** What the agent may do with an effect's tools (seed 000). */
export type Mode = 'auto' | 'ask' | 'off';

/** Who made the call (seed 004: "Who calls a tool"). */
export type Actor = 'user' | 'agent' | 'scheduler';

/** The turn an agent's call is made in. */
export interface Turn {
  sessionId: string;
  /** The turn has taken in untrusted content, as of this call. */
  tainted: boolean;
  /** The turn started from the user's own words, not a scheduled job or a plugin's message. */
  userAsked: boolean;
}

/** One request to a campus service, on the service's own host (DESIGN.md §10). */
export interface CampusRequest {
  /** The path on the service's host, e.g. '/berserker-app/ykt/tsm/queryCard'. */
  path: string;
  /** 'GET' unless given. */
  method?: string;
  /** Query pairs, in order. */
  query?: [string, string][];
  /** A JSON body, sent as application/json. */
  body?: unknown;
  /**
   * A form, sent as application/x-www-form-urlencoded in its order (e.g. the portal's notices:
   * [['keyword', 'ALL'], ['limit', '20'], ['start', '0']]). Give `body` or `form`, not both.
   */
  form?: [string, string][];
}

/**
 * A campus service's answer with the session the core added redacted, or a status object: the
 * student must sign in again, or confirm a second factor (`check` names which when it is not
 * Treehole's own SMS check: 'grades', the course API's authorization).
 */
export type CampusResponse =
  /** `location`: where a redirect within the service's host points, its path and query. */
  | { status: number; body: unknown; location?: string }
  | { status: 'signin_required' }
  | { status: 'verification_required'; methods: string[]; check?: string };

/** What a running tool may reach: the capability gates (DESIGN.md §5) and the campus client. */
export interface Services {
  campus: {
    /** One request to a campus service ('portal', 'card', 'treehole'…) with the student's session. */
    request(service: string, request: CampusRequest): Promise<CampusResponse>;
  };
  http: {
    /** GET through the plugin's network grant and allowlist; the body as text. */
    get(url: string): Promise<string>;
  };
  store: {
    /** The value stored under `key`, or undefined. */
    get<T = unknown>(key: string): Promise<T | undefined>;
    /** Stores `value` (JSON) under `key`, on disk before this resolves. */
    set(key: string, value: unknown): Promise<void>;
  };
  context: {
    /** Replaces this plugin's lines in the agent's next prompt (4 KiB). */
    set(text: string): Promise<void>;
  };
  /** One line to the user, prefixed with the plugin's id by the host. */
  notify: ((text: string) => Promise<void>) & {
    /**
     * Shows the system's dialog for a permission and resolves with its answer, which the app
     * records ('unknown' where the phone has no such dialog). Only in a tool the student
     * tapped: a tool the agent or the scheduler calls is refused (seed 000).
     */
    fix(kind: 'notifications' | 'exact-alarm'): Promise<PermissionState>;
  };
  tools: {
    /** Calls a bundled tool named in the plugin's `allow_tools`, through the invoke path. */
    call<T = unknown>(toolId: string, args?: Record<string, unknown>): Promise<T>;
  };
  messages: {
    /** Sends a message to the agent as a new turn of this conversation. */
    send(text: string): Promise<void>;
  };
  /**
   * PKU harness Cloud: the plugin's own records, end-to-end encrypted (the cloud reads neither
   * values nor key names) and shared by the student's devices. Each call throws
   * CloudError('consent_required') without the plugin's "Allow cloud" switch,
   * CloudError('unavailable') with no cloud set up or reachable.
   */
  cloud: {
    /** The record under `key` (1–128 characters) with its version, or null. */
    get<T = unknown>(key: string): Promise<{ value: T; version: number } | null>;
    /**
     * Writes a JSON value (at most 65,496 bytes as JSON with its key). With `ifVersion`, only
     * over that version: CloudError('conflict') when another write came first. Over the
     * account's 10 MiB, CloudError('quota_exceeded'). Resolves with the version written.
     */
    set(key: string, value: unknown, options?: { ifVersion?: number }): Promise<{ version: number }>;
    /** The plugin's records: keys and versions, by key. */
    list(): Promise<Array<{ key: string; version: number }>>;
    /** Deletes the record (with `ifVersion`, only over that version). */
    delete(key: string, options?: { ifVersion?: number }): Promise<void>;
    /** The same operations by name: call('get', { key }), call('set', { key, value, ifVersion }). */
    call<T = unknown>(operation: string, args?: unknown): Promise<T>;
  };
  files: {
    /**
     * Opens the phone's file picker (text, Markdown or PDF) and resolves with the file's text,
     * read by the app's own rule (at most 16 MiB of file, 1 MiB of text), or null when the
     * student picked nothing. Only in a tool the student tapped: a tool the agent or the
     * scheduler calls is refused (seed 000: only the user chooses files).
     */
    pick(): Promise<PickedFile | null>;
  };
  time: {
    /**
     * Campus time: 明天第3-4节, 第12周星期二, 下周三下午3点, 单周周四 as exact Beijing times, from
     * PKU's class periods and the semester's first Monday (the core's `time.resolve`). Rejects
     * with the words it could not read.
     */
    resolve(text: string): Promise<CampusTime>;
  };
}

/** A campus time, resolved by the core. */
export interface CampusTime {
  /** 'YYYY-MM-DD HH:mm', Beijing. */
  start: string;
  /** 'YYYY-MM-DD HH:mm', Beijing: equal to `start` for a moment, the next day's 00:00 for a whole day. */
  end: string;
  startMs: number;
  endMs: number;
  /** 'YYYY-MM-DD' of `start`. */
  date: string;
  /** 1 (Monday) to 7 (Sunday). */
  weekday: number;
  /** The teaching week (1 from the semester's first Monday); null before the semester. */
  week: number | null;
  /** The class periods covered, when said in periods or a part of the day. */
  periods?: number[];
  allDay: boolean;
  timeZone: 'Asia/Shanghai';
}

/** What a description function may read: the plugin's own store, as it stands. */
export interface DescriptionServices {
  store: {
    /** The value stored under `key`, or undefined. */
    get<T = unknown>(key: string): T | undefined;
  };
}

/** A system permission's state as the phone's dialog answered it. */
export type PermissionState = 'granted' | 'denied' | 'unknown';

/** A file the student picked, as text. */
export interface PickedFile {
  /** Its name, e.g. '课程表.pdf'. */
  name: string;
  /** Its text: a PDF's pages' text, a text file as it is. */
  text: string;
}

/**
 * The time the core says it is, in the time zone the student set: the engine has no time-zone
 * data of its own, so use this rather than `Date` for anything shown or compared locally.
 */
export interface LocalNow {
  /** Milliseconds since the Unix epoch. */
  ms: number;
  /** The IANA zone, e.g. 'Asia/Shanghai'. */
  timeZone: string;
  /** The zone's offset from UTC now, in minutes (480 in Beijing). */
  offsetMinutes: number;
  /** 'YYYY-MM-DD HH:mm', local. */
  local: string;
  /** 'YYYY-MM-DD', local. */
  date: string;
  /** ISO weekday: 1 is Monday, 7 is Sunday. */
  weekday: number;
}

/** What a running tool is told about its call. */
export interface ToolContext {
  actor: Actor;
  /** The time of the call. */
  now: LocalNow;
  /** Set when the agent calls the tool during a conversation. */
  turn?: Turn;
  /** How a grant tool's prompt was answered. */
  grant?: 'once' | 'always';
  services: Services;
}

/**
 * A PKU harness Cloud refusal, by its code: `consent_required` (the plugin's cloud switch is
 * off), `unavailable` (no cloud set up, or it cannot be reached), `quota_exceeded` (the account
 * holds 10 MiB), `conflict` (a set or delete with `ifVersion` that another write beat).
 */
export class CloudError extends Error {
  constructor(public readonly code: string) {
    super(code);
    this.name = 'CloudError';
  }
}

/** A tool as its author writes it (seed 004: "Anatomy of a tool"). */
export interface ToolDef<S extends z.ZodType = z.ZodType, O = unknown> {
  /** A short Chinese title shown to users. The English one goes in i18n.en.tools.<name>.title. */
  title: string;
  /**
   * For the model: when and how to use the tool, with units, formats and limits. Or a function
   * of the services that writes it each time a turn offers the tool (Dynamic<string>), e.g.
   * from what the plugin stored; it reads the store only, must be quick (100 ms) and must not
   * throw with nothing stored (that text is the one the plugin's page and a failure fall back to).
   */
  description: string | ((services: DescriptionServices) => string);
  /**
   * The input; give every field a .describe(), the model reads it. Every object in it is strict
   * in the JSON Schema the model sees and the core checks (`additionalProperties: false`), as
   * `z.strictObject` is: a property the schema does not name is refused before `execute`, so a
   * call meant for another tool does not run here. `z.looseObject` accepts other properties.
   */
  input: S;
  effect: Effect;
  /** The result holds text written by third parties (forum posts, notices…). */
  untrusted?: boolean;
  /** Only the user may start it; hidden from the model, refused for the agent and the scheduler. */
  userOnly?: boolean;
  /** The tool grants the agent access it does not have yet; asks on every agent call. */
  grant?: boolean;
  /** Asks on every agent call, with no "always allow". */
  alwaysAsk?: boolean;
  /**
   * What the call acts on, shown as the approval prompt's headline (seed 000's resolveEffect):
   * a template whose `{field}` is replaced by that top-level input field.
   */
  target?: string;
  /**
   * seed 000's resolveEffect as code: names what this call acts on (e.g. the button about to be
   * tapped) from its input, or nothing. A call that names a target asks the agent every time,
   * with the target as the prompt's headline and no "always allow". It runs in the decision,
   * before the call and before any prompt: keep it quick (100 ms) and pure — `ctx` is not
   * there, and a throw refuses the call.
   */
  resolveEffect?: (input: z.infer<S>) => string | undefined;
  /**
   * A money tool's amount: the top-level input field that holds it and its unit. The core holds
   * the call to the student's limits per payment and per day (settings money.perPaymentYuan and
   * money.perDayYuan): an agent's call past either is refused `over_limit`; the approval sheet's
   * headline is the amount in 元. Only on a money tool; the field must be in `input`.
   */
  amount?: { field: keyof z.infer<S> & string; unit: 'yuan' | 'fen' };
  /** A money tool's payee: the top-level input field naming whom the money goes to. A payee the
   * plugin has never paid is always asked, Allow or Deny only. */
  payee?: { field: keyof z.infer<S> & string };
  /**
   * Words for the top-level fields of the input and of the result, as the approval sheet labels
   * the call's inputs and the chat the result's rows:
   * `{ balanceYuan: { zh: '余额（元）', en: 'Balance (yuan)' } }`. Give every field words: one
   * without is shown by its name made readable (`spentTodayYuan` → "Spent today (yuan)"), an
   * English word on a Chinese screen.
   */
  labels?: Record<string, FieldLabel>;
  /**
   * What a read tool's result holds when it is no status object: a `z.object({...})` of its
   * top-level fields, each with a .describe() saying its unit (`z.number().describe('yuan')`).
   * Turned into JSON Schema in the manifest (`output`); the job tool, the jobs form and a job's
   * condition read the fields from it (a condition on a field it does not name is refused when
   * the job is made). It describes the result; the core does not check a result against it.
   */
  output?: z.ZodObject;
  /** Runs an allowed call. Throw an Error the user can understand; return status objects for recoverable states. */
  execute: (input: z.infer<S>, ctx: ToolContext) => Promise<O>;
}

/** A result field's label; `en` falls back to `zh`. */
export interface FieldLabel {
  zh: string;
  en?: string;
  /**
   * An input field's values in words, by the value the tool takes:
   * `{ today: { zh: '今天', en: 'Today' } }`. A screen's form shows its choices and the approval
   * sheet the value by these; a value without words is shown as it is, an English word on a
   * Chinese screen.
   */
  values?: Record<string, FieldLabel>;
}

/** One data source: a read tool of this plugin, cached for `ttlMs` (seed 004). */
export interface DataSourceDef {
  title: string;
  /** The name of a read tool of this plugin. */
  tool: string;
  args?: Record<string, unknown>;
  ttlMs: number;
}

/**
 * One section of a plugin's screen (DESIGN.md §2): `value`, `list` and `table` show a data
 * source (`source`) or a read tool's result (`tool`, `args`); `form` calls `tool` with inputs
 * typed by its schema and `action` calls a tool that takes no input, each only on the
 * student's tap. A list or table shows the result's array `items`, each item's `fields`.
 */
export interface SectionDef {
  show: 'value' | 'list' | 'table' | 'form' | 'action';
  title?: FieldLabel;
  source?: string;
  tool?: string;
  args?: Record<string, unknown>;
  fields?: string[];
  items?: string;
  /** The item field a list or table is sorted on, smallest first unless `descending`. */
  sortBy?: string;
  descending?: boolean;
  /** The item fields' labels (the tool's `labels` name its top-level fields). */
  labels?: Record<string, FieldLabel>;
  /** What an empty list or table says. */
  empty?: FieldLabel;
  /**
   * A list's or table's item tap: opens `screen` (of this plugin), its first form (of a read
   * tool) given `args`, each input named by the item's field that gives it (`{ pid: 'pid' }`).
   * A screen an item opens is reached from its items only, never listed on the plugin's page.
   */
  opens?: { screen: string; args: Record<string, string> };
}

/** A screen of the plugin, drawn by the app from this data: no plugin code runs in it. */
export interface ScreenDef {
  id: string;
  title: FieldLabel;
  sections: SectionDef[];
}

/** What a plugin may reach (seed 001's grants; each one off unless granted). */
export interface Grants {
  allow_network?: boolean;
  url_allowlist?: string[];
  allow_store?: boolean;
  allow_context?: boolean;
  allow_tools?: string[];
  allow_send_message?: boolean;
}

/** A plugin as its author writes it. */
export interface PluginDef {
  /** Lowercase letters, digits and `-`; tools become `<id>.<name>`. */
  id: string;
  /** The Chinese title shown to users. */
  title: string;
  /** What the plugin is for, in Chinese, as the student reads it on its page; the English one in i18n.en.description. */
  description?: string;
  i18n?: Record<
    string,
    { title?: string; description?: string; examples?: string[]; tools?: Record<string, { title: string }>; cloud?: CloudDef }
  >;
  /** Requests a student might make of the plugin, in Chinese (the English ones in
   * i18n.en.examples): the empty chat offers a few, each a tap that sends it. */
  examples?: string[];
  /** What the phone must provide: 'campus-session', 'notifications', 'exact-alarm'… */
  requires?: string[];
  /** The campus sites and services the plugin reaches, shown on its page. */
  scopes?: string[];
  /** Stricter defaults than the bundled table's `auto`, e.g. { money: 'ask' } (seed 000). */
  defaultModes?: Partial<Record<Effect, Mode>>;
  /** The tools, by name. */
  tools: Record<string, ToolDef<any, any>>;
  dataSources?: Record<string, DataSourceDef>;
  /** The plugin's own screens, declared as data. */
  screens?: ScreenDef[];
  grants?: Grants;
  /** PKU harness Cloud: what the plugin stores online through ctx.services.cloud. */
  cloud?: CloudDef;
}

/**
 * A plugin's PKU harness Cloud declaration: `disclosures`, in Chinese, one plain line each of
 * what it stores online, listed beside its Allow cloud switch and on the consent screen; the
 * English lines, one for each, in i18n.en.cloud.disclosures.
 */
export interface CloudDef {
  disclosures: string[];
}

/** A tool's manifest entry, as the core reads it. */
export interface ToolManifest {
  name: string;
  title: string;
  description: string;
  effect: Effect;
  input: Record<string, unknown>;
  untrusted?: boolean;
  userOnly?: boolean;
  grant?: boolean;
  alwaysAsk?: boolean;
  target?: string;
  amount?: { field: string; unit: 'yuan' | 'fen' };
  payee?: { field: string };
  resolvesEffect?: boolean;
  describes?: boolean;
  labels?: Record<string, FieldLabel>;
  output?: Record<string, unknown>;
}

/** What the core reads from a bundle when it loads it. */
export interface DefinedPlugin {
  manifest: Omit<PluginDef, 'tools'> & { tools: ToolManifest[] };
  execute(name: string, input: unknown, ctx: ToolContext): Promise<unknown>;
  /** The target a tool's resolveEffect names for `input`, if it has one. */
  resolve(name: string, input: unknown): string | undefined;
  /** The description a tool's function writes now, if it has one. */
  describe(name: string, services: DescriptionServices): string | undefined;
}

/** A problem in a plugin's definition, naming the manifest field to fix. */
export class DefinitionError extends Error {
  constructor(
    public readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'DefinitionError';
  }
}

/** Declares one tool; see ToolDef. */
export function defineTool<S extends z.ZodType, O>(def: ToolDef<S, O>): ToolDef<S, O> {
  return def;
}

/** Declares the plugin; the bundle's default export. */
export function definePlugin(def: PluginDef): DefinedPlugin {
  if ('disclosure' in def) {
    throw new DefinitionError(
      'cloud.disclosures',
      'the plugin\'s disclosure lines are now cloud: { disclosures: [...] } (their English in i18n.en.cloud.disclosures)',
    );
  }
  const disclosures = def.cloud?.disclosures;
  if (def.cloud !== undefined && (!Array.isArray(disclosures) || disclosures.some((l) => typeof l !== 'string'))) {
    throw new DefinitionError('cloud.disclosures', 'a list of lines (strings) saying what the plugin stores online');
  }
  const { tools, ...rest } = def;
  const entries = Object.entries(tools ?? {});
  const manifestTools = entries.map(([name, tool], index) => toolManifest(name, tool, index));
  const byName = new Map(entries);
  // The host builds CloudError refusals with this class, so `instanceof CloudError` holds.
  (globalThis as { __pkuCloudError?: typeof CloudError }).__pkuCloudError = CloudError;
  return {
    manifest: { ...rest, tools: manifestTools },
    execute(name, input, ctx) {
      const tool = byName.get(name);
      if (!tool) {
        return Promise.reject(new Error(`this plugin has no tool "${name}"`));
      }
      // The core has checked the input against the JSON Schema; zod's own parse gives `execute`
      // what `z.infer` promises it: defaults filled in, `.trim()` and other transforms applied.
      const parsed = tool.input.safeParse(input);
      if (!parsed.success) {
        const issues = parsed.error.issues.map(
          (i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join('.') || 'input'}: ${i.message}`,
        );
        return Promise.reject(new Error(`the input of tool "${name}" does not fit: ${issues.join('; ')}`));
      }
      return tool.execute(parsed.data, ctx);
    },
    describe(name, services) {
      const description = byName.get(name)?.description;
      if (typeof description !== 'function') return undefined;
      const text: unknown = description(services);
      if (typeof text !== 'string') {
        throw new Error(`the description of tool "${name}" answered a ${typeof text}, not a string`);
      }
      return text;
    },
    resolve(name, input) {
      const resolveEffect = byName.get(name)?.resolveEffect;
      if (!resolveEffect) return undefined;
      const parsed = byName.get(name)!.input.safeParse(input);
      if (!parsed.success) throw new Error(`the input of tool "${name}" does not fit`);
      const target: unknown = resolveEffect(parsed.data);
      if (target === undefined || target === null) return undefined;
      if (typeof target !== 'string') {
        throw new Error(`resolveEffect of tool "${name}" answered a ${typeof target}, not a string`);
      }
      return target;
    },
  };
}

/** A description function's text with nothing stored: the manifest's description. */
function written(name: string, description: (services: DescriptionServices) => string, index: number): string {
  const empty: DescriptionServices = Object.freeze({ store: Object.freeze({ get: () => undefined }) });
  let text: unknown;
  try {
    text = description(empty);
  } catch (e) {
    throw new DefinitionError(
      `tools[${index}].description`,
      `the description of tool "${name}" threw with nothing stored: ${(e as Error).message}`,
    );
  }
  if (typeof text !== 'string') {
    throw new DefinitionError(`tools[${index}].description`, `the description of tool "${name}" is not a string`);
  }
  return text;
}

/** zod's bounds of a safe integer, which `.int()` emits and which tell a model nothing. */
const SAFE_INTEGER_BOUNDS: Record<string, number> = {
  maximum: Number.MAX_SAFE_INTEGER,
  minimum: Number.MIN_SAFE_INTEGER,
};

/**
 * Each JSON Schema node as the model reads it and the core checks it: an object that says
 * nothing of other properties is strict (`z.object` strips them, which the core cannot do, so a
 * stray argument would otherwise pass unseen); `.int()`'s safe-integer bounds go (noise in every
 * request); a pattern spells `\d` as `[0-9]`, the same digits in a JavaScript pattern, which
 * schema grammars such as llama.cpp's refuse.
 */
function forTheModel(ctx: { jsonSchema: Record<string, unknown> }): void {
  const node = ctx.jsonSchema;
  if (node.type === 'object' && node.additionalProperties === undefined) node.additionalProperties = false;
  for (const [bound, value] of Object.entries(SAFE_INTEGER_BOUNDS)) {
    if (node[bound] === value) delete node[bound];
  }
  if (typeof node.pattern === 'string') node.pattern = digitsAsRange(node.pattern);
}

/** `\d` as `[0-9]` (inside a class `[...]`, as `0-9`); every other escape as written. */
export function digitsAsRange(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[++i];
      out += next === 'd' ? (inClass ? '0-9' : '[0-9]') : c + next;
    } else {
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      out += c;
    }
  }
  return out;
}

/** A tool's declared result as JSON Schema: an object, its fields and their words. */
function outputSchema(name: string, output: unknown, index: number): Record<string, unknown> {
  if (!(output instanceof z.ZodObject)) {
    throw new DefinitionError(`tools[${index}].output`, `the output of tool "${name}" is a z.object({...}) of its result's fields`);
  }
  let schema: Record<string, unknown>;
  try {
    // `io: 'output'`: the schema of what the tool returns.
    schema = z.toJSONSchema(output, { io: 'output' }) as Record<string, unknown>;
  } catch (e) {
    throw new DefinitionError(
      `tools[${index}].output`,
      `the zod schema of tool "${name}"'s output has no JSON Schema: ${(e as Error).message}`,
    );
  }
  delete schema.$schema;
  return schema;
}

function toolManifest(name: string, tool: ToolDef, index: number): ToolManifest {
  let input: Record<string, unknown>;
  try {
    // `io: 'input'`: the schema of what the caller sends (defaults optional), which is what the
    // core validates against.
    input = z.toJSONSchema(tool.input, { io: 'input', override: forTheModel }) as Record<string, unknown>;
  } catch (e) {
    throw new DefinitionError(
      `tools[${index}].input`,
      `the zod schema of tool "${name}" has no JSON Schema: ${(e as Error).message}`,
    );
  }
  delete input.$schema;
  const out: ToolManifest = {
    name,
    title: tool.title,
    description: typeof tool.description === 'function' ? written(name, tool.description, index) : tool.description,
    effect: tool.effect,
    input,
  };
  if (typeof tool.description === 'function') out.describes = true;
  for (const flag of ['untrusted', 'userOnly', 'grant', 'alwaysAsk'] as const) {
    if (tool[flag] !== undefined) out[flag] = tool[flag];
  }
  if (tool.target !== undefined) out.target = tool.target;
  if (tool.amount !== undefined) out.amount = { field: tool.amount.field, unit: tool.amount.unit };
  if (tool.payee !== undefined) out.payee = { field: tool.payee.field };
  if (tool.resolveEffect !== undefined) {
    if (typeof tool.resolveEffect !== 'function') {
      throw new DefinitionError(`tools[${index}].resolveEffect`, `the resolveEffect of tool "${name}" is not a function`);
    }
    out.resolvesEffect = true;
  }
  if (tool.labels !== undefined) out.labels = tool.labels;
  if (tool.output !== undefined) out.output = outputSchema(name, tool.output, index);
  return out;
}
