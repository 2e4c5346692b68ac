/**
 * One run directory as the viewer reads it. Everything is read again when asked (a live run
 * rewrites metrics.jsonl each step and adds a trajectories file per step), except what cannot
 * change: a step's trajectories file, kept while its size and mtime stay the same, and the
 * run's tokenizer once found.
 */
import { existsSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { RunDirectory, type SavedTrajectory } from '../train/run-dir.js';
import { evalReportDetail, listEvalReports, readEvalReport, type EvalReportDetail, type EvalReportEntry } from './eval-reports.js';
import { badRequest, notFound } from './http-error.js';
import { openingMessages, type OpeningMessages } from './prompt-messages.js';
import { runTokenizer, type RunTokenizer } from './run-tokenizer.js';
import { tokenPieces, type TokenPiece } from './token-pieces.js';

const STEP_FILE = /^step-(\d+)\.jsonl\.gz$/;
const CACHED_STEPS = 3;

export interface RunInfo {
  id: number;
  name: string;
  dir: string;
  /** The resolved config (config.json), when the run has one. */
  config?: Record<string, unknown>;
  /** summary.json: the run has ended. */
  summary?: Record<string, unknown>;
  /** The last step metrics.jsonl holds (0 for the eval before training; null before any). */
  lastStep: number | null;
  /** When metrics.jsonl was last written (ms since the epoch), null before any. */
  updatedMs: number | null;
}

export interface TrajectorySummary {
  index: number;
  taskId: string;
  group: number;
  sample: number;
  reward: number;
  shapedReward: number;
  advantage: number;
  filtered: boolean;
  kept: boolean;
  termination: string;
  rewardReason: string;
  turns: number;
  promptTokens: number;
  responseTokens: number;
  /** Tests that passed, and all tests graded (SWE). */
  tests?: { passed: number; total: number };
  /** How close the patch came to the task's gold patch, in [0, 1] (SWE tasks with one). */
  goldSimilarity?: number;
  error?: string;
}

export type TrajectoryDetail = Omit<SavedTrajectory, 'tokens' | 'mask' | 'logprobs' | 'messages'> & {
  index: number;
  step: number;
  tokenCount: number;
  messages: OpeningMessages['messages'];
  messagesSource: OpeningMessages['source'];
  /** The tokens as text pieces with their mask; null when the run's tokenizer could not be loaded. */
  pieces: TokenPiece[] | null;
  tokenizer: string;
};

interface CachedStep {
  size: number;
  mtimeMs: number;
  trajectories: SavedTrajectory[];
}

async function readJsonObject(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Test statuses that count as passing (lib/env/reward/test-log.ts's TestStatus). */
const PASSING = new Set(['PASSED', 'XFAIL']);

export class ViewRun {
  readonly #run: RunDirectory;
  readonly #steps = new Map<number, CachedStep>();
  #tokenizer: Promise<RunTokenizer> | undefined;

  constructor(
    readonly id: number,
    readonly name: string,
    /** Real path (symbolic links resolved), so that containment checks compare like with like. */
    readonly dir: string,
  ) {
    this.#run = new RunDirectory(dir);
  }

  async config(): Promise<Record<string, unknown> | undefined> {
    return readJsonObject(path.join(this.dir, 'config.json'));
  }

  async info(): Promise<RunInfo> {
    const [config, summary, metrics] = await Promise.all([this.config(), readJsonObject(path.join(this.dir, 'summary.json')), this.metrics()]);
    const last = metrics.rows.at(-1)?.step;
    return {
      id: this.id,
      name: this.name,
      dir: this.dir,
      ...(config ? { config } : {}),
      ...(summary ? { summary } : {}),
      lastStep: typeof last === 'number' ? last : null,
      updatedMs: metrics.mtimeMs,
    };
  }

  async metrics(): Promise<{ rows: Record<string, unknown>[]; mtimeMs: number | null }> {
    const stat = await fs.stat(this.#run.metricsFile).catch(() => undefined);
    return { rows: await this.#run.readMetrics(), mtimeMs: stat?.mtimeMs ?? null };
  }

  /** Steps with a trajectories file, ascending. */
  async trajectorySteps(): Promise<number[]> {
    const names = existsSync(this.#run.trajectories) ? await fs.readdir(this.#run.trajectories) : [];
    return names.flatMap((name) => {
      const m = STEP_FILE.exec(name);
      return m ? [Number(m[1])] : [];
    }).sort((a, b) => a - b);
  }

  async trajectories(step: number): Promise<SavedTrajectory[]> {
    const file = path.join(this.#run.trajectories, `step-${step}.jsonl.gz`);
    const stat = await fs.stat(file).catch(() => undefined);
    if (!stat?.isFile()) throw notFound(`run ${this.id} step ${step}'s trajectories file`);
    const cached = this.#steps.get(step);
    if (cached && cached.size === stat.size && cached.mtimeMs === stat.mtimeMs) return cached.trajectories;
    const trajectories = await this.#run.readTrajectories(step);
    this.#steps.delete(step);
    this.#steps.set(step, { size: stat.size, mtimeMs: stat.mtimeMs, trajectories });
    // Map iteration is insertion order: the first key is the least recently read step.
    if (this.#steps.size > CACHED_STEPS) this.#steps.delete(this.#steps.keys().next().value!);
    return trajectories;
  }

  async trajectorySummaries(step: number): Promise<TrajectorySummary[]> {
    return (await this.trajectories(step)).map((t, index) => {
      const summary: TrajectorySummary = {
        index,
        taskId: t.taskId,
        group: t.group,
        sample: t.sample,
        reward: t.reward,
        shapedReward: t.shapedReward,
        advantage: t.advantage,
        filtered: t.filtered,
        kept: t.kept,
        termination: t.termination,
        rewardReason: t.rewardReason,
        turns: t.turns.length,
        promptTokens: t.promptTokens,
        responseTokens: t.responseTokens,
      };
      if (t.tests) {
        const statuses = Object.values(t.tests);
        summary.tests = { passed: statuses.filter((s) => PASSING.has(s)).length, total: statuses.length };
      }
      if (t.goldSimilarity !== undefined) summary.goldSimilarity = t.goldSimilarity;
      if (t.error !== undefined) summary.error = t.error;
      return summary;
    });
  }

  async trajectoryDetail(step: number, index: number): Promise<TrajectoryDetail> {
    const all = await this.trajectories(step);
    const saved = all[index];
    if (!saved) throw notFound(`trajectory ${index} of run ${this.id} step ${step} (the step has ${all.length})`);
    const found = await this.tokenizer();
    const { tokens, mask, logprobs, messages: _, ...rest } = saved;
    const opening = openingMessages(saved, 'tokenizer' in found ? found.tokenizer : undefined);
    return {
      ...rest,
      index,
      step,
      tokenCount: tokens.length,
      messages: opening.messages,
      messagesSource: opening.source,
      pieces: 'tokenizer' in found ? tokenPieces(found.tokenizer, tokens, mask, logprobs) : null,
      tokenizer: 'tokenizer' in found ? found.source : `none: ${found.error}`,
    };
  }

  /** The run's tokenizer, or why there is none (a later call tries again: a live run may save one). */
  async tokenizer(): Promise<RunTokenizer | { error: string }> {
    this.#tokenizer ??= this.config().then((config) => runTokenizer(this.dir, config?.model as { preset?: string; path?: string } | undefined));
    try {
      return await this.#tokenizer;
    } catch (error) {
      this.#tokenizer = undefined;
      return { error: (error as Error).message };
    }
  }

  async evalReports(): Promise<EvalReportEntry[]> {
    return listEvalReports(this.dir);
  }

  /** The report at a path relative to the run; anything outside the run directory is refused. */
  async evalReport(relative: string): Promise<EvalReportDetail> {
    const file = this.containedPath(relative);
    const listed = (await this.evalReports()).some((entry) => path.join(this.dir, entry.path) === file);
    const report = listed ? await readEvalReport(file) : undefined;
    if (!report) throw notFound(`eval report ${JSON.stringify(relative)} of run ${this.id}`);
    return evalReportDetail(file, relative, report);
  }

  /** dir/relative, refused with 400 unless it stays inside dir once links are resolved. */
  containedPath(relative: string): string {
    if (relative === '' || relative.includes('\0') || path.isAbsolute(relative)) throw badRequest(`path ${JSON.stringify(relative)} must be relative to the run directory`);
    const file = path.resolve(this.dir, relative);
    const inside = (p: string) => p.startsWith(this.dir + path.sep);
    if (!inside(file)) throw badRequest(`path ${JSON.stringify(relative)} is outside the run directory`);
    let real = file;
    try {
      real = realpathSync(file);
    } catch {
      // Missing: nothing to follow; the caller answers 404.
    }
    if (!inside(real)) throw badRequest(`path ${JSON.stringify(relative)} leads outside the run directory`);
    return file;
  }
}
