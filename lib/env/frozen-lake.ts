/**
 * FrozenLake, the grid-world toy environment of the DeepSWE ablations, behind the `Env` API.
 *
 * The player starts at S (top-left on generated maps) and must reach G (bottom-right) without
 * stepping into a hole. Each turn the model answers with one of Up, Down, Left, Right; the
 * observation is the grid as text. Moves off the edge leave the player where it is. On slippery
 * ice a move goes in the chosen direction with probability 1/3 and to each perpendicular
 * direction with probability 1/3 (gym's rule; never backwards).
 *
 * Everything is deterministic given `seed`: the map is drawn from one mulberry32 stream, the
 * slips from another, and reset() restarts the slip stream, so the same seed and the same
 * answers replay the same episode. Invalid answers draw nothing from the slip stream.
 *
 * Terminations: reaching G, falling into a hole and running out of moves all end the episode
 * as 'submitted': the game ended by its own rules, like a submitted patch, so it is graded (1,
 * 0 and 0) and not masked by compact filtering. The move limit is part of the game the model
 * is told about, not a harness budget; masking it (as 'max_steps') would never punish aimless
 * wandering, and a policy that only walks into walls would never learn otherwise. rLLM grades
 * its FrozenLake's own step limit the same way. The agent loop's maxTurns, a harness budget,
 * still ends an episode as 'max_steps'.
 */
import { invalidArg } from '../errors.js';
import { optionsParser, type Input } from '../schema.js';
import { mulberry32 } from '../util/random.js';
import type { AssistantTurn, ChatMessage, Env, RewardResult, StepInfo, StepResult } from './env.js';

export type Direction = 'Up' | 'Down' | 'Left' | 'Right';

export const DIRECTIONS: readonly Direction[] = ['Up', 'Down', 'Left', 'Right'];

/**
 * A map: one string per row, gym's letters: S start, F frozen, H hole, G goal. Exactly one S
 * and one G.
 */
export type FrozenLakeMap = readonly string[];

export interface FrozenLakeStepInfo extends StepInfo {
  /** The move the answer asked for; null when none could be read (an invalid move). */
  action: Direction | null;
  /** The direction the ice actually took the player (differs from action on a slip); null when invalid. */
  direction: Direction | null;
  /** The player's cell after the step, counted from 0 at the top-left. */
  position: { row: number; col: number };
  /** The player changed cell (false for invalid moves and moves into the edge). */
  moved: boolean;
}

/** Generated maps are redrawn at most this many times looking for a solvable one. */
export const MAX_MAP_TRIES = 10_000;

const FIELD = 'frozenLake';

const FROZEN_LAKE_OPTIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** Side of the generated square grid, 2..32. Default 4. */
    size: { type: 'integer', minimum: 2, maximum: 32, default: 4 },
    /** Probability that a cell other than S and G is a hole, in [0, 0.9]. Default 0.2. */
    holeDensity: { type: 'number', minimum: 0, maximum: 0.9, default: 0.2 },
    /** Slippery ice: 1/3 the chosen direction, 1/3 each perpendicular one. Default false. */
    slippery: { type: 'boolean', default: false },
    /** Seeds the map generation and the slips, an integer in [0, 2^32 - 1]. Default 0. */
    seed: { type: 'integer', minimum: 0, maximum: 0xffffffff, default: 0 },
    /** Moves per episode, invalid answers included. Default 20. */
    maxSteps: { type: 'integer', minimum: 1, default: 20 },
    /**
     * 'full': the rules spelled out (rLLM-style, for pretrained models). 'short': one line of
     * rules and terse observations, for small models trained from scratch on bytes, where every
     * prompt byte is a token every turn. Default 'full'.
     */
    prompt: { enum: ['full', 'short'], default: 'full' },
    /**
     * A fixed map instead of a generated one (rows of S/F/H/G, rectangular, sides up to 32,
     * with a path from S to G). size and holeDensity cannot be given with it.
     */
    map: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: { type: 'string', minLength: 1, maxLength: 32 },
    },
  },
} as const;
export type FrozenLakeOptions = Input<typeof FROZEN_LAKE_OPTIONS_SCHEMA>;

const parseOptions = optionsParser(FROZEN_LAKE_OPTIONS_SCHEMA);

const MOVES: Record<Direction, readonly [number, number]> = {
  Up: [-1, 0],
  Down: [1, 0],
  Left: [0, -1],
  Right: [0, 1],
};

/** How each map letter is drawn in observations. */
const SHOWN: Record<string, string> = { S: '_', F: '_', H: 'O', G: 'G' };

const PERPENDICULAR: Record<Direction, readonly [Direction, Direction]> = {
  Up: ['Left', 'Right'],
  Down: ['Left', 'Right'],
  Left: ['Up', 'Down'],
  Right: ['Up', 'Down'],
};

