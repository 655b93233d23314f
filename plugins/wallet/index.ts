// 校园卡: the campus card through the campus client (SERVICES.md §2) — the balance, the records,
// the spending, the switch to the digital card, the pay-code screen and the recharge page.
// Every amount the card service sends is in fen; every amount this plugin answers is in yuan.
import { definePlugin, defineTool, type ToolContext } from '@pku-harness/sdk';
import { z } from 'zod';

/** Where money goes onto the card: the card service's own H5 platform, whose 充值 entry makes
 * the order the school's app signs (SERVICES.md §2: no client can sign it). The platform's home
 * is the page the portal's sign-in chain lands on; SERVICES.md names no deeper address. */
const RECHARGE_PAGE = 'https://bdcard.pku.edu.cn/plat/';

const UNREACHABLE = '校园卡服务暂时无法访问，请稍后再试 · The campus card service could not be reached; try again later';
const UNREADABLE = '校园卡服务的回答无法识别，请稍后再试 · The campus card service gave an answer the app cannot read; try again later';

// ---- fen → yuan -------------------------------------------------------------------------------

/**
 * Yuan from an integer number of fen, exactly: the yuan and the fen are split with integer
 * arithmetic (a fen count is far below 2^53, so every step is exact), written as the decimal
 * "Y.FF", and that text converted to a number once. The result is the double nearest the exact
 * decimal, which prints as that decimal and reads back as the same fen; no float arithmetic
 * touches the amount before the one conversion (35 fen * 0.01 would be 0.35000000000000003).
 */
export function yuan(fen: number): number {
  const negative = fen < 0;
  const whole = Math.abs(fen);
  const yuanPart = Math.floor(whole / 100);
  const fenPart = whole - yuanPart * 100;
  return Number(`${negative ? '-' : ''}${yuanPart}.${fenPart < 10 ? '0' : ''}${fenPart}`);
}

/** A whole number as the card service sends it (an amount in fen, a count): an integer, or a
 * string of one; anything else is an answer the plugin cannot read. */
function integer(value: unknown): number {
  const n = typeof value === 'string' && /^-?\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new Error(UNREADABLE);
  return n;
}

/** An amount in fen. */
const fen = integer;

// ---- the card service ---------------------------------------------------------------------------

type Status = { status: 'signin_required' } | { status: 'verification_required'; methods: string[] };

/** The card answered: its `data`, or the status object the student recovers from. */
type Answered<T> = { data: T } | { status: Status };

/**
 * One request to the card service, its envelope (`{code: 200, success: true, data}`) checked. A
 * status object (sign in again, a second factor) is handed back for the tool to return as its
 * result (seed 004); anything else that is not the envelope — an HTML error page, a 500, a body
 * that is not JSON — is an Error in the student's words, never the raw answer.
 */
async function card<T = any>(
  ctx: ToolContext,
  path: string,
  query: [string, string][] = [],
  method?: string,
  body?: unknown,
): Promise<Answered<T>> {
  let answer;
  try {
    answer = await ctx.services.campus.request('card', { path, query, method, body });
  } catch (e) {
    console.warn('card request failed', path, (e as Error).message);
    throw new Error(UNREACHABLE);
  }
  if (typeof answer.status === 'string') return { status: answer as Status };
  const reply = (answer as { body: unknown }).body as any;
  if (answer.status >= 500) throw new Error(UNREACHABLE);
  if (answer.status !== 200 || reply === null || typeof reply !== 'object' || Array.isArray(reply)) {
    console.warn('card answered', path, answer.status, typeof reply);
    throw new Error(UNREADABLE);
  }
  if (reply.code !== 200 || reply.success === false) {
    const said = typeof reply.msg === 'string' && reply.msg.length <= 200 ? reply.msg : '';
    if (!said) throw new Error(UNREADABLE);
    throw new Error(`校园卡服务拒绝了这次请求：${said} · The campus card service refused the request: ${said}`);
  }
  if (reply.data === undefined || reply.data === null) throw new Error(UNREADABLE);
  return { data: reply.data as T };
}

