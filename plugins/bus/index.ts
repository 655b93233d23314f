// 班车 (the shuttle bus between 燕园 and the new campus): a day's departures with seats left,
// booking and cancelling a seat, and the student's bookings, through the core's campus client
// with the student's wproc session (../shared/campus/SERVICES.md §11). Booking and cancelling
// are writes: asked first, with the departure as the prompt's headline. The ride code (乘车码)
// is a boarding credential: no tool here ever fetches it, so it never reaches a result, the
// model or the audit (as the card's pay code); `showRideCode`, the student's tap under the
// bookings on the plugin's screen, only opens the core's ride-code screen, which reads it.
import { definePlugin, defineTool, type ToolContext } from '@pku-harness/sdk';
import { z } from 'zod';

/** The bus service's answer was none of its own: the student's words for it. */
const UNREADABLE = '班车预约服务暂时无法访问，请稍后再试 · The shuttle bus service could not be reached; try again later';

type Status = { status: 'signin_required' } | { status: 'verification_required'; methods: string[] };

/**
 * One request to the bus service: its envelope's `d` when `e` is 0, else its refusal in its own
 * words (SERVICES.md §11: failures are HTTP 200 with `{e, m}`), or the sign-in status object.
 */
async function wproc(
  ctx: ToolContext,
  request: { path: string; method?: string; query?: [string, string][]; form?: [string, string][] },
): Promise<{ d: Record<string, unknown> } | Status> {
  const res = await ctx.services.campus.request('bus', request);
  if (res.status === 'signin_required' || res.status === 'verification_required') return res;
  const body = res.body as { e?: unknown; m?: unknown; d?: unknown } | null;
  if (res.status !== 200 || typeof body !== 'object' || body === null || Array.isArray(body) || body.e === undefined) {
    throw new Error(UNREADABLE);
  }
  if (String(body.e) !== '0') {
    const said = typeof body.m === 'string' && body.m ? body.m : `e ${String(body.e)}`;
    throw new Error(`班车预约没有成功：${said} · The shuttle bus service refused: ${said}`);
  }
  const d = typeof body.d === 'object' && body.d !== null && !Array.isArray(body.d) ? body.d : {};
  return { d: d as Record<string, unknown> };
}

function isStatus<T extends object>(answer: T | Status): answer is Status {
  return 'status' in answer;
}

function records(value: unknown): Record<string, any>[] {
  if (!Array.isArray(value)) throw new Error(UNREADABLE);
  return value.filter((v): v is Record<string, any> => typeof v === 'object' && v !== null);
}

/** A day's routes and departures as the bus service lists them. */
async function day(ctx: ToolContext, date: string) {
  const answer = await wproc(ctx, {
    path: '/site/reservation/list-page',
    query: [
      ['hall_id', '1'],
      ['time', date],
      ['p', '1'],
      ['page_size', '0'],
    ],
  });
  if (isStatus(answer)) return answer;
  const routes = records(answer.d.list).map((route) => {
    const table = typeof route.table === 'object' && route.table !== null ? route.table : {};
    const departures = Object.values(table)
      .flatMap((slots) => records(slots))
      .map((slot) => {
        const row = typeof slot.row === 'object' && slot.row !== null ? slot.row : {};
        const seatsLeft = Number(row.margin ?? 0);
        return {
          period: Number(slot.time_id),
          time: String(slot.yaxis ?? '').trim(),
          seatsLeft: Number.isFinite(seatsLeft) ? seatsLeft : 0,
          seats: Number(row.total ?? 0),
          full: !(seatsLeft > 0),
        };
      })
      .sort((a, b) => a.time.localeCompare(b.time));
    return { routeId: Number(route.id), route: String(route.name ?? ''), departures };
  });
  return { routes };
}

const dateField = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe('The day, local "YYYY-MM-DD"');

