// 空闲教室: which classrooms of a teaching building are free, period by period, from the
// portal's public classroom query (SERVICES.md §4).
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

/** The buildings as the portal spells them (its `buildingName`). */
const BUILDINGS = ['一教', '二教', '三教', '四教', '理教', '文史', '哲学', '地学', '国关', '政管'] as const;
/** The portal's `time`, by the day the model names (the result answers the model's own word). */
const DAYS = { today: '今天', tomorrow: '明天', dayAfterTomorrow: '后天' } as const;
/** PKU's class periods, local time. */
const PERIODS: Record<number, string> = {
  1: '08:00-08:50',
  2: '09:00-09:50',
  3: '10:10-11:00',
  4: '11:10-12:00',
  5: '13:00-13:50',
  6: '14:00-14:50',
  7: '15:10-16:00',
  8: '16:10-17:00',
  9: '17:10-18:00',
  10: '18:40-19:30',
  11: '19:40-20:30',
  12: '20:40-21:30',
};

const UNREACHABLE = '空闲教室暂时查不到 · The free classrooms could not be read';

const free = defineTool({
  title: '空闲教室',
  description:
    'The classrooms of one teaching building that are free today, tomorrow or the day after, ' +
    "with each room's capacity (seats) and the class periods (1-12) it is free in; `periodTimes` " +
    'gives each period\'s local time. Use when the student looks for a place to study. A room free ' +
    'in a period has no class then; it may still be in use for other things.',
  input: z.object({
    building: z.enum(BUILDINGS).describe('The teaching building, as the portal names it: 一教, 二教, 三教, 四教, 理教, 文史, 哲学, 地学, 国关 or 政管'),
    day: z.enum(['today', 'tomorrow', 'dayAfterTomorrow']).default('today').describe('Which day: today, tomorrow or dayAfterTomorrow'),
    period: z.number().int().min(1).max(12).optional().describe('Only rooms free in this period (1-12)'),
  }),
  effect: 'read',
  execute: async ({ building, day, period }, ctx) => {
    const answer = await ctx.services.campus.request('public', {
      path: '/publicQuery/classroomQuery/retrClassRoomFree.do',
      query: [
        ['buildingName', building],
        ['time', DAYS[day]],
      ],
    });
    const body = 'body' in answer ? (answer.body as { success?: unknown; rows?: unknown }) : undefined;
    if (answer.status !== 200 || typeof body !== 'object' || body === null || !Array.isArray(body.rows)) {
      throw new Error(UNREACHABLE);
    }
    const rooms = body.rows
      .filter((r) => typeof r?.room === 'string')
      .map((r: Record<string, unknown>) => ({
        room: r.room as string,
        capacity: Number(r.cap) || null,
        // A period with a course name in `cN` is taken (SERVICES.md §4).
        freePeriods: Object.keys(PERIODS)
          .map(Number)
          .filter((n) => !r[`c${n}`]),
      }))
      .filter((r) => period === undefined || r.freePeriods.includes(period));
    // A result echoes the input's own values: the model copies them into its next call.
    return { building, day, rooms, periodTimes: PERIODS };
  },
});

export default definePlugin({
  id: 'classrooms',
  title: '空闲教室',
  description: '教学楼里哪些教室空着，按节次。',
  i18n: { en: { title: 'Free classrooms', description: 'Which classrooms of a teaching building are free, period by period.', tools: { free: { title: 'Free classrooms' } } } },
  scopes: ['public'],
  tools: { free },
});