/** The slip stream's seed, kept apart from the map stream's. */
function slipSeed(seed: number): number {
  return (seed ^ 0x9e3779b9) >>> 0;
}

interface Cell {
  row: number;
  col: number;
}

function findCell(map: FrozenLakeMap, letter: string): Cell | null {
  for (let row = 0; row < map.length; row++) {
    const col = map[row].indexOf(letter);
    if (col >= 0) return { row, col };
  }
  return null;
}

function count(map: FrozenLakeMap, letter: string): number {
  let n = 0;
  for (const line of map) for (const ch of line) if (ch === letter) n++;
  return n;
}

/** Throws unless map is a rectangular grid of S/F/H/G with exactly one S and one G. */
function checkMap(map: unknown, field: string): asserts map is FrozenLakeMap {
  if (!Array.isArray(map) || map.length === 0) throw invalidArg(field, 'must be a non-empty array of row strings');
  map.forEach((line: unknown, row) => {
    if (typeof line !== 'string' || !/^[SFHG]+$/.test(line)) {
      throw invalidArg(`${field}[${row}]`, `is ${JSON.stringify(line)}`, 'rows are strings of S (start), F (frozen), H (hole), G (goal)');
    }
    if (line.length !== map[0].length) {
      throw invalidArg(`${field}[${row}]`, `has ${line.length} cells but row 0 has ${map[0].length}`, 'the map must be rectangular');
    }
  });
  for (const letter of ['S', 'G']) {
    const n = count(map as string[], letter);
    if (n !== 1) throw invalidArg(field, `has ${n} ${letter} cells`, `it must have exactly one ${letter}`);
  }
}

function bfs(map: FrozenLakeMap): Direction[] | null {
  const rows = map.length;
  const cols = map[0].length;
  const start = findCell(map, 'S')!;
  const from = new Int32Array(rows * cols).fill(-1);
  const via: Direction[] = new Array(rows * cols);
  const startIndex = start.row * cols + start.col;
  from[startIndex] = startIndex;
  const queue = [startIndex];
  for (let head = 0; head < queue.length; head++) {
    const index = queue[head];
    const row = Math.floor(index / cols);
    const col = index % cols;
    if (map[row][col] === 'G') {
      const path: Direction[] = [];
      for (let at = index; at !== startIndex; at = from[at]) path.push(via[at]);
      return path.reverse();
    }
    for (const direction of DIRECTIONS) {
      const [dr, dc] = MOVES[direction];
      const r = row + dr;
      const c = col + dc;
      if (r < 0 || r >= rows || c < 0 || c >= cols || map[r][c] === 'H') continue;
      const next = r * cols + c;
      if (from[next] >= 0) continue;
      from[next] = index;
      via[next] = direction;
      queue.push(next);
    }
  }
  return null;
}

/**
 * The shortest list of moves from S to G on non-slippery ice (breadth-first; ties go to the
 * order Up, Down, Left, Right), or null when every path crosses a hole.
 */
export function solveFrozenLake(map: FrozenLakeMap): Direction[] | null {
  checkMap(map, 'solveFrozenLake map');
  return bfs(map);
}

/**
 * The size x size map of a seed: S top-left, G bottom-right, every other cell a hole with
 * probability holeDensity (one draw per cell, row by row), redrawn from the same stream until S
 * reaches G; throws naming holeDensity after MAX_MAP_TRIES unsolvable draws.
 */
export function generateFrozenLakeMap(size: number, holeDensity: number, seed: number): string[] {
  const rng = mulberry32(seed);
  for (let attempt = 0; attempt < MAX_MAP_TRIES; attempt++) {
    const map: string[] = [];
    for (let row = 0; row < size; row++) {
      let line = '';
      for (let col = 0; col < size; col++) {
        if (row === 0 && col === 0) line += 'S';
        else if (row === size - 1 && col === size - 1) line += 'G';
        else line += rng() < holeDensity ? 'H' : 'F';
      }
      map.push(line);
    }
    if (bfs(map) !== null) return map;
  }
  throw invalidArg(
    `${FIELD}.holeDensity`,
    `is ${holeDensity}, too dense for a ${size}x${size} map: no map with a path from start to goal was found in ${MAX_MAP_TRIES} tries (seed ${seed})`,
    'lower holeDensity or size',
  );
}

/**
 * The action of an answer: the last Up/Down/Left/Right (any case, whole word) inside a ```
 * block if a block holds one, else the last such word anywhere; null when there is none.
 */
