// The host's side of a TypeScript plugin's runtime (plugins::script): evaluated before the
// bundle, it builds each call's `ctx.services` on one host function and hands the host back
// each call's outcome. Nothing else reaches outside the runtime.
(() => {
  'use strict';
  const host = globalThis.__pkuHost;
  const log = globalThis.__pkuLog;
  const read = globalThis.__pkuRead;
  delete globalThis.__pkuHost;
  delete globalThis.__pkuLog;
  delete globalThis.__pkuRead;
  // The host keeps 4 KiB of a line (UTF-8), cut and marked; no more than it could keep crosses
  // to it. A UTF-16 code unit is at least one byte, so 4097 units are always over the bound;
  // a pair's first half is not sent alone.
  const LOG_UNITS = 4098;
  const bounded = (text) => {
    if (text.length <= LOG_UNITS) return text;
    const cut = text.slice(0, LOG_UNITS);
    const last = cut.charCodeAt(LOG_UNITS - 1);
    return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
  };
  const line = (args) => bounded(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  globalThis.console = Object.freeze({
    log: (...args) => log(line(args)),
    info: (...args) => log(line(args)),
    warn: (...args) => log(line(args)),
    error: (...args) => log(line(args)),
  });

  const pending = new Map();
  const outcomes = new Map();
  // The call whose entry into the runtime is running: a timer set now is that call's.
  let current = 0;
  // Each waiting timer's callback, by the id of its request to the host.
  const timers = new Map();
  // How many timers each call has waiting.
  const waitingOf = new Map();
  const TIMERS_A_CALL = 16;

  // The one timer (the "one bounded setTimeout"): a request to the host, which waits
  // at most the rest of the call's deadline; it works only during a tool call, and ends with it.
  globalThis.setTimeout = (callback, ms) => {
    if (typeof callback !== 'function') throw new TypeError('setTimeout takes a function');
    if (current === 0) throw new Error('setTimeout works only during a tool call');
    const waiting = waitingOf.get(current) ?? 0;
    if (waiting >= TIMERS_A_CALL) {
      throw new RangeError(`at most ${TIMERS_A_CALL} timers wait at once in one tool call`);
    }
    const wait = Math.max(0, Math.floor(Number(ms) || 0));
    const id = host(current, 'timer', JSON.stringify([wait]));
    if (id <= 0) throw new Error('setTimeout: this tool call has ended');
    timers.set(id, [current, callback]);
    waitingOf.set(current, waiting + 1);
    return id;
  };
  globalThis.clearTimeout = (id) => {
    const timer = timers.get(id);
    if (!timer) return;
    timers.delete(id);
    waitingOf.set(timer[0], (waitingOf.get(timer[0]) ?? 1) - 1);
  };

  // The host queues a request only for the call whose code is running (0: that call has
  // ended; -1: these services are another call's), and past the call's bound in flight throws
  // a RangeError, here, before any promise.
  function request(call, op, args) {
    const id = host(call, op, JSON.stringify(args));
    if (id === 0) {
      return Promise.reject(new Error(`ctx.services.${op}: this tool call has ended; a service works only during its own call`));
    }
    if (id < 0) {
      return Promise.reject(new Error(`ctx.services.${op}: these services are another tool call's; a service works only during its own call`));
    }
    return new Promise((resolve, reject) => pending.set(id, [resolve, reject]));
  }

  function services(call) {
    const ask = (op, ...args) => request(call, op, args);
    const done = (op) => (...args) => ask(op, ...args).then(() => undefined);
    const notify = done('notify');
    notify.fix = (kind) => ask('notify.fix', kind);
    return Object.freeze({
      campus: Object.freeze({ request: (service, req) => ask('campus.request', service, req) }),
      http: Object.freeze({ get: (url) => ask('http.get', url) }),
      store: Object.freeze({
        get: (key) => ask('store.get', key).then((v) => (v === null ? undefined : v)),
        set: done('store.set'),
      }),
      context: Object.freeze({ set: done('context.set') }),
      notify: Object.freeze(notify),
      tools: Object.freeze({ call: (tool, args) => ask('tools.call', tool, args ?? {}) }),
      messages: Object.freeze({ send: done('messages.send') }),
      cloud: Object.freeze({
        get: (key) => ask('cloud.call', 'get', { key }),
        set: (key, value, options) => ask('cloud.call', 'set', { key, value, ifVersion: options?.ifVersion ?? null }),
        list: () => ask('cloud.call', 'list', {}),
        delete: (key, options) => ask('cloud.call', 'delete', { key, ifVersion: options?.ifVersion ?? null }).then(() => undefined),
        call: (operation, args) => ask('cloud.call', operation, args ?? null),
      }),
      files: Object.freeze({ pick: () => ask('files.pick') }),
      time: Object.freeze({ resolve: (text) => ask('time.resolve', String(text)) }),
    });
  }

  const message = (e) => (e && typeof e.message === 'string' ? e.message : String(e));
  const plugin = () => globalThis.__pkuBundle && globalThis.__pkuBundle.default;

  Object.defineProperty(globalThis, '__pku', {
    value: Object.freeze({
      check() {
        const p = plugin();
        if (!p || typeof p.execute !== 'function' || typeof p.manifest !== 'object') {
          throw new Error('the bundle does not export a plugin: write `export default definePlugin({…})`');
        }
      },
      manifest: () => JSON.stringify(plugin().manifest),
      // The description a tool's function writes, reading the plugin's store as it stands.
      describe(name) {
        const store = Object.freeze({
          get(key) {
            const text = read(String(key));
            if (text.startsWith('error: ')) throw new Error(text.slice(7));
            if (text === '') return undefined;
            try {
              return JSON.parse(text);
            } catch {
              return text;
            }
          },
        });
        const text = plugin().describe(name, Object.freeze({ store }));
        return text === undefined || text === null ? null : String(text);
      },
      // The target a tool's resolveEffect names for the input: a string, or null for none.
      resolve(name, input) {
        const target = plugin().resolve(name, JSON.parse(input));
        return target === undefined || target === null ? null : String(target);
      },
      start(call, name, input, told) {
        current = call;
        let running;
        try {
          const ctx = JSON.parse(told);
          if (ctx.turn === null) delete ctx.turn;
          if (ctx.grant === null) delete ctx.grant;
          ctx.services = services(call);
          running = Promise.resolve(plugin().execute(name, JSON.parse(input), Object.freeze(ctx)));
        } catch (e) {
          running = Promise.reject(e);
        }
        running.then(
          (value) => {
            try {
              outcomes.set(call, JSON.stringify({ ok: true, value: value === undefined ? null : value }));
            } catch (e) {
              outcomes.set(call, JSON.stringify({ ok: false, message: `the tool answered something that is not JSON: ${message(e)}` }));
            }
          },
          (e) => outcomes.set(call, JSON.stringify({ ok: false, message: message(e) })),
        );
      },
      settle(call, id, ok, value, code) {
        current = call;
        const timer = timers.get(id);
        if (timer) {
          globalThis.clearTimeout(id);
          // A timer's callback that throws fails nothing else: its error goes to the log.
          try {
            timer[1]();
          } catch (e) {
            log(`a timer's callback threw: ${message(e)}`);
          }
          return;
        }
        const waiting = pending.get(id);
        if (!waiting) return;
        pending.delete(id);
        if (ok) {
          waiting[0](JSON.parse(value));
        } else if (code) {
          const CloudError = globalThis.__pkuCloudError || Error;
          const e = new CloudError(code);
          e.code = code;
          waiting[1](e);
        } else {
          waiting[1](new Error(value));
        }
      },
      take(call) {
        current = 0;
        const outcome = outcomes.get(call);
        outcomes.delete(call);
        if (outcome !== undefined) {
          // The call ended: its timers that still wait never fire.
          for (const [id, timer] of timers) if (timer[0] === call) timers.delete(id);
          waitingOf.delete(call);
        }
        return outcome;
      },
    }),
  });
})();
