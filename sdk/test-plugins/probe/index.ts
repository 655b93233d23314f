// The core's test plugin for the services: each tool uses one of ctx.services and answers with
// what it got, so a test through the invoke path sees exactly what a plugin sees.
import { CloudError, definePlugin, defineTool, type Services } from '@pku-harness/sdk';
import { z } from 'zod';

let kept: Services | undefined;

export default definePlugin({
  id: 'probe',
  title: '探针',
  description: 'Uses each service once.',
  defaultModes: { public: 'ask' },
  grants: {
    allow_store: true,
    allow_network: true,
    url_allowlist: ['127.0.0.1'],
    allow_context: true,
    allow_tools: ['echo.say'],
    allow_send_message: true,
  },
  dataSources: { memo: { title: '备忘', tool: 'recall', args: { key: 'memo' }, ttlMs: 60_000 } },
  tools: {
    remember: defineTool({
      title: '记下',
      description: 'Stores a value under a key.',
      input: z.object({
        key: z.string().describe('The key'),
        value: z.unknown().describe('Any JSON value'),
      }),
      effect: 'write',
      execute: async ({ key, value }, ctx) => {
        await ctx.services.store.set(key, value);
        return { stored: key };
      },
    }),
    recall: defineTool({
      title: '回想',
      description: 'The value stored under a key.',
      input: z.object({ key: z.string().describe('The key') }),
      effect: 'read',
      execute: async ({ key }, ctx) => ({ value: (await ctx.services.store.get(key)) ?? null }),
    }),
    fetch: defineTool({
      title: '获取',
      description: 'GETs a URL through the network gate.',
      input: z.object({ url: z.string().describe('The URL') }),
      effect: 'read',
      execute: async ({ url }, ctx) => ({ body: await ctx.services.http.get(url) }),
    }),
    setContext: defineTool({
      title: '设定上下文',
      description: "Replaces this plugin's context lines.",
      input: z.object({ text: z.string().describe('The lines') }),
      effect: 'write',
      execute: async ({ text }, ctx) => {
        await ctx.services.context.set(text);
        return { set: true };
      },
    }),
    say: defineTool({
      title: '通知',
      description: 'One line to the user.',
      input: z.object({ text: z.string().describe('The line') }),
      effect: 'read',
      execute: async ({ text }, ctx) => {
        console.log('saying', text);
        await ctx.services.notify(text);
        return { said: true };
      },
    }),
    callTool: defineTool({
      title: '调用工具',
      description: 'Calls another tool.',
      input: z.object({
        tool: z.string().describe('The tool id'),
        args: z.record(z.string(), z.unknown()).describe('Its input'),
      }),
      effect: 'read',
      execute: async ({ tool, args }, ctx) => ({ got: await ctx.services.tools.call(tool, args) }),
    }),
    send: defineTool({
      title: '发消息',
      description: 'Sends a message to the agent.',
      input: z.object({ text: z.string().describe('The message') }),
      effect: 'write',
      execute: async ({ text }, ctx) => {
        await ctx.services.messages.send(text);
        return { sent: true };
      },
    }),
    cloud: defineTool({
      title: '云',
      description: 'A cloud call.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => {
        try {
          return await ctx.services.cloud.call('backup');
        } catch (e) {
          if (e instanceof CloudError) return { status: 'cloud_refused', code: e.code };
          throw e;
        }
      },
    }),
    pick: defineTool({
      title: '选文件',
      description: 'Opens the file picker.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => ctx.services.files.pick(),
    }),
    fix: defineTool({
      title: '开通知',
      description: 'Shows the notification permission prompt.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => ({ state: await ctx.services.notify.fix('notifications') }),
    }),
    campus: defineTool({
      title: '校园服务',
      description: 'One request to a campus service.',
      input: z.object({ service: z.string().describe('The service'), path: z.string().describe('The path') }),
      effect: 'read',
      execute: async ({ service, path }, ctx) => ctx.services.campus.request(service, { path }),
    }),
    whoami: defineTool({
      title: '我是谁',
      description: 'What the tool is told about its call.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => ({ actor: ctx.actor, turn: ctx.turn ?? null, grant: ctx.grant ?? null }),
    }),
    page: defineTool({
      title: '翻页',
      description: 'Answers with the page it was asked for, defaults filled in.',
      input: z.object({
        page: z.number().int().min(1).default(1).describe('The page, from 1'),
        size: z.number().int().min(1).max(50).default(20).describe('Items a page'),
      }),
      effect: 'read',
      execute: async (input) => input,
    }),
    clock: defineTool({
      title: '现在几点',
      description: 'The time the tool is told it is.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => ctx.now,
    }),
    favourite: defineTool({
      title: '常去的',
      // Written each turn from what `remember` stored under 'favourite'.
      description: ({ store }) => {
        const favourite = store.get<string>('favourite');
        return favourite === undefined
          ? 'The student has no favourite canteen yet.'
          : `The student's favourite canteen is ${favourite}.`;
      },
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => ({ favourite: (await ctx.services.store.get('favourite')) ?? null }),
    }),
    wait: defineTool({
      title: '等一下',
      description: 'Waits with the runtime timer, one timer cleared before it fires.',
      input: z.object({
        ms: z.number().int().min(0).describe('How long to wait'),
        clear: z.boolean().describe('Clear the first timer before it fires'),
      }),
      effect: 'read',
      execute: async ({ ms, clear }) => {
        let fired = false;
        const first = setTimeout(() => {
          fired = true;
        }, ms);
        if (clear) clearTimeout(first);
        await new Promise<void>((resolve) => setTimeout(resolve, ms + 20));
        return { fired };
      },
    }),
    press: defineTool({
      title: '点按',
      description: 'Presses a button in an app.',
      input: z.object({ button: z.string().describe('The button'), app: z.string().default('支付宝').describe('The app') }),
      effect: 'write',
      // The target from the input, with zod's default filled in; none for an empty button; a
      // throw and a loop for the tests of a resolveEffect that fails.
      resolveEffect: ({ button, app }) => {
        if (button === 'throw') throw new Error('no such button');
        if (button === 'loop') for (;;);
        return button === '' ? undefined : `在${app}中点按「${button}」`;
      },
      execute: async ({ button }) => ({ pressed: button }),
    }),
    fail: defineTool({
      title: '失败',
      description: 'Fails with the given message.',
      input: z.object({ message: z.string().describe('The message') }),
      effect: 'read',
      execute: async ({ message }) => {
        throw new Error(message);
      },
    }),
    verify: defineTool({
      title: '验证',
      description: 'An expected state the user can recover from.',
      input: z.object({}),
      effect: 'read',
      execute: async () => ({ status: 'verification_required', methods: ['sms'], message: '请输入短信验证码' }),
    }),
    keep: defineTool({
      title: '留下',
      description: 'Keeps its services past the end of its call.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => {
        kept = ctx.services;
        return { kept: true };
      },
    }),
    useKept: defineTool({
      title: '用留下的',
      description: 'Uses services kept from an ended call.',
      input: z.object({}),
      effect: 'read',
      execute: async () => {
        try {
          await kept!.store.set('late', true);
          return { refused: false };
        } catch (e) {
          return { refused: true, message: (e as Error).message };
        }
      },
    }),
    pickKeeping: defineTool({
      title: '留下再选',
      description: 'Keeps its services, opens the file picker, then reads the store twice.',
      input: z.object({}),
      effect: 'read',
      execute: async (_input, ctx) => {
        kept = ctx.services;
        const picked = await ctx.services.files.pick();
        // Two more entries, so that whatever else was queued for this call is served.
        await ctx.services.store.get('k');
        await ctx.services.store.get('k');
        return picked;
      },
    }),
    pressKept: defineTool({
      title: '用留下的点按',
      description: 'A press whose resolveEffect writes the store with services another call kept.',
      input: z.object({}),
      effect: 'write',
      resolveEffect: () => {
        kept?.store.set('fromResolve', true).catch(() => undefined);
        return '用留下的服务点按';
      },
      execute: async () => ({ pressed: true }),
    }),
    useKeptWhileRunning: defineTool({
      title: '用别人的',
      description: 'Opens the file picker and writes the store with services another call kept.',
      input: z.object({}),
      effect: 'read',
      execute: async () => {
        const refusals: string[] = [];
        for (const use of [() => kept!.files.pick(), () => kept!.store.set('stolen', true)]) {
          try {
            await use();
          } catch (e) {
            refusals.push((e as Error).message);
          }
        }
        return { refusals };
      },
    }),
    peek: defineTool({
      title: '窥视',
      description: 'Reads a global another plugin may have set.',
      input: z.object({}),
      effect: 'read',
      execute: async () => ({ planted: (globalThis as { planted?: unknown }).planted ?? null }),
    }),
    evaluate: defineTool({
      title: '求值',
      description: 'Evaluates attacker text.',
      input: z.object({ code: z.string().describe('JavaScript') }),
      effect: 'read',
      execute: async ({ code }) => ({ value: String((0, eval)(code)) }),
    }),
    run: defineTool({
      title: '运行',
      description: "Runs attacker text as the body of an async function of the call's ctx.",
      input: z.object({ code: z.string().describe('JavaScript') }),
      effect: 'read',
      execute: async ({ code }, ctx) => ({
        value: (await new Function('ctx', `return (async () => { ${code} })();`)(ctx)) ?? null,
      }),
    }),
    post: defineTool({
      title: '发帖',
      description: 'Posts publicly.',
      input: z.object({ text: z.string().describe('The post') }),
      effect: 'public',
      target: '发帖：{text}',
      execute: async ({ text }) => ({ posted: text }),
    }),
  },
});