const slots = defineTool({
  title: '班车时刻',
  description:
    "A day's shuttle bus (班车) departures between 燕园 and the new campus: each route with its departures' times (local \"HH:mm\") and seats left. Use before booking, and when the student asks when the bus leaves or whether seats are left. Without date, today.",
  input: z.object({ date: dateField.optional() }),
  effect: 'read',
  labels: { date: { zh: '日期', en: 'Date' }, routes: { zh: '线路', en: 'Routes' } },
  output: z.object({
    date: z.string().describe('The day, "YYYY-MM-DD"'),
    routes: z
      .array(
        z.object({
          routeId: z.number(),
          route: z.string().describe('The route as the bus service names it, e.g. 燕园校区→新校区'),
          departures: z.array(
            z.object({
              period: z.number(),
              time: z.string().describe('Local "HH:mm"'),
              seatsLeft: z.number().describe('Seats left'),
              seats: z.number().describe('Seats in all'),
              full: z.boolean(),
            }),
          ),
        }),
      )
      .describe('Each route and its departures, earliest first'),
  }),
  execute: async ({ date }, ctx) => {
    const on = date ?? ctx.now.date;
    const answer = await day(ctx, on);
    if (isStatus(answer)) return answer;
    return { date: on, ...answer };
  },
});

const book = defineTool({
  title: '预约班车',
  description:
    'Books the student a seat on one shuttle bus departure (预约班车): give the route exactly as bus__slots names it, the day and the time. Only when the student asked for that departure. Cancellable with bus__cancel. The ride code is shown on the app\'s screen, never here.',
  input: z.object({
    route: z.string().trim().min(1).max(40).describe('The route exactly as bus__slots names it, e.g. 燕园校区→新校区'),
    date: dateField,
    time: z.string().regex(/^\d{2}:\d{2}$/).describe('The departure, local "HH:mm", as bus__slots lists it'),
  }),
  effect: 'write',
  target: '班车 {route} {date} {time}',
  labels: {
    route: { zh: '线路', en: 'Route' },
    date: { zh: '日期', en: 'Date' },
    time: { zh: '发车时间', en: 'Departure' },
  },
  execute: async ({ route, date, time }, ctx) => {
    const listed = await day(ctx, date);
    if (isStatus(listed)) return listed;
    const line = listed.routes.find((r) => r.route === route);
    if (!line) {
      const names = listed.routes.map((r) => r.route).join('、');
      throw new Error(`没有叫“${route}”的班车线路，可选：${names} · No shuttle bus route is named "${route}"; the routes: ${names}`);
    }
    const departure = line.departures.find((d) => d.time === time);
    if (!departure) {
      const times = line.departures.map((d) => d.time).join(', ');
      throw new Error(`${route} 在 ${date} 没有 ${time} 的班车，可选：${times} · ${route} has no ${time} departure on ${date}; the departures: ${times}`);
    }
    if (departure.full) {
      throw new Error(`${route} ${date} ${time} 的班车已约满 · The ${time} bus on ${date} (${route}) is full`);
    }
    const answer = await wproc(ctx, {
      path: '/site/reservation/launch',
      method: 'POST',
      form: [
        ['resource_id', String(line.routeId)],
        ['data', JSON.stringify([{ date, period: departure.period, sub_resource_id: 0 }])],
      ],
    });
    if (isStatus(answer)) return answer;
    return { booked: true, booking: Number(answer.d.id), route, departure: `${date} ${time}` };
  },
});

/** The student's current bookings: id for bus__cancel, the departure in local time. */
async function bookings(ctx: ToolContext) {
  const answer = await wproc(ctx, {
    path: '/site/reservation/my-list-time',
    query: [
      ['p', '1'],
      ['page_size', '0'],
      ['status', '2'],
      ['sort_time', 'true'],
      ['sort', 'asc'],
    ],
  });
  if (isStatus(answer)) return answer;
  return records(answer.d.data).map((b) => ({
    booking: Number(b.id),
    dataId: Number(b.hall_appointment_data_id),
    route: String(b.resource_name ?? ''),
    departure: String(b.appointment_tim ?? '').trim(),
    state: String(b.status_name ?? ''),
  }));
}

