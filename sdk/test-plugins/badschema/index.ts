// A plugin whose input schema has no JSON Schema (a Date): loading it is an error naming the
// tool's input.
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

export default definePlugin({
  id: 'badschema',
  title: '坏模式',
  tools: {
    ok: defineTool({ title: '好', description: 'Fine.', input: z.object({}), effect: 'read', execute: async () => ({}) }),
    when: defineTool({
      title: '时间',
      description: 'Takes a Date, which JSON cannot carry.',
      input: z.object({ at: z.date().describe('When') }),
      effect: 'read',
      execute: async () => ({}),
    }),
  },
});
