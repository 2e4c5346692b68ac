/**
 * The run directory, everything a run leaves behind:
 *
 *   config.json                 the resolved config (every default filled in)
 *   metrics.jsonl               one JSON object per training step
 *   trajectories/step-N.jsonl.gz  every trajectory of step N, one per line
 *   checkpoints/step-N/         the policy (HF layout) with optimizer state and trainer state
 *   curves.svg                  reward, solve rates, entropy, lengths, turns per step
 *   summary.json                written when the run ends
 *
 * Every file is written atomically (temporary sibling, then rename), so a run killed at any
 * point leaves only complete files. On resume, what was written after the last checkpoint is
 * dropped and redone, so each step appears exactly once.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

import { trajectoriesJsonlGz, type Trajectory } from '../agent/trajectory.js';
import { SwerlError } from '../errors.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic.js';

const gunzipAsync = promisify(gunzip);
const CHECKPOINT = /^step-(\d+)$/;

/** A trajectory as trajectories/step-N.jsonl.gz holds it: arrays as JSON, the step's shaping beside it. */
export type SavedTrajectory = Omit<Trajectory, 'tokens' | 'mask' | 'logprobs'> & {
  tokens: number[];
  mask: number[];
  logprobs: number[];
  /** The reward after the truncation policy and penalties. */
  shapedReward: number;
  advantage: number;
  /** Masked by compact filtering. */
  filtered: boolean;
  /** Reached the loss (group filters). */
  kept: boolean;
};

/** What the trainer keeps beside the weights so that a resumed run goes on where it stopped. */
export interface TrainerState {
  /** Training steps completed. */
  step: number;
  /** Seconds of training so far, across resumes. */
  elapsedSeconds: number;
  /** The curriculum's tier (tasks.curriculum), when the run has one. */
  curriculumTier?: number;
}

export class RunDirectory {
  readonly checkpoints: string;
  readonly trajectories: string;
  readonly metricsFile: string;

  constructor(readonly dir: string) {
    this.checkpoints = path.join(dir, 'checkpoints');
    this.trajectories = path.join(dir, 'trajectories');
    this.metricsFile = path.join(dir, 'metrics.jsonl');
  }

  async create(config: unknown, resume: boolean): Promise<void> {
    await fs.mkdir(this.checkpoints, { recursive: true });
    await fs.mkdir(this.trajectories, { recursive: true });
    const configFile = path.join(this.dir, 'config.json');
    if (!resume && existsSync(this.metricsFile)) {
      throw new SwerlError(
        'ERR_SWERL_INVALID_ARG',
        `config.run.dir ${this.dir} already holds a run (metrics.jsonl); set config.run.resume: true to continue it, or choose another dir`,
      );
    }
    await writeJsonAtomic(configFile, config);
  }

  checkpointDir(step: number): string {
    return path.join(this.checkpoints, `step-${step}`);
  }

  /** Steps of the complete checkpoints, ascending (temporary folders of a killed save are not). */
  async checkpointSteps(): Promise<number[]> {
    const names = existsSync(this.checkpoints) ? await fs.readdir(this.checkpoints) : [];
    const steps: number[] = [];
    for (const name of names) {
      const m = CHECKPOINT.exec(name);
      if (m && existsSync(path.join(this.checkpoints, name, 'swerl_state.json'))) steps.push(Number(m[1]));
    }
    return steps.sort((a, b) => a - b);
  }

  /** Removes what a killed save left (temporary folders) and checkpoints beyond the newest `keep`. */
  async pruneCheckpoints(keep: number): Promise<void> {
    const names = existsSync(this.checkpoints) ? await fs.readdir(this.checkpoints) : [];
    for (const name of names)
      if (!CHECKPOINT.test(name)) await fs.rm(path.join(this.checkpoints, name), { recursive: true, force: true });
    const steps = await this.checkpointSteps();
    for (const step of steps.slice(0, Math.max(0, steps.length - keep)))
      await fs.rm(this.checkpointDir(step), { recursive: true, force: true });
  }

  async readMetrics(): Promise<Record<string, unknown>[]> {
    if (!existsSync(this.metricsFile)) return [];
    const text = await fs.readFile(this.metricsFile, 'utf8');
    const rows: Record<string, unknown>[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        rows.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // A torn last line cannot happen with atomic rewrites; skip anything unreadable.
      }
    }
    return rows;
  }

  /** Keeps the metrics of steps <= step, and trajectories likewise (resume from that checkpoint). */
  async truncateTo(step: number): Promise<Record<string, unknown>[]> {
    const rows = (await this.readMetrics()).filter((r) => typeof r.step === 'number' && r.step <= step);
    await this.writeMetrics(rows);
    for (const name of existsSync(this.trajectories) ? await fs.readdir(this.trajectories) : []) {
      const m = /^step-(\d+)\.jsonl\.gz$/.exec(name);
      if (!m || Number(m[1]) > step) await fs.rm(path.join(this.trajectories, name), { force: true });
    }
    return rows;
  }

  /** The whole metrics file is rewritten atomically each step (it stays small: one line a step). */
  async writeMetrics(rows: readonly Record<string, unknown>[]): Promise<void> {
    await writeFileAtomic(this.metricsFile, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }

  async writeTrajectories(step: number, trajectories: readonly Trajectory[], extra: (t: Trajectory, i: number) => object): Promise<void> {
    await writeFileAtomic(path.join(this.trajectories, `step-${step}.jsonl.gz`), await trajectoriesJsonlGz(trajectories, extra));
  }

  async readTrajectories(step: number): Promise<SavedTrajectory[]> {
    const text = (await gunzipAsync(await fs.readFile(path.join(this.trajectories, `step-${step}.jsonl.gz`)))).toString('utf8');
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as SavedTrajectory);
  }

  async writeFile(name: string, contents: string): Promise<void> {
    await writeFileAtomic(path.join(this.dir, name), contents);
  }

  async writeSummary(summary: unknown): Promise<void> {
    await writeJsonAtomic(path.join(this.dir, 'summary.json'), summary);
  }
}