// ---- dates ------------------------------------------------------------------------------------

const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const MONTH = /^[0-9]{4}-[0-9]{2}$/;
/** The example a date's format error gives: words a model copies, where a pattern is not. */
const DATE_EXAMPLE = '2026-12-04';
const MONTH_EXAMPLE = '2026-12';

/** Days since 1970-01-01 of a real calendar date, or undefined (e.g. 2026-02-30). */
function dayNumber(date: string): number | undefined {
  const [y, m, d] = date.split('-').map(Number);
  const ms = Date.UTC(y, m - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) return undefined;
  return ms / 86_400_000;
}

/** The date `YYYY-MM-DD` of a day number. */
function dateOf(day: number): string {
  const t = new Date(day * 86_400_000);
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
}

/**
 * The periods a student names ("this month", "last week"): the model picks one and the plugin
 * works out its dates from the core's local date, so no model computes a calendar.
 */
const PERIODS = ['today', 'yesterday', 'thisWeek', 'lastWeek', 'thisMonth', 'lastMonth', 'last7Days', 'last30Days'] as const;
type Period = (typeof PERIODS)[number];

/** `period`'s first and last day, local, a week starting on Monday. */
export function periodDates(period: Period, now: { date: string; weekday: number }): { from: string; to: string } {
  const today = dayNumber(now.date)!;
  const monday = today - (now.weekday - 1);
  const firstOfMonth = dayNumber(`${now.date.slice(0, 7)}-01`)!;
  const [from, to] = ((): [number, number] => {
    switch (period) {
      case 'today':
        return [today, today];
      case 'yesterday':
        return [today - 1, today - 1];
      case 'thisWeek':
        return [monday, today];
      case 'lastWeek':
        return [monday - 7, monday - 1];
      case 'thisMonth':
        return [firstOfMonth, today];
      case 'lastMonth':
        return [dayNumber(`${dateOf(firstOfMonth - 1).slice(0, 7)}-01`)!, firstOfMonth - 1];
      case 'last7Days':
        return [today - 6, today];
      case 'last30Days':
        return [today - 29, today];
    }
  })();
  return { from: dateOf(from), to: dateOf(to) };
}

/**
 * The dates a call covers: `from` and `to` when the student named dates (both, checked: real
 * dates, in order, at most a year apart), else its period's.
 */
