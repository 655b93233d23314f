// 图书馆: the library catalogue's search (SERVICES.md §4), with call numbers to find the book.
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

const UNREACHABLE = '图书馆目录暂时查不到 · The library catalogue could not be read';

const search = defineTool({
  title: '馆藏检索',
  description:
    "Searches Peking University Library's catalogue by title, author or keywords and answers the " +
    'matching books with their call numbers (索书号, what the student looks for on the shelves), ' +
    'publisher and year, and the total number of matches. Paged: limit books a page, 10 by default.',
  input: z.object({
    query: z.string().min(1).max(200).describe('Words of the title, the author or the subject'),
    page: z.number().int().min(1).max(100).default(1).describe('The page, from 1'),
    limit: z.number().int().min(1).max(50).default(10).describe('Books a page, 1 to 50'),
  }),
  effect: 'read',
  labels: {
    query: { zh: '搜索词', en: 'Search words' },
    limit: { zh: '每页数量', en: 'Per page' },
    total: { zh: '找到的数量', en: 'Found' },
    page: { zh: '页码', en: 'Page' },
    books: { zh: '图书', en: 'Books' },
  },
  output: z.object({
    total: z.number().describe('How many books were found'),
    page: z.number().describe('This page, from 1'),
    books: z
      .array(z.object({ id: z.string(), title: z.string(), author: z.string(), publisher: z.string(), year: z.string(), callNumber: z.string() }))
      .describe('The books on this page, each with its call number'),
  }),
  execute: async ({ query, page, limit }, ctx) => {
    const answer = await ctx.services.campus.request('library', {
      path: '/BookAPI/new_opac/query',
      query: [
        ['cc_all', query],
        ['rows', String(limit)],
        ['start', String((page - 1) * limit)],
      ],
    });
    const response =
      'body' in answer && typeof answer.body === 'object' && answer.body !== null
        ? (answer.body as { response?: { numFound?: unknown; docs?: unknown } }).response
        : undefined;
    if (answer.status !== 200 || !response || !Array.isArray(response.docs)) {
      throw new Error(UNREACHABLE);
    }
    return {
      total: Number(response.numFound) || 0,
      page,
      books: response.docs.map((d: Record<string, unknown>) => ({
        id: String(d.id ?? ''),
        title: String(d.title ?? ''),
        author: String(d.author ?? ''),
        publisher: String(d.publisher ?? ''),
        year: String(d.publishDate ?? ''),
        callNumber: String(d['callnumber-search'] ?? ''),
      })),
    };
  },
});

export default definePlugin({
  id: 'library',
  title: '图书馆',
  description: '北京大学图书馆馆藏检索。',
  i18n: { en: { title: 'Library', description: "Search Peking University Library's catalogue.", tools: { search: { title: 'Search the catalogue' } } } },
  scopes: ['library'],
  tools: { search },
  screens: [
    {
      id: 'search',
      title: { zh: '馆藏检索', en: 'Search the catalogue' },
      sections: [
        { show: 'form', title: { zh: '检索', en: 'Search' }, tool: 'search' },
        {
          show: 'list',
          title: { zh: '检索结果', en: 'Results' },
          tool: 'search',
          items: 'books',
          fields: ['title', 'author', 'publisher', 'year', 'callNumber'],
          labels: {
            title: { zh: '书名', en: 'Title' },
            author: { zh: '作者', en: 'Author' },
            publisher: { zh: '出版社', en: 'Publisher' },
            year: { zh: '出版年', en: 'Year' },
            callNumber: { zh: '索书号', en: 'Call number' },
          },
          empty: { zh: '没有找到这本书', en: 'No book found' },
        },
      ],
    },
  ],
});
