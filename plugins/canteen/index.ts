// 食堂: how full each canteen is now (the portal's public crowding figures, SERVICES.md §4) and
// which canteens are open, from the plugin's own table of opening hours (the portal has none).
import { definePlugin, defineTool } from '@pku-harness/sdk';
import type { LocalNow, Services } from '@pku-harness/sdk';
import { z } from 'zod';

const UNREACHABLE = '食堂人数暂时查不到 · The canteen figures could not be read';

interface Row {
  name: string;
  seat: number;
  ip: number;
  warningMsg?: string;
}

/** The portal's crowding snapshot, checked: anything but its JSON is the student's error. */
async function snapshot(services: Services): Promise<{ time: string; rows: Row[] }> {
  const answer = await services.campus.request('public', {
    method: 'POST',
    path: '/publicQuery/canteenQuery/retrCarteenInfos.do',
  });
  const body = 'body' in answer ? (answer.body as { time?: unknown; rows?: unknown }) : undefined;
  if (answer.status !== 200 || typeof body !== 'object' || body === null || !Array.isArray(body.rows)) {
    throw new Error(UNREACHABLE);
  }
  const rows = body.rows.filter(
    (r): r is Row => typeof r?.name === 'string' && Number.isFinite(Number(r?.seat)) && Number.isFinite(Number(r?.ip)),
  );
  return { time: String(body.time ?? ''), rows };
}

const crowd = defineTool({
  title: '食堂就餐人数',
  description:
    'How full each campus canteen is right now: seats, people present and how full in percent, ' +
    'with the time the figure was taken (Beijing time). Use when the student asks where to eat ' +
    'or which canteen is least crowded. The figures update every few minutes during meal times ' +
    'and stop near midnight.',
  input: z.object({}),
  effect: 'read',
  labels: {
    takenAt: { zh: '统计时间', en: 'As of' },
    canteens: { zh: '食堂', en: 'Canteens' },
  },
  output: z.object({
    takenAt: z.string().describe('When the figures were taken, Beijing time YYYY-MM-DD HH:mm:ss'),
    canteens: z
      .array(
        z.object({
          name: z.string(),
          seats: z.number().describe('seats'),
          present: z.number().describe('people present'),
          fullPercent: z.number().nullable().describe('how full, in percent'),
          warning: z.string().optional(),
        }),
      )
      .describe('Each canteen: seats, people present and how full in percent'),
  }),
  execute: async (_input, ctx) => {
    const { time, rows } = await snapshot(ctx.services);
    return {
      takenAt: time,
      canteens: rows.map((r) => {
        const seats = Number(r.seat);
        const present = Number(r.ip);
        return {
          name: r.name,
          seats,
          present,
          fullPercent: seats > 0 ? Math.round((present / seats) * 100) : null,
          ...(r.warningMsg ? { warning: r.warningMsg } : {}),
        };
      }),
    };
  },
});

/** One serving: `HH:mm` to `HH:mm`, local time. */
type Serving = [meal: string, opens: string, closes: string];

/**
 * Opening hours by canteen. The portal publishes none: these are the term-time hours posted by
 * 北京大学餐饮中心 at the canteens, as written down for the autumn term of 2026 (2026-09). They
 * change between terms and in holidays; the tool says so.
 */