export function parseFrozenLakeAction(text: string): Direction | null {
  const lastIn = (s: string): Direction | null => {
    let found: Direction | null = null;
    for (const m of s.matchAll(/\b(up|down|left|right)\b/gi)) {
      const word = m[1].toLowerCase();
      found = (word[0].toUpperCase() + word.slice(1)) as Direction;
    }
    return found;
  };
  let inBlocks: Direction | null = null;
  for (const m of text.matchAll(/```([\s\S]*?)```/g)) inBlocks = lastIn(m[1]) ?? inBlocks;
  return inBlocks ?? lastIn(text);
}

type Outcome = 'running' | 'goal' | 'hole' | 'max_steps';

/** The 'short' prompt's status line: what happened, in a few words. */
function shortStatus(intended: Direction | null, direction: Direction | null, moved: boolean, outcome: Outcome): string {
  if (intended === null) return 'Invalid move.';
  let line = direction === intended ? intended : `${intended}, slipped ${direction}`;
  if (!moved) line += ', edge';
  if (outcome === 'goal') line += ', goal!';
  else if (outcome === 'hole') line += ', hole.';
  return outcome === 'max_steps' ? `${line}. No moves left.` : line;
}

/** FrozenLake as an `Env`; see the module comment for the rules. */
export class FrozenLakeEnv implements Env {
  /** The map, rows of S/F/H/G. */
  readonly map: FrozenLakeMap;
  readonly rows: number;
  readonly cols: number;
  readonly slippery: boolean;
  readonly seed: number;
  readonly maxSteps: number;
  readonly prompt: 'full' | 'short';

  private readonly start: Cell;
  private row = 0;
  private col = 0;
  private steps = 0;
  private outcome: Outcome = 'running';
  private started = false;
  private closed = false;
  private rng: () => number;

  constructor(options: FrozenLakeOptions = {}) {
    const parsed = parseOptions(options, FIELD);
    if (parsed.map !== undefined) {
      for (const key of ['size', 'holeDensity'] as const) {
        if ((options as Record<string, unknown>)[key] !== undefined) {
          throw invalidArg(`${FIELD}.${key}`, 'cannot be given with map', 'the map fixes the grid; drop one of them');
        }
      }
      checkMap(parsed.map, `${FIELD}.map`);
      if (bfs(parsed.map) === null) throw invalidArg(`${FIELD}.map`, 'has no path from S to G that avoids the holes');
      this.map = Object.freeze([...parsed.map]);
    } else {
      this.map = Object.freeze(generateFrozenLakeMap(parsed.size, parsed.holeDensity, parsed.seed));
    }
    this.rows = this.map.length;
    this.cols = this.map[0].length;
    this.slippery = parsed.slippery;
    this.seed = parsed.seed;
    this.maxSteps = parsed.maxSteps;
    this.prompt = parsed.prompt;
    this.start = findCell(this.map, 'S')!;
    this.row = this.start.row;
    this.col = this.start.col;
    this.rng = mulberry32(slipSeed(this.seed));
  }

  /** The player's cell, counted from 0 at the top-left. */
  get position(): { row: number; col: number } {
    return { row: this.row, col: this.col };
  }

  /** The grid as the model sees it: P player, _ frozen (the start too), O hole, G goal. */
  render(): string {
    const lines: string[] = [];
    for (let r = 0; r < this.rows; r++) {
      let line = '';
      for (let c = 0; c < this.cols; c++) {
        if (r === this.row && c === this.col) line += 'P';
        else line += SHOWN[this.map[r][c]];
      }
      lines.push(line);
    }
    return lines.join('\n');
  }

  systemPrompt(): string {
    if (this.prompt === 'short') {
      const slip = this.slippery ? ' The ice is slippery.' : '';
      return `FrozenLake ${this.rows}x${this.cols}: P you, _ ice, O hole, G goal. Reach G in ${this.maxSteps} moves.${slip} Answer Up, Down, Left or Right.`;
    }
    const ice = this.slippery
      ? '- The ice is slippery: you move in the direction you choose with probability 1/3, and in each of the two perpendicular directions with probability 1/3 (never backwards).'
      : '- The ice is not slippery: you always move in the direction you choose.';
    return [
      `You are playing FrozenLake on a ${this.rows}x${this.cols} grid. Walk from your start to the goal G without falling into a hole.`,
      '',
      'Legend:',
      'P  you, the player (drawn over the cell you stand on)',
      '_  frozen ice, safe',
      'O  a hole: stepping into it ends the game with reward 0',
      'G  the goal: reaching it ends the game with reward 1',
      'Rows are listed top to bottom; positions are (row, column), counted from 0 at the top-left.',
      '',
      'Rules:',
      '- Each turn you move one cell: Up, Down, Left or Right. Moving off the edge leaves you where you are.',
      ice,
      `- You have at most ${this.maxSteps} moves. An answer without a valid move counts as a move and leaves you where you are.`,
      '',
      'How to answer: think if you like, then end your answer with exactly one move in a code block, for example',
      '```',
      'Right',
      '```',
      'The last of the words Up, Down, Left, Right inside a code block is your move; without a code block, the last of those words in your answer is.',
    ].join('\n');
  }