function dates(
  input: { period?: Period; from?: string; to?: string },
  ctx: ToolContext,
): { period?: Period; from: string; to: string } {
  const { from, to } = input;
  // zod fills in `period`'s default either way: named dates win over it.
  if (from === undefined && to === undefined) {
    const period = input.period ?? 'thisMonth';
    return { period, ...periodDates(period, ctx.now) };
  }
  if (from === undefined) throw new Error(`from：给了 to 就要给 from，例如 ${DATE_EXAMPLE} · from: give from with to, e.g. ${DATE_EXAMPLE}`);
  if (to === undefined) throw new Error(`to：给了 from 就要给 to，例如 ${DATE_EXAMPLE} · to: give to with from, e.g. ${DATE_EXAMPLE}`);
  const a = dayNumber(from);
  if (a === undefined) throw new Error(`from：${from} 不是有效日期，例如 ${DATE_EXAMPLE} · from: ${from} is not a date; write it like ${DATE_EXAMPLE}`);
  const b = dayNumber(to);
  if (b === undefined) throw new Error(`to：${to} 不是有效日期，例如 ${DATE_EXAMPLE} · to: ${to} is not a date; write it like ${DATE_EXAMPLE}`);
  if (b < a) throw new Error(`to（${to}）早于 from（${from}）· to (${to}) is before from (${from})`);
  if (b - a > 366) throw new Error('from 到 to 最多一年 · from and to may be at most a year apart');
  return { from, to };
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** A record's time as local 'YYYY-MM-DD HH:mm': the card's own local text, or a unix time. */
function localTime(value: unknown, ctx: ToolContext): string {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}/.test(value)) {
    return `${value.slice(0, 10)} ${value.slice(11, 16)}`;
  }
  if (typeof value === 'number' && Number.isFinite(value)) {
    // Seconds or milliseconds; shifted by the zone's offset, then read as UTC (no time-zone data).
    const ms = value < 1e11 ? value * 1000 : value;
    const t = new Date(ms + ctx.now.offsetMinutes * 60_000);
    return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}`;
  }
  throw new Error(UNREADABLE);
}

/** A record's amount in fen, negative for money out: the sign the card gives, or its kind's. */
function signedFen(record: any): number {
  const amount = fen(record.tranamt);
  const out = typeof record.turnoverType === 'string' && /消费|支付|扣款/.test(record.turnoverType);
  return out && amount > 0 ? -amount : amount;
}

// ---- the tools --------------------------------------------------------------------------------

const cardBalance = defineTool({
  title: '校园卡余额',
  description:
    "Campus card balance in CNY (yuan), each account's balance, today's spending and the daily limit, and whether the card is lost or frozen. Use when the student asks how much money is left on the card or how much they spent today.",
  input: z.object({}),
  effect: 'read',
  labels: {
    balanceYuan: { zh: '余额（元）', en: 'Balance (yuan)' },
    spentTodayYuan: { zh: '今日消费（元）', en: 'Spent today (yuan)' },
    dailyLimitYuan: { zh: '每日限额（元）', en: 'Daily limit (yuan)' },
    accounts: { zh: '账户', en: 'Accounts' },
    lost: { zh: '已挂失', en: 'Reported lost' },
    frozen: { zh: '已冻结', en: 'Frozen' },
  },
  output: z.object({
    balanceYuan: z.number().describe('The card balance, in yuan'),
    spentTodayYuan: z.number().describe('Spent today, in yuan'),
    dailyLimitYuan: z.number().describe('The daily spending limit, in yuan'),
    accounts: z
      .array(z.object({ name: z.string(), balanceYuan: z.number(), spentTodayYuan: z.number(), dailyLimitYuan: z.number() }))
      .describe("Each account's balance, spending today and daily limit, in yuan"),
    lost: z.boolean().describe('Whether the card is reported lost'),
    frozen: z.boolean().describe('Whether the card is frozen'),
  }),
  execute: async (_input, ctx) => {
    const answer = await card<{ card?: any[] }>(ctx, '/berserker-app/ykt/tsm/queryCard');
    if ('status' in answer) return answer.status;
    const first = Array.isArray(answer.data.card) ? answer.data.card[0] : undefined;
    if (!first || typeof first !== 'object') throw new Error(UNREADABLE);
    const accounts = (Array.isArray(first.accinfo) ? first.accinfo : []).map((a: any) => ({
      name: String(a.name ?? ''),
      balanceYuan: yuan(fen(a.balance)),
      spentTodayYuan: yuan(fen(a.daycostamt ?? 0)),
      dailyLimitYuan: yuan(fen(a.daycostlimit ?? 0)),
    }));
    const main = (Array.isArray(first.accinfo) ? first.accinfo[0] : undefined) ?? {};
    return {
      balanceYuan: yuan(fen(first.elec_accamt)),
      spentTodayYuan: yuan(fen(main.daycostamt ?? 0)),
      dailyLimitYuan: yuan(fen(main.daycostlimit ?? 0)),
      accounts,
      lost: String(first.lostflag) === '1',
      frozen: String(first.freezeflag) === '1',
    };
  },
});

const date = (what: string) =>
  z
    .string()
    .regex(DATE)
    .meta({ examples: [DATE_EXAMPLE] })
    .describe(`${what}, local date like ${DATE_EXAMPLE} (inclusive), only when the student names dates; with \`to\``)
    .optional();