const HOURS_AS_OF = '2026-09';
const WEEKDAY: Record<string, Serving[]> = {
  学一食堂: [['早餐', '06:30', '09:00'], ['午餐', '10:30', '13:00'], ['晚餐', '16:30', '19:00']],
  学五食堂: [['早餐', '06:30', '09:00'], ['午餐', '10:30', '13:00'], ['晚餐', '16:30', '19:00']],
  农园食堂: [['早餐', '06:30', '09:30'], ['午餐', '10:30', '13:30'], ['晚餐', '16:30', '19:30'], ['夜宵', '20:30', '23:00']],
  燕南食堂: [['早餐', '06:30', '09:00'], ['午餐', '10:30', '13:00'], ['晚餐', '16:30', '19:00']],
  家园食堂: [['早餐', '06:30', '09:30'], ['午餐', '10:30', '13:30'], ['晚餐', '16:30', '20:00']],
  勺园食堂: [['早餐', '07:00', '09:30'], ['午餐', '11:00', '13:30'], ['晚餐', '17:00', '20:00']],
};
/** At weekends breakfast starts half an hour later everywhere. */
function servings(name: string, weekday: number): Serving[] {
  const day = WEEKDAY[name] ?? [];
  if (weekday < 6) return day;
  return day.map(([meal, opens, closes]) => [meal, meal === '早餐' ? later(opens, 30) : opens, closes]);
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

function later(hhmm: string, by: number): string {
  const t = minutes(hhmm) + by;
  return `${String(Math.floor(t / 60)).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
}

/** The day after `date` (YYYY-MM-DD): every time this plugin answers is a local date and time,
 * the words for it are the screens'. */
function nextDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  const t = new Date(Date.UTC(y, m - 1, d + 1));
  const two = (n: number) => String(n).padStart(2, '0');
  return `${t.getUTCFullYear()}-${two(t.getUTCMonth() + 1)}-${two(t.getUTCDate())}`;
}

function openNowAt(now: LocalNow) {
  const time = now.local.slice(11);
  const at = minutes(time);
  const open: { name: string; meal: string; closesAt: string }[] = [];
  const opensNext: { name: string; meal: string; opensAt: string }[] = [];
  for (const name of Object.keys(WEEKDAY)) {
    const today = servings(name, now.weekday);
    const serving = today.find(([, opens, closes]) => minutes(opens) <= at && at < minutes(closes));
    if (serving) {
      open.push({ name, meal: serving[0], closesAt: `${now.date} ${serving[2]}` });
      continue;
    }
    const next = today.find(([, opens]) => minutes(opens) > at);
    if (next) opensNext.push({ name, meal: next[0], opensAt: `${now.date} ${next[1]}` });
    else {
      const tomorrow = servings(name, (now.weekday % 7) + 1)[0];
      if (tomorrow) opensNext.push({ name, meal: tomorrow[0], opensAt: `${nextDate(now.date)} ${tomorrow[1]}` });
    }
  }
  opensNext.sort((a, b) => (a.opensAt < b.opensAt ? -1 : a.opensAt > b.opensAt ? 1 : 0));
  return { now: now.local, open, opensNext, hoursAsOf: HOURS_AS_OF };
}

const openNow = defineTool({
  title: '哪些食堂开着',
  description:
    'Which campus canteens are open now (with the meal and when it closes) and which open next, ' +
    "in the student's local time. Hours are the term-time hours posted at the canteens " +
    `(as of ${HOURS_AS_OF}); holidays and exam weeks may differ. Combine with canteen__crowd to ` +
    'suggest an open canteen that is not crowded.',
  input: z.object({}),
  effect: 'read',
  labels: {
    now: { zh: '现在', en: 'Now' },
    open: { zh: '开着的食堂', en: 'Open now' },
    opensNext: { zh: '接下来开门', en: 'Opening next' },
    hoursAsOf: { zh: '营业时间更新于', en: 'Hours as of' },
  },
  output: z.object({
    now: z.string().describe('The local time now, YYYY-MM-DD HH:mm'),
    open: z.array(z.object({ name: z.string(), meal: z.string(), closesAt: z.string() })).describe('The canteens open now, each with the meal and when it closes (local)'),
    opensNext: z.array(z.object({ name: z.string(), meal: z.string(), opensAt: z.string() })).describe('The canteens that open next, soonest first (local)'),
    hoursAsOf: z.string().describe('When the posted hours were read, YYYY-MM'),
  }),
  execute: async (_input, ctx) => openNowAt(ctx.now),
});

export default definePlugin({
  id: 'canteen',
  title: '食堂',
  description: '校园食堂的就餐人数和营业时间。',
  examples: ['现在哪个食堂人少？', '哪些食堂还开着？'],
  i18n: {
    en: {
      title: 'Canteens',
      description: 'How crowded the campus canteens are, and when they are open.',
      examples: ['Which canteen is least crowded now?', 'Which canteens are open now?'],
      tools: { crowd: { title: 'Canteen crowding' }, openNow: { title: 'Open canteens' } },
    },
  },
  scopes: ['public'],
  tools: { crowd, openNow },
  // seed 004, exactly.
  dataSources: { crowd: { title: '食堂就餐人数', tool: 'crowd', ttlMs: 2 * 60_000 } },
  screens: [
    {
      id: 'canteens',
      title: { zh: '食堂', en: 'Canteens' },
      sections: [
        {
          show: 'table',
          title: { zh: '就餐人数（人少的在前）', en: 'How crowded (least first)' },
          source: 'crowd',
          items: 'canteens',
          fields: ['name', 'fullPercent', 'present', 'seats'],
          sortBy: 'fullPercent',
          labels: {
            name: { zh: '食堂', en: 'Canteen' },
            fullPercent: { zh: '满座（%）', en: 'Full (%)' },
            present: { zh: '在场人数', en: 'People' },
            seats: { zh: '座位', en: 'Seats' },
          },
          empty: { zh: '现在没有食堂的人数', en: 'No canteen figures now' },
        },
        {
          show: 'list',
          title: { zh: '开着的食堂', en: 'Open now' },
          tool: 'openNow',
          items: 'open',
          fields: ['name', 'meal', 'closesAt'],
          labels: {
            name: { zh: '食堂', en: 'Canteen' },
            meal: { zh: '餐次', en: 'Meal' },
            closesAt: { zh: '关门时间', en: 'Closes at' },
          },
          empty: { zh: '现在没有开着的食堂', en: 'No canteen is open now' },
        },
        {
          show: 'list',
          title: { zh: '接下来开门', en: 'Opening next' },
          tool: 'openNow',
          items: 'opensNext',
          fields: ['name', 'meal', 'opensAt'],
          labels: {
            name: { zh: '食堂', en: 'Canteen' },
            meal: { zh: '餐次', en: 'Meal' },
            opensAt: { zh: '开门时间', en: 'Opens at' },
          },
        },
      ],
    },
  ],
});
