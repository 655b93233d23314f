// The core's test plugin for the engine's bounds: each tool misbehaves in one way the runtime
// must end without harm to the app or to other plugins.
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

const none = z.object({});

export default definePlugin({
  id: 'hostile',
  title: '捣乱',
  tools: {
    spin: defineTool({
      title: '死循环',
      description: 'Never returns.',
      input: none,
      effect: 'read',
      execute: async () => {
        for (;;) {}
      },
    }),
    hog: defineTool({
      title: '吃内存',
      description: 'Allocates without end.',
      input: none,
      effect: 'read',
      execute: async () => {
        const hoard: string[] = [];
        for (let i = 0; ; i++) hoard.push('x'.repeat(1 << 16) + i);
      },
    }),
    dive: defineTool({
      title: '无限递归',
      description: 'Recurses without end.',
      input: none,
      effect: 'read',
      execute: async () => {
        const down = (n: number): number => down(n + 1) + 1;
        return down(0);
      },
    }),
    hang: defineTool({
      title: '不返回',
      description: 'Waits on a promise nothing settles.',
      input: none,
      effect: 'read',
      execute: () => new Promise(() => {}),
    }),
    plant: defineTool({
      title: '埋下',
      description: 'Sets a global.',
      input: z.object({ value: z.string().describe('The value') }),
      effect: 'read',
      execute: async ({ value }) => {
        (globalThis as { planted?: string }).planted = value;
        return { planted: value };
      },
    }),
    echo: defineTool({
      title: '回声',
      description: 'Answers with its input.',
      input: z.object({ text: z.string().describe('The text') }),
      effect: 'read',
      execute: async ({ text }) => ({ text }),
    }),
  },
});
