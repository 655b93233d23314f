// 成绩 (grades and GPA): the student's scores and GPA through Treehole's course API, with the
// student's own Treehole session (../shared/campus/SERVICES.md §9). Grades are the student's own
// data: read tools, not untrusted, never public. The course API asks for its own authorization
// (40077 "获取授权码"), which the core answers as a `verification_required` status naming the
// check `grades`; the student does it with an SMS or authenticator code, then asks again.
import { definePlugin, defineTool, type ToolContext } from '@pku-harness/sdk';
import { z } from 'zod';

const SCORES_PATH = '/chapi/api/course/score_v2';

/** The course API's answer was none of its own: the student's words for it. */
const UNREADABLE = '成绩服务暂时无法访问，请稍后再试 · The grades service could not be reached; try again later';

/** Treehole's own SMS check, in words for the model: which screen the student does it on. */
const TREEHOLE_CHECK =
  '树洞要求先完成短信验证：学生在“树洞短信验证”页面（settings__openScreen 的 treehole-verification）完成后再试 · Treehole asks for its SMS check first, on the Treehole SMS check screen';

/** The course API's authorization (40077), in words for the model. */
const GRADES_CHECK =
  '查询成绩需要先完成树洞的课程授权（获取授权码）：学生在“成绩查询授权”页面（settings__openScreen 的 grades-verification；终端：harness campus verify grades）用短信验证码或手机令牌完成授权后再试 · Reading grades needs Treehole\'s course authorization (获取授权码) first: the student completes it with an SMS or authenticator code on the Grades authorization screen (settings__openScreen grades-verification; terminal: harness campus verify grades), then asks again';

/** A state the student recovers from: returned as the tool's result, never thrown (seed 004). */
type Status =
  | { status: 'signin_required' }
  | { status: 'verification_required'; check: 'treehole' | 'grades'; methods: string[]; message: string };

/** One row of `cjxx` as the course API gives it: every value a string (SERVICES.md §9). */
type Row = Record<string, unknown>;

/** The course API's score list, or the sign-in / check status object. */
async function scoreList(ctx: ToolContext): Promise<{ rows: Row[]; schoolGpa: number | null; termGpa: Map<string, number> } | Status> {
  const res = await ctx.services.campus.request('treehole', { path: SCORES_PATH });
  if (res.status === 'signin_required') return res;
  if (res.status === 'verification_required') {
    return res.check === 'grades'
      ? { status: 'verification_required', check: 'grades', methods: res.methods, message: GRADES_CHECK }
      : { status: 'verification_required', check: 'treehole', methods: res.methods, message: TREEHOLE_CHECK };
  }
  const body = res.body as { code?: unknown; message?: unknown; data?: unknown } | null;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof body.code !== 'number') {
    throw new Error(UNREADABLE);
  }
  if (body.code !== 20000) {
    const said = typeof body.message === 'string' && body.message ? body.message : `code ${body.code}`;
    throw new Error(`成绩服务拒绝了这个请求：${said} · The grades service refused the request: ${said}`);
  }
  const data = body.data as { score?: { cjxx?: unknown; scoreLists?: unknown; gpa?: { gpa?: unknown } }; gpa?: { data?: unknown } } | null;
  const score = typeof data === 'object' && data !== null ? data.score : undefined;
  if (res.status !== 200 || typeof score !== 'object' || score === null) throw new Error(UNREADABLE);
  const rows = Array.isArray(score.cjxx) ? score.cjxx : Array.isArray(score.scoreLists) ? score.scoreLists : null;
  if (rows === null) throw new Error(UNREADABLE);
  const termGpa = new Map<string, number>();
  for (const t of Array.isArray(data?.gpa?.data) ? data.gpa.data : []) {
    const gpa = schoolValue(t?.gpa);
    if (typeof t?.xndxq === 'string' && gpa !== null) termGpa.set(t.xndxq, gpa);
  }
  return {
    rows: rows.filter((r): r is Row => typeof r === 'object' && r !== null),
    schoolGpa: schoolValue(score.gpa?.gpa),
    termGpa,
  };
}

function isStatus<T extends object>(answer: T | Status): answer is Status {
  return 'status' in answer;
}

/** A GPA the school gave: used only when it is a number in 0–4 (SERVICES.md §9). */
function schoolValue(raw: unknown): number | null {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 && n <= 4 ? n : null;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
}

/** What a score says: a number, or what the school wrote instead. */
type State = 'graded' | 'passed' | 'failed' | 'withdrawn' | 'exempt' | 'ungraded' | 'other';