const period = z
  .enum(PERIODS)
  .default('thisMonth')
  .describe(
    "The student's period, in local time (weeks start on Monday): today, yesterday, thisWeek, lastWeek, thisMonth, lastMonth, last7Days or last30Days. Left out when from and to are given",
  );

const transactions = defineTool({
  title: '校园卡流水',
  description:
    'The campus card records (spending and top-ups) of a period (this month unless the student says otherwise) or between two dates the student names, newest first, paged. amountYuan is negative for money spent, positive for money put on the card; balanceAfterYuan is the balance after the record; time is local YYYY-MM-DD HH:mm. from and to are at most a year apart. Ask for the next page with page + 1 while page < pages.',
  input: z.object({
    period,
    from: date('First day'),
    to: date('Last day'),
    page: z.number().int().min(1).optional().describe('The page, from 1; 1 when left out'),
    limit: z.number().int().min(1).max(50).optional().describe('Records per page, 1 to 50; 20 when left out'),
  }),
  effect: 'read',
  labels: {
    period: { zh: '时段', en: 'Period' },
    from: { zh: '起始日期', en: 'From' },
    to: { zh: '截止日期', en: 'To' },
    page: { zh: '页码', en: 'Page' },
    limit: { zh: '每页条数', en: 'Per page' },
    pages: { zh: '总页数', en: 'Pages' },
    total: { zh: '记录数', en: 'Records' },
    records: { zh: '流水', en: 'Records on this page' },
  },
  output: z.object({
    period: z.enum(PERIODS).optional().describe('The period the records cover, when one was asked'),
    from: z.string().describe('The first day, YYYY-MM-DD'),
    to: z.string().describe('The last day, YYYY-MM-DD'),
    page: z.number().describe('This page, from 1'),
    pages: z.number().describe('How many pages there are'),
    total: z.number().describe('How many records there are'),
    records: z
      .array(z.object({ time: z.string(), merchant: z.string(), kind: z.string(), amountYuan: z.number(), balanceAfterYuan: z.number() }))
      .describe('The records on this page, newest first; amounts in yuan'),
  }),
  execute: async (input, ctx) => {
    const covered = dates(input, ctx);
    const { from, to } = covered;
    const page = input.page ?? 1;
    const limit = input.limit ?? 20;
    const answer = await card<any>(ctx, '/berserker-search/search/personal/turnover', [
      ['size', String(limit)],
      ['current', String(page)],
      ['type', ''],
      ['timeFrom', from],
      ['timeTo', to],
    ]);
    if ('status' in answer) return answer.status;
    const data = answer.data;
    if (!Array.isArray(data.records)) throw new Error(UNREADABLE);
    return {
      ...covered,
      page,
      pages: integer(data.pages ?? 0),
      total: integer(data.total ?? data.records.length),
      records: data.records.map((r: any) => ({
        time: localTime(r.effectdateStr, ctx),
        merchant: String(r.resume ?? ''),
        kind: String(r.turnoverType ?? ''),
        amountYuan: yuan(signedFen(r)),
        balanceAfterYuan: yuan(fen(r.cardBalance)),
      })),
    };
  },
});