  async reset(): Promise<ChatMessage[]> {
    if (this.closed) throw invalidArg('FrozenLakeEnv.reset()', 'was called after close()', 'create a new FrozenLakeEnv');
    this.row = this.start.row;
    this.col = this.start.col;
    this.steps = 0;
    this.outcome = 'running';
    this.started = true;
    this.rng = mulberry32(slipSeed(this.seed));
    return [
      { role: 'system', content: this.systemPrompt() },
      { role: 'user', content: this.observe('', this.maxSteps) },
    ];
  }

  async step(action: string | AssistantTurn): Promise<StepResult> {
    const began = performance.now();
    if (this.closed) throw invalidArg('FrozenLakeEnv.step()', 'was called after close()', 'create a new FrozenLakeEnv');
    if (!this.started) throw invalidArg('FrozenLakeEnv.step()', 'was called before reset()', 'call reset() first');
    if (this.outcome !== 'running') {
      throw invalidArg('FrozenLakeEnv.step()', `was called after the episode is over (${this.describeOutcome()})`, 'call reset() to start a new episode');
    }
    const text = typeof action === 'string' ? action : action?.content;
    if (typeof text !== 'string') {
      throw invalidArg('FrozenLakeEnv.step() action', 'must be a string or an AssistantTurn with string content');
    }

    this.steps++;
    const intended = parseFrozenLakeAction(text);
    let direction: Direction | null = null;
    let moved = false;
    let status: string;
    if (intended === null) {
      status = 'Invalid action: no move found in your answer, so you did not move. Answer with one of Up, Down, Left, Right in a code block, e.g. ```Down```.';
    } else {
      direction = intended;
      if (this.slippery) {
        const k = Math.floor(this.rng() * 3);
        if (k > 0) direction = PERPENDICULAR[intended][k - 1];
      }
      const [dr, dc] = MOVES[direction];
      const r = this.row + dr;
      const c = this.col + dc;
      moved = r >= 0 && r < this.rows && c >= 0 && c < this.cols;
      if (moved) {
        this.row = r;
        this.col = c;
      }
      const tried = direction === intended ? `You tried to move ${intended}` : `You tried to move ${intended} but slipped ${direction}`;
      if (!moved) status = `${tried}, and the edge of the lake stopped you.`;
      else status = direction === intended ? `You moved ${intended}.` : `${tried}.`;
      const cell = this.map[this.row][this.col];
      if (cell === 'G') {
        this.outcome = 'goal';
        status += ' You reached the goal!';
      } else if (cell === 'H') {
        this.outcome = 'hole';
        status += ` You fell into a hole at (${this.row}, ${this.col}).`;
      }
    }
    if (this.outcome === 'running' && this.steps >= this.maxSteps) this.outcome = 'max_steps';
    const done = this.outcome !== 'running';
    if (this.outcome === 'max_steps') status += ' You have no moves left.';
    if (done) status += ' The episode is over.';

    const info: FrozenLakeStepInfo = {
      steps: this.steps,
      durationMs: 0,
      ...(intended === null ? { formatError: 'no move' } : {}),
      action: intended,
      direction,
      position: this.position,
      moved,
    };
    if (done) info.termination = 'submitted';
    const observation = this.observe(this.prompt === 'short' ? shortStatus(intended, direction, moved, this.outcome) : status, this.maxSteps - this.steps);
    info.durationMs = performance.now() - began;
    return { observation, done, info };
  }

  async reward(): Promise<RewardResult> {
    const reward = this.outcome === 'goal' ? 1 : 0;
    return { reward, tests: {}, reason: this.started ? this.describeOutcome() : 'the episode has not started (reset() was not called)' };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The grid after a status line (none at reset), with the countdown. */
  private observe(status: string, remaining: number): string {
    // The position as digits too: a small model reads a digit's value from its embedding,
    // where finding P in the grid takes a two-layer circuit it must first learn.
    if (this.prompt === 'short') return `${status ? `${status}\n` : ''}${this.render()}\nAt (${this.row}, ${this.col}). Steps Remaining: ${remaining}`;
    return `${status ? `${status}\n` : ''}Current observation:\n${this.render()}\nSteps Remaining: ${remaining}`;
  }

  private describeOutcome(): string {
    switch (this.outcome) {
      case 'goal':
        return 'reached the goal';
      case 'hole':
        return `fell into a hole at (${this.row}, ${this.col})`;
      case 'max_steps':
        return `did not reach the goal in ${this.steps} steps`;
      case 'running':
        return `has not reached the goal after ${this.steps} steps (the episode is still running)`;
    }
  }
}