const mine = defineTool({
  title: '我的班车预约',
  description:
    "The student's current shuttle bus bookings, earliest first: each booking's id (for bus__cancel), route, departure (local \"YYYY-MM-DD HH:mm\") and state.",
  input: z.object({}),
  effect: 'read',
  labels: { bookings: { zh: '预约', en: 'Bookings' } },
  output: z.object({
    bookings: z
      .array(z.object({ booking: z.number(), route: z.string(), departure: z.string().describe('Local "YYYY-MM-DD HH:mm"'), state: z.string() }))
      .describe('Current bookings'),
  }),
  execute: async (_input, ctx) => {
    const all = await bookings(ctx);
    if (!Array.isArray(all)) return all;
    return { bookings: all.map(({ dataId: _, ...b }) => b) };
  },
});

const cancel = defineTool({
  title: '取消班车预约',
  description: 'Cancels one of the student\'s shuttle bus bookings by its id from bus__mine. Only when the student asked to cancel it.',
  input: z.object({ booking: z.number().int().positive().describe('The booking id from bus__mine') }),
  effect: 'write',
  target: '取消班车预约 #{booking}',
  labels: { booking: { zh: '预约编号', en: 'Booking' } },
  execute: async ({ booking }, ctx) => {
    const all = await bookings(ctx);
    if (!Array.isArray(all)) return all;
    const found = all.find((b) => b.booking === booking);
    if (!found) {
      throw new Error(`没有编号 ${booking} 的班车预约（见“我的班车预约”） · No shuttle bus booking has the id ${booking} (see bus__mine)`);
    }
    const answer = await wproc(ctx, {
      path: '/site/reservation/single-time-cancel',
      method: 'POST',
      form: [
        ['appointment_id', String(found.booking)],
        ['data_id[0]', String(found.dataId)],
      ],
    });
    if (isStatus(answer)) return answer;
    return { cancelled: true, booking, route: found.route, departure: found.departure };
  },
});

const showRideCode = defineTool({
  title: '乘车码',
  description: "Opens the shuttle bus ride-code screen for the student's bookings. Only the student's tap opens it.",
  input: z.object({}),
  effect: 'write',
  // SERVICES.md §11: the ride code is a boarding credential, shown on a screen only. The shell
  // opens the core's ride-code screen, which reads the codes itself and shows them only there.
  userOnly: true,
  execute: async () => ({ status: 'opened', screen: 'rideCode' }),
});

export default definePlugin({
  id: 'bus',
  title: '班车',
  description: '燕园与新校区之间的班车：查看当天各线路的发车时间和余座，预约、取消，查看我的预约。乘车码只在屏幕上显示，不会交给助手。',
  i18n: {
    en: {
      title: 'Shuttle bus',
      description:
        "The shuttle bus between 燕园 and the new campus: a day's departures with seats left, booking, cancelling, your bookings. The ride code is shown on the screen only, never given to the assistant.",
      tools: {
        slots: { title: 'Bus departures' },
        book: { title: 'Book a bus seat' },
        mine: { title: 'My bus bookings' },
        cancel: { title: 'Cancel a bus booking' },
        showRideCode: { title: 'Ride code' },
      },
    },
  },
  requires: ['campus-session'],
  scopes: ['bus'],
  // A booking holds a seat others could take, and a booking not ridden counts as 违约: ask first.
  defaultModes: { write: 'ask' },
  tools: { slots, book, mine, cancel, showRideCode },
  // The bookings, with the ride code one tap under them (it stays on its own screen).
  screens: [
    {
      id: 'bookings',
      title: { zh: '我的班车', en: 'My shuttle bus' },
      sections: [
        {
          show: 'list',
          title: { zh: '我的预约', en: 'My bookings' },
          tool: 'mine',
          items: 'bookings',
          fields: ['departure', 'route', 'state'],
          labels: {
            departure: { zh: '发车时间', en: 'Departure' },
            route: { zh: '线路', en: 'Route' },
            state: { zh: '状态', en: 'State' },
          },
          empty: { zh: '还没有班车预约', en: 'No shuttle bus bookings yet' },
        },
        { show: 'action', title: { zh: '乘车码', en: 'Ride code' }, tool: 'showRideCode' },
      ],
    },
  ],
});