const spending = defineTool({
  title: '校园卡消费统计',
  description:
    "Campus card totals of a period (this month unless the student says otherwise) or between two dates the student names — money put on the card (incomeYuan) and money spent (spentYuan), in yuan — and the money spent on each day of one month (spentPerDay, days without spending left out). month defaults to the month of the period's last day. Use for 'how much did I spend this month / last week': period thisMonth / lastWeek.",
  input: z.object({
    period,
    from: date('First day of the totals'),
    to: date('Last day of the totals'),
    month: z
      .string()
      .regex(MONTH)
      .meta({ examples: [MONTH_EXAMPLE] })
      .optional()
      .describe(`The month of spentPerDay, like ${MONTH_EXAMPLE}; the month of the last day when left out`),
  }),
  effect: 'read',
  labels: {
    period: { zh: '时段', en: 'Period' },
    from: { zh: '起始日期', en: 'From' },
    to: { zh: '截止日期', en: 'To' },
    incomeYuan: { zh: '充入（元）', en: 'Put on the card (yuan)' },
    spentYuan: { zh: '消费（元）', en: 'Spent (yuan)' },
    month: { zh: '月份', en: 'Month' },
    spentPerDay: { zh: '每日消费', en: 'Spent per day' },
  },
  output: z.object({
    period: z.enum(PERIODS).optional().describe('The period the totals cover, when one was asked'),
    from: z.string().describe('The first day, YYYY-MM-DD'),
    to: z.string().describe('The last day, YYYY-MM-DD'),
    incomeYuan: z.number().describe('Money put on the card, in yuan'),
    spentYuan: z.number().describe('Money spent, in yuan'),
    month: z.string().describe('The month of spentPerDay, YYYY-MM'),
    spentPerDay: z.array(z.object({ date: z.string(), spentYuan: z.number() })).describe('Money spent on each day of the month, in yuan'),
  }),
  execute: async (input, ctx) => {
    const covered = dates(input, ctx);
    const { from, to } = covered;
    const perMonth = input.month ?? to.slice(0, 7);
    if (dayNumber(`${perMonth}-01`) === undefined) {
      throw new Error(
        `month：${perMonth} 不是有效月份，例如 ${MONTH_EXAMPLE} · month: ${perMonth} is not a month; write it like ${MONTH_EXAMPLE}`,
      );
    }
    const totals = await card<any>(ctx, '/berserker-search/statistics/turnover/count', [
      ['timeFrom', from],
      ['timeTo', to],
    ]);
    if ('status' in totals) return totals.status;
    const days = await card<Record<string, unknown>>(ctx, '/berserker-search/statistics/turnover/sum/user', [
      ['dateStr', perMonth],
      ['dateType', 'month'],
      ['statisticsDateStr', 'day'],
      ['type', ''],
    ]);
    if ('status' in days) return days.status;
    if (typeof days.data !== 'object' || Array.isArray(days.data)) throw new Error(UNREADABLE);
    const spentPerDay = Object.entries(days.data)
      .map(([day, amount]) => {
        // The day as "1", "01" or "YYYY-MM-DD": its day of the month.
        const n = Number(day.slice(-2).replace('-', ''));
        if (!Number.isInteger(n) || n < 1 || n > 31) throw new Error(UNREADABLE);
        return { date: `${perMonth}-${pad(n)}`, spentYuan: yuan(Math.abs(fen(amount))) };
      })
      .filter((d) => d.spentYuan !== 0)
      .sort((a, b) => (a.date < b.date ? -1 : 1));
    return {
      ...covered,
      incomeYuan: yuan(Math.abs(fen(totals.data.income))),
      spentYuan: yuan(Math.abs(fen(totals.data.expenses))),
      month: perMonth,
      spentPerDay,
    };
  },
});

const useDigitalCard = defineTool({
  title: '切换为数字卡',
  description:
    'Switches the campus card used for paying by code to the digital card (电子卡, which the card service calls 数字卡), which the pay code needs. It makes payments possible, so the student confirms it. Use only when the student asks to pay by code or to switch to the digital card.',
  input: z.object({}),
  effect: 'money',
  target: '把校园卡的付款方式切换为数字卡',
  execute: async (_input, ctx) => {
    const answer = await card<any>(ctx, '/berserker-app/useCard/setUseCardConfig', [], 'POST', {
      cardType: 1,
      synAccessSource: 'h5',
    });
    if ('status' in answer) return answer.status;
    if (answer.data.cardType !== undefined && Number(answer.data.cardType) !== 1) throw new Error(UNREADABLE);
    return { status: 'switched', cardType: 1, cardTypeName: '数字卡' };
  },
});

