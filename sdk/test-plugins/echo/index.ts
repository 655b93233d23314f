// The smallest plugin: one read tool that answers with what it was given. The engine's
// benches and tests call it, and the conformance scenarios name it.
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

const say = defineTool({
  title: '复述',
  description: 'Answers with the text it was given. Use to check that TypeScript plugins run.',
  input: z.object({ text: z.string().max(1000).describe('The text to answer with') }),
  effect: 'read',
  execute: async ({ text }) => ({ text }),
});

export default definePlugin({
  id: 'echo',
  title: '复述',
  description: 'Answers with what it was given.',
  i18n: { en: { title: 'Echo', tools: { say: { title: 'Echo a text' } } } },
  tools: { say },
});