function stateOf(score: string): State {
  if (score === '' || /^[-.]+$/.test(score)) return 'ungraded';
  if (/^\d+(\.\d+)?$/.test(score)) return 'graded';
  if (score === '合格' || score === 'P') return 'passed';
  if (score === '不合格' || score === 'F') return 'failed';
  if (score === 'W') return 'withdrawn';
  if (score === 'EX') return 'exempt';
  return 'other';
}

/** The term as the school writes it, "25-26-1" (学年-学期). */
function termOf(row: Row): string {
  const year = str(row.xnd);
  const term = str(row.xq);
  return year && term ? `${year}-${term}` : str(row.xndxq);
}

/**
 * PKU's grade point for a numeric score (undergraduate rules, Article 13, from 2019):
 * 4 − 3·(100 − x)² / 1600 for 60 ≤ x ≤ 100, 0 below 60.
 */
function gradePoint(x: number): number {
  if (x < 60) return 0;
  return 4 - (3 * (100 - Math.min(x, 100)) ** 2) / 1600;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** One published score as the model reads it: `id` is the school's, one per attempt. */
function scoreOf(row: Row) {
  const score = str(row.xqcj ?? row.cj);
  const state = stateOf(score);
  const credits = Number(str(row.xf));
  return {
    id: str(row.bkcjbh) || `${termOf(row)} ${str(row.kcmc)}`,
    term: termOf(row),
    course: str(row.kcmc),
    credits: Number.isFinite(credits) ? credits : 0,
    score,
    state,
    gradePoint: state === 'graded' ? round(gradePoint(Number(score)), 3) : null,
    category: str(row.kclbmc ?? row.kclb),
    grading: str(row.cjjlfs),
  };
}

type Scored = ReturnType<typeof scoreOf>;

/**
 * Why a score is left out of a GPA computed here (SERVICES.md §9: non-numeric scores, credits ≤ 0,
 * 毕业论文 and 综合性考试), or null when it counts. Every retake counts.
 */
function leftOut(s: Scored): string | null {
  if (s.state === 'ungraded') return '尚未出分 · not graded yet';
  if (s.state !== 'graded') return '非百分制成绩 · not a numeric score';
  if (!(s.credits > 0)) return '没有学分 · no credits';
  if (s.course.includes('毕业论文') || s.course.includes('综合性考试')) return '毕业论文和综合性考试不计入 · the thesis and comprehensive exams are left out';
  return null;
}

const term = z
  .string()
  .regex(/^\d{2}-\d{2}-[123]$/)
  .optional()
  .describe('Only this term, as "25-26-1" (academic year 2025–2026, term 1; 2 is spring, 3 summer). Omit for every term');

const scores = defineTool({
  title: '成绩',
  description:
    "The student's course scores (成绩) from the school, newest term first: each with its term (\"25-26-1\"), course, credits, score as the school wrote it (a number, 合格, W…), its state and PKU grade point for numeric scores; courses not graded yet are listed apart under pending. Use when the student asks about grades; filter by term or by a course name's words. Private: never share it unless the student asks.",
  input: z.object({
    term,
    course: z.string().trim().min(1).max(40).optional().describe('Only courses whose name holds these words, e.g. 线性代数'),
  }),
  effect: 'read',
  labels: {
    term: { zh: '学期', en: 'Term' },
    course: { zh: '课程名含有', en: 'Course name has' },
    scores: { zh: '成绩', en: 'Scores' },
    pending: { zh: '尚未出分', en: 'Not graded yet' },
    terms: { zh: '学期', en: 'Terms' },
  },
  output: z.object({
    scores: z
      .array(
        z.object({
          id: z.string().describe("The school's id of this attempt at the course; a new one appears when a grade is published"),
          term: z.string().describe('The term, "25-26-1"'),
          course: z.string(),
          credits: z.number().describe('Credits (学分)'),
          score: z.string().describe('As the school wrote it: a number out of 100, 合格, 不合格, W (withdrawn), EX (exempt)'),
          state: z.enum(['graded', 'passed', 'failed', 'withdrawn', 'exempt', 'other']),
          gradePoint: z.number().nullable().describe('PKU grade point, 0–4, for a numeric score'),
          category: z.string().describe('Course category, e.g. 专业必修'),
          grading: z.string().describe('百分制 or 合格制'),
        }),
      )
      .describe('Published scores, newest term first'),
    pending: z.array(z.object({ term: z.string(), course: z.string(), credits: z.number() })).describe('Courses not graded yet'),
    terms: z.array(z.string()).describe('Every term with a course, newest first'),
  }),
  execute: async ({ term: only, course }, ctx) => {
    const answer = await scoreList(ctx);
    if (isStatus(answer)) return answer;
    const all = answer.rows.map(scoreOf);
    const terms = [...new Set(all.map((s) => s.term))].sort().reverse();
    const picked = all
      .filter((s) => (only === undefined || s.term === only) && (course === undefined || s.course.includes(course)))
      .sort((a, b) => b.term.localeCompare(a.term));
    return {
      scores: picked.filter((s) => s.state !== 'ungraded'),
      pending: picked.filter((s) => s.state === 'ungraded').map((s) => ({ term: s.term, course: s.course, credits: s.credits })),
      terms,
    };
  },
});

const gpa = defineTool({
  title: '绩点',
  description:
    "The student's GPA (绩点), 0–4: the school's own figure when the course API gives one, else computed here by PKU's formula (grade point 4 − 3·(100 − x)²/1600 for a score x of 60–100, 0 below 60; credit-weighted; every retake counts; 合格/W/EX, courses without credits, 毕业论文 and 综合性考试 left out), labelled as computed. For one term give term. Private: never share it unless the student asks.",
  input: z.object({ term }),
  effect: 'read',
  labels: {
    term: { zh: '学期', en: 'Term' },
    note: { zh: '说明', en: 'Note' },
    gpa: { zh: '绩点', en: 'GPA' },
    source: { zh: '来源', en: 'Source' },
    credits: { zh: '计入学分', en: 'Credits counted' },
    courses: { zh: '计入课程数', en: 'Courses counted' },
    excluded: { zh: '未计入', en: 'Left out' },
  },
  output: z.object({
    gpa: z.number().nullable().describe('The GPA, 0–4, to 3 decimals; null with no numeric score to count'),
    source: z.enum(['school', 'computed']).describe("school: the school's figure; computed: by PKU's formula here, not official"),
    note: z.string().describe('What the figure is, in words to pass on'),
    term: z.string().nullable().describe('The term it covers, or null for every term'),
    credits: z.number().describe('Credits counted by the formula'),
    courses: z.number().describe('Scores counted by the formula'),
    excluded: z.array(z.object({ term: z.string(), course: z.string(), score: z.string(), reason: z.string() })).describe('Scores the formula leaves out, and why'),
  }),
  execute: async ({ term: only }, ctx) => {
    const answer = await scoreList(ctx);
    if (isStatus(answer)) return answer;
    const all = answer.rows.map(scoreOf).filter((s) => only === undefined || s.term === only);
    let points = 0;
    let credits = 0;
    let courses = 0;
    const excluded = [];
    for (const s of all) {
      const why = leftOut(s);
      if (why !== null) {
        excluded.push({ term: s.term, course: s.course, score: s.score, reason: why });
        continue;
      }
      points += gradePoint(Number(s.score)) * s.credits;
      credits += s.credits;
      courses += 1;
    }
    const computed = credits > 0 ? round(points / credits, 3) : null;
    const school = only === undefined ? answer.schoolGpa : (answer.termGpa.get(only) ?? null);
    const common = { term: only ?? null, credits, courses, excluded };
    if (school !== null) {
      return { gpa: school, source: 'school' as const, note: '学校给出的绩点 · the school\'s own GPA', ...common };
    }
    return {
      gpa: computed,
      source: 'computed' as const,
      note: '按北大绩点公式计算，非官方 · computed by PKU\'s formula, not official',
      ...common,
    };
  },
});

export default definePlugin({
  id: 'grades',
  title: '成绩',
  description: '我的成绩和绩点：按学期查看各门课的成绩，学校给出的或按北大公式计算的绩点。',
  examples: ['我这学期的成绩出来了吗？', '我的绩点是多少？'],
  i18n: {
    en: {
      title: 'Grades',
      description: "Your scores and GPA: each course's score by term, and the school's GPA or one computed by PKU's formula.",
      examples: ['Are my grades for this term out?', 'What is my GPA?'],
      tools: {
        scores: { title: 'Scores' },
        gpa: { title: 'GPA' },
      },
    },
  },
  requires: ['campus-session'],
  scopes: ['treehole'],
  dataSources: { scores: { title: '我的成绩', tool: 'scores', ttlMs: 60 * 60_000 } },
  tools: { scores, gpa },
});