const showPayCode = defineTool({
  title: '付款码',
  description: "Opens the campus card's pay-code screen. Only the student's tap opens it.",
  input: z.object({}),
  effect: 'write',
  // Seed 004: the pay code is a secret, never a tool result. The shell opens the core's
  // pay-code screen, which reads the code itself and shows it only there.
  userOnly: true,
  execute: async () => ({ status: 'opened', screen: 'payCode' }),
});

const recharge = defineTool({
  title: '校园卡充值',
  description:
    "You cannot recharge the campus card: the card service accepts only orders signed by the school's own app. This answers the card service's own page for the student to open in the browser; money moves only there, after the student confirms it on that page. Use when the student asks to top up the card, and tell them the page opens for them to recharge.",
  input: z.object({}),
  // Read: it changes nothing. It only names a page; what is paid is decided on that page by the
  // student, so the model may offer it, and a scheduled check could never move money with it.
  effect: 'read',
  execute: async () => ({ status: 'open_in_browser', url: RECHARGE_PAGE }),
});

export default definePlugin({
  id: 'wallet',
  title: '校园卡',
  description: '校园卡：余额、消费记录和统计、数字卡与付款码，以及校园卡服务的充值页面。',
  examples: ['我的校园卡还有多少钱？', '这个月在食堂花了多少钱？', '显示付款码'],
  i18n: {
    en: {
      title: 'Campus card',
      description: "The campus card: the balance, records and spending, the digital card and its pay code, and the card service's recharge page.",
      examples: ['How much is left on my campus card?', 'How much did I spend in the canteens this month?', 'Show my pay code'],
      tools: {
        cardBalance: { title: 'Card balance' },
        transactions: { title: 'Card records' },
        spending: { title: 'Card spending' },
        useDigitalCard: { title: 'Switch to the digital card' },
        showPayCode: { title: 'Pay code' },
        recharge: { title: 'Recharge the card' },
      },
    },
  },
  requires: ['campus-session'],
  scopes: ['card', 'portal'],
  // Seed 000's advice for authors: money behind a confirmation.
  defaultModes: { money: 'ask' },
  dataSources: { balance: { title: '校园卡余额', tool: 'cardBalance', ttlMs: 2 * 60_000 } },
  tools: { cardBalance, transactions, spending, useDigitalCard, showPayCode, recharge },
  // The pay code stays on its own screen: this one only opens it (seed 004).
  screens: [
    {
      id: 'card',
      title: { zh: '校园卡', en: 'Campus card' },
      sections: [
        {
          show: 'value',
          title: { zh: '余额', en: 'Balance' },
          source: 'balance',
          fields: ['balanceYuan', 'spentTodayYuan', 'dailyLimitYuan', 'lost', 'frozen'],
        },
        { show: 'action', title: { zh: '付款码', en: 'Pay code' }, tool: 'showPayCode' },
        {
          show: 'table',
          title: { zh: '本月流水', en: 'This month\'s records' },
          tool: 'transactions',
          items: 'records',
          fields: ['time', 'merchant', 'amountYuan', 'balanceAfterYuan'],
          labels: {
            time: { zh: '时间', en: 'Time' },
            merchant: { zh: '商户', en: 'Merchant' },
            amountYuan: { zh: '金额（元）', en: 'Amount (yuan)' },
            balanceAfterYuan: { zh: '余额（元）', en: 'Balance after (yuan)' },
          },
          empty: { zh: '本月还没有流水', en: 'No records this month yet' },
        },
        {
          show: 'action',
          title: { zh: '切换为数字卡', en: 'Switch to the digital card' },
          tool: 'useDigitalCard',
        },
        { show: 'action', title: { zh: '充值', en: 'Recharge' }, tool: 'recharge' },
      ],
    },
  ],
});
