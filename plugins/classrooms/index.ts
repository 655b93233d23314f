// 空闲教室: which classrooms of a teaching building are free, period by period, from the
// portal's public classroom query (SERVICES.md §4).
import { definePlugin, defineTool } from '@pku-harness/sdk';
import { z } from 'zod';

/** The buildings as the portal spells them (its `buildingName`). */
const BUILDINGS = ['一教', '二教', '三教', '四教', '理教', '文史', '哲学', '地学', '国关', '政管'] as const;
/** The portal's `time`, by the day the model names (the result answers the model's own word). */
const DAYS = { today: '今天', tomorrow: '明天', dayAfterTomorrow: '后天' } as const;
/** PKU's class periods, 第1节 to 第12节: their times are the core's (`ctx.services.time`). */
const PERIODS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

const UNREACHABLE = '空闲教室暂时查不到 · The free classrooms could not be read';

const free = defineTool({
  title: '空闲教室',
  description:
    'The classrooms of one teaching building that are free today, tomorrow or the day after, ' +
    "with each room's capacity (seats) and the class periods (1-12) it is free in; `date` is the " +
    "day asked (Beijing) and `periodTimes` gives each period's local time on it. Use when the " +
    'student looks for a place to study. A room free ' +
    'in a period has no class then; it may still be in use for other things.',
  input: z.object({
    building: z.enum(BUILDINGS).describe('The teaching building, as the portal names it: 一教, 二教, 三教, 四教, 理教, 文史, 哲学, 地学, 国关 or 政管'),
    day: z.enum(['today', 'tomorrow', 'dayAfterTomorrow']).default('today').describe('Which day: today, tomorrow or dayAfterTomorrow'),
    period: z.number().int().min(1).max(12).optional().describe('Only rooms free in this period (1-12)'),
  }),
  effect: 'read',
  labels: {
    building: { zh: '教学楼', en: 'Building' },
    day: {
      zh: '哪天',
      en: 'Day',
      values: {
        today: { zh: '今天', en: 'Today' },
        tomorrow: { zh: '明天', en: 'Tomorrow' },
        dayAfterTomorrow: { zh: '后天', en: 'The day after tomorrow' },
      },
    },
    period: { zh: '节次', en: 'Period' },
    date: { zh: '日期', en: 'Date' },
    rooms: { zh: '空闲教室', en: 'Free rooms' },
    periodTimes: { zh: '节次时间', en: 'Period times' },
  },
  output: z.object({
    building: z.enum(BUILDINGS).describe('The teaching building asked'),
    day: z.enum(['today', 'tomorrow', 'dayAfterTomorrow']).describe('The day asked'),
    date: z.string().describe('The day asked, YYYY-MM-DD (Beijing)'),
    rooms: z
      .array(z.object({ room: z.string(), capacity: z.number().nullable().describe('seats'), freePeriods: z.array(z.number()) }))
      .describe('The free rooms, each with its seats and the periods (1-12) it is free in'),
    periodTimes: z.record(z.string(), z.string()).describe("Each period's local time, HH:mm-HH:mm"),
  }),
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
        freePeriods: PERIODS.filter((n) => !r[`c${n}`]),
      }))
      .filter((r) => period === undefined || r.freePeriods.includes(period));
    // The day's periods as the core's campus time has them (PKU's period table, Beijing).
    const times = await Promise.all(PERIODS.map((n) => ctx.services.time.resolve(`${DAYS[day]}第${n}节`)));
    const periodTimes = Object.fromEntries(
      times.map((t, i) => [PERIODS[i], `${t.start.slice(11)}-${t.end.slice(11)}`]),
    );
    // A result echoes the input's own values: the model copies them into its next call.
    return { building, day, date: times[0].date, rooms, periodTimes };
  },
});

export default definePlugin({
  id: 'classrooms',
  title: '空闲教室',
  description: '教学楼里哪些教室空着，按节次。',
  i18n: { en: { title: 'Free classrooms', description: 'Which classrooms of a teaching building are free, period by period.', tools: { free: { title: 'Free classrooms' } } } },
  scopes: ['public'],
  tools: { free },
  screens: [
    {
      id: 'free',
      title: { zh: '空闲教室', en: 'Free classrooms' },
      sections: [
        { show: 'form', title: { zh: '选择教学楼和日期', en: 'Choose a building and a day' }, tool: 'free' },
        {
          show: 'table',
          title: { zh: '空闲节次', en: 'Free periods' },
          tool: 'free',
          items: 'rooms',
          fields: ['room', 'capacity', 'freePeriods'],
          labels: {
            room: { zh: '教室', en: 'Room' },
            capacity: { zh: '座位', en: 'Seats' },
            freePeriods: { zh: '空闲节次', en: 'Free periods' },
          },
          empty: { zh: '这天没有空闲教室', en: 'No free classroom that day' },
        },
      ],
    },
  ],
});
