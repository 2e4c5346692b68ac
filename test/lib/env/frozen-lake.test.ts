import t from 'tap';

import {
  DIRECTIONS,
  FrozenLakeEnv,
  generateFrozenLakeMap,
  parseFrozenLakeAction,
  solveFrozenLake,
  type Direction,
  type FrozenLakeStepInfo,
} from '../../../lib/env/frozen-lake.js';

// gym's classic 4x4 map.
const CLASSIC = ['SFFF', 'FHFH', 'FFFH', 'HFFG'];

const info = (i: unknown) => i as FrozenLakeStepInfo;

t.test('observations of a fixed map, exactly', async (t) => {
  const env = new FrozenLakeEnv({ map: CLASSIC, maxSteps: 5 });
  const messages = await env.reset();
  t.equal(messages.length, 2);
  t.equal(messages[0].role, 'system');
  t.equal(messages[1].role, 'user');
  t.equal(messages[1].content, 'Current observation:\nP___\n_O_O\n___O\nO__G\nSteps Remaining: 5');
  const system = messages[0].content;
  for (const line of ['P  you, the player', '_  frozen ice', 'O  a hole', 'G  the goal', '```\nRight\n```', 'at most 5 moves', 'not slippery']) {
    t.match(system, line, `system prompt states ${JSON.stringify(line)}`);
  }

  let r = await env.step('```Down```');
  t.equal(r.observation, 'You moved Down.\nCurrent observation:\n____\nPO_O\n___O\nO__G\nSteps Remaining: 4');
  t.equal(r.done, false);
  t.same(info(r.info).position, { row: 1, col: 0 });
  t.equal(r.info.steps, 1);
  t.equal(r.info.termination, undefined);
  t.type(r.info.durationMs, 'number');

  r = await env.step('Left');
  t.equal(r.observation, 'You tried to move Left, and the edge of the lake stopped you.\nCurrent observation:\n____\nPO_O\n___O\nO__G\nSteps Remaining: 3');
  t.equal(info(r.info).moved, false);

  r = await env.step({ content: 'Going right.\n```\nright\n```' });
  t.equal(r.observation, 'You moved Right. You fell into a hole at (1, 1). The episode is over.\nCurrent observation:\n____\n_P_O\n___O\nO__G\nSteps Remaining: 2');
  t.equal(r.done, true);
  t.equal(r.info.termination, 'submitted');
  t.same(await env.reward(), { reward: 0, tests: {}, reason: 'fell into a hole at (1, 1)' });
});

t.test("the 'short' prompt: one line of rules, terse observations, same game", async (t) => {
  const env = new FrozenLakeEnv({ map: CLASSIC, maxSteps: 4, prompt: 'short' });
  const messages = await env.reset();
  t.equal(messages[0].content, 'FrozenLake 4x4: P you, _ ice, O hole, G goal. Reach G in 4 moves. Answer Up, Down, Left or Right.');
  t.equal(messages[1].content, 'P___\n_O_O\n___O\nO__G\nAt (0, 0). Steps Remaining: 4');
  let r = await env.step('Down');
  t.equal(r.observation, 'Down\n____\nPO_O\n___O\nO__G\nAt (1, 0). Steps Remaining: 3');
  r = await env.step('Left');
  t.equal(r.observation, 'Left, edge\n____\nPO_O\n___O\nO__G\nAt (1, 0). Steps Remaining: 2');
  r = await env.step('nothing');
  t.equal(r.observation, 'Invalid move.\n____\nPO_O\n___O\nO__G\nAt (1, 0). Steps Remaining: 1');
  r = await env.step('Right');
  t.equal(r.observation, 'Right, hole.\n____\n_P_O\n___O\nO__G\nAt (1, 1). Steps Remaining: 0');
  t.equal(r.done, true);
  t.equal((await env.reward()).reward, 0);

  const slippery = new FrozenLakeEnv({ map: ['SF', 'FG'], maxSteps: 1, prompt: 'short', slippery: true, seed: 3 });
  t.match((await slippery.reset())[0].content, 'The ice is slippery.');
  r = await slippery.step('Right');
  const moved = info(r.info);
  const expected = moved.direction === 'Right' ? 'Right' : `Right, slipped ${moved.direction}`;
  t.equal(r.observation.split('\n')[0], `${expected}${moved.moved ? '' : ', edge'}. No moves left.`);

  const goal = new FrozenLakeEnv({ map: ['SG'], maxSteps: 3, prompt: 'short' });
  await goal.reset();
  t.equal((await goal.step('Right')).observation, 'Right, goal!\n_P\nAt (0, 1). Steps Remaining: 2');
  t.throws(() => new FrozenLakeEnv({ prompt: 'long' as 'full' }), /prompt/);
});

t.test('seeded map generation', async (t) => {
  // A pin: changing the generator changes every seeded task.
  t.same(new FrozenLakeEnv({ seed: 0 }).map, ['SFHF', 'HFFF', 'FFFF', 'HFFG'], 'seed 0, defaults');
  t.same(new FrozenLakeEnv({ seed: 42, size: 7, holeDensity: 0.3 }).map, new FrozenLakeEnv({ seed: 42, size: 7, holeDensity: 0.3 }).map, 'same seed, same map');
  t.notSame(new FrozenLakeEnv({ seed: 1, size: 6 }).map, new FrozenLakeEnv({ seed: 2, size: 6 }).map, 'seeds 1 and 2 differ');
  const distinct = new Set<string>();
  for (let seed = 0; seed < 50; seed++) distinct.add(new FrozenLakeEnv({ seed, size: 6 }).map.join('/'));
  t.ok(distinct.size >= 45, `50 seeds give ${distinct.size} distinct 6x6 maps`);
  t.same(new FrozenLakeEnv({ seed: 5, size: 5, holeDensity: 0 }).map, ['SFFFF', 'FFFFF', 'FFFFF', 'FFFFF', 'FFFFG'], 'density 0: no holes');
});

t.test('every generated map is solvable, with S top-left and G bottom-right', async (t) => {
  let checked = 0;
  let holes = 0;
  let cells = 0;
  for (const size of [2, 3, 4, 5, 8, 13, 32]) {
    for (const holeDensity of [0, 0.2, 0.4]) {
      for (let seed = 0; seed < 25; seed++) {
        const map = generateFrozenLakeMap(size, holeDensity, seed);
        const ok =
          map.length === size &&
          map.every((row) => row.length === size && /^[SFHG]+$/.test(row)) &&
          map[0][0] === 'S' &&
          map[size - 1][size - 1] === 'G' &&
          map.join('').split('S').length === 2 &&
          map.join('').split('G').length === 2 &&
          solveFrozenLake(map) !== null;
        if (!ok) t.fail(`size ${size}, holeDensity ${holeDensity}, seed ${seed}: ${JSON.stringify(map)}`);
        if (size === 32 && holeDensity === 0.2) {
          holes += map.join('').split('H').length - 1;
          cells += size * size - 2;
        }
        checked++;
      }
    }
  }
  t.pass(`${checked} maps checked`);
  t.ok(holes / cells > 0.15 && holes / cells < 0.25, `hole fraction at density 0.2 is ${(holes / cells).toFixed(3)}`);
});

t.test('the BFS solution played through step() reaches the goal', async (t) => {
  for (const size of [2, 4, 6, 9]) {
    for (let seed = 0; seed < 10; seed++) {
      const env = new FrozenLakeEnv({ size, seed, holeDensity: 0.3, maxSteps: size * size });
      const path = solveFrozenLake(env.map)!;
      t.ok(path.length >= 2 * (size - 1), 'at least the Manhattan distance');
      await env.reset();
      let last;
      for (const [i, move] of path.entries()) {
        last = await env.step(`I will go ${move.toLowerCase()}.\n\`\`\`\n${move}\n\`\`\``);
        if (last.done !== (i === path.length - 1)) t.fail(`size ${size}, seed ${seed}: done ${last.done} at move ${i}`);
      }
      t.equal(last!.info.termination, 'submitted');
      t.same(info(last!.info).position, { row: size - 1, col: size - 1 });
      t.same(await env.reward(), { reward: 1, tests: {}, reason: 'reached the goal' }, `size ${size}, seed ${seed}`);
    }
  }
});

t.test('solveFrozenLake', async (t) => {
  t.same(solveFrozenLake(CLASSIC), ['Down', 'Down', 'Right', 'Down', 'Right', 'Right']);
  t.same(solveFrozenLake(['SG']), ['Right']);
  t.same(solveFrozenLake(['G', 'F', 'S']), ['Up', 'Up']);
  t.equal(solveFrozenLake(['SH', 'HG']), null, 'walled off');
  t.equal(solveFrozenLake(['SFH', 'FHF', 'HFG']), null);
  t.throws(() => solveFrozenLake(['SF', 'FF']), { code: 'ERR_SWERL_INVALID_ARG', message: /has 0 G cells/ });
  t.throws(() => solveFrozenLake(null as unknown as string[]), { code: 'ERR_SWERL_INVALID_ARG', message: /must be a non-empty array/ });
  t.throws(() => solveFrozenLake(['SX', 'FG']), { code: 'ERR_SWERL_INVALID_ARG', message: /map\[0\] is "SX"/ });
});

t.test('goal on the last allowed move is a success, not max_steps', async (t) => {
  const env = new FrozenLakeEnv({ map: ['SFG'], maxSteps: 2 });
  await env.reset();
  await env.step('Right');
  const r = await env.step('Right');
  t.equal(r.done, true);
  t.equal(r.info.termination, 'submitted');
  t.match(r.observation, /reached the goal!.*\n.*\n__P\nSteps Remaining: 0$/);
  t.equal((await env.reward()).reward, 1);
});

t.test('running out of moves ends the episode, graded (not a harness truncation)', async (t) => {
  const env = new FrozenLakeEnv({ map: CLASSIC, maxSteps: 3 });
  await env.reset();
  t.equal((await env.step('Right')).done, false);
  t.equal((await env.step('Left')).done, false);
  const r = await env.step('Up');
  t.equal(r.done, true);
  t.equal(r.info.termination, 'submitted', 'graded 0 like a hole, so compact filtering does not mask it');
  t.equal(r.info.steps, 3);
  t.match(r.observation, /The episode is over\./);
  t.match(r.observation, /\nSteps Remaining: 0$/);
  t.same(await env.reward(), { reward: 0, tests: {}, reason: 'did not reach the goal in 3 steps' });
});

t.test('invalid actions', async (t) => {
  const env = new FrozenLakeEnv({ map: CLASSIC, maxSteps: 2 });
  await env.reset();
  let r = await env.step('I am not sure what to do.');
  t.match(r.observation, /^Invalid action: .*Up, Down, Left, Right.*```Down```/);
  t.match(r.observation, /\nP___\n/, 'the player stays');
  t.match(r.observation, /\nSteps Remaining: 1$/, 'it counts as a step');
  t.equal(r.info.steps, 1);
  t.equal(info(r.info).action, null);
  t.equal(info(r.info).direction, null);
  t.same(info(r.info).position, { row: 0, col: 0 });
  r = await env.step({ content: '', tool_calls: [] });
  t.equal(r.done, true, 'an invalid last move still ends the episode');
  t.equal(r.info.termination, 'submitted');
  const fresh = new FrozenLakeEnv({ map: CLASSIC });
  await fresh.reset();
  await t.rejects(fresh.step(42 as unknown as string), { code: 'ERR_SWERL_INVALID_ARG', message: /action must be a string or an AssistantTurn/ });
});

t.test('action parsing', async (t) => {
  const cases: [string, Direction | null][] = [
    ['```Down```', 'Down'],
    ['```\nup\n```', 'Up'],
    ['LEFT', 'Left'],
    ['I could go Up or Down; I choose left, then RIGHT', 'Right'],
    ['```\nUp\nDown\n```', 'Down'],
    ['```Up``` no wait ```Left```', 'Left'],
    ['```Up``` then ```python\nprint()\n```', 'Up'],
    ['Down is tempting, but ```Up``` is safe. Not down.', 'Up'],
    ['```text\nno move here\n``` so Right', 'Right'],
    ['upward and downhill, righteous', null],
    ['', null],
    ['<think>Left?</think> ```Right```', 'Right'],
  ];
  for (const [text, want] of cases) t.equal(parseFrozenLakeAction(text), want, JSON.stringify(text));
});

t.test('step() after done, after close(), before reset()', async (t) => {
  const env = new FrozenLakeEnv({ map: ['SG'] });
  await t.rejects(env.step('Right'), { code: 'ERR_SWERL_INVALID_ARG', message: /before reset\(\)/ });
  t.equal((await env.reward()).reward, 0);
  await env.reset();
  t.equal((await env.step('Right')).done, true);
  await t.rejects(env.step('Right'), { code: 'ERR_SWERL_INVALID_ARG', message: /episode is over.*call reset\(\)/ });
  t.equal((await env.reward()).reward, 1, 'reward() still grades');
  await env.reset();
  t.same(env.position, { row: 0, col: 0 }, 'reset() starts over');
  t.equal((await env.reward()).reward, 0);
  t.match((await env.reward()).reason, /still running/);
  await env.close();
  await env.close();
  await t.rejects(env.step('Right'), { code: 'ERR_SWERL_INVALID_ARG', message: /after close\(\)/ });
  await t.rejects(env.reset(), { code: 'ERR_SWERL_INVALID_ARG', message: /after close\(\)/ });
});

t.test('option errors name the field', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ size: 1 }, /^frozenLake\.size must be >= 2/],
    [{ size: 33 }, /^frozenLake\.size must be <= 32/],
    [{ size: 4.5 }, /^frozenLake\.size must be of type integer/],
    [{ holeDensity: -0.1 }, /^frozenLake\.holeDensity must be >= 0/],
    [{ holeDensity: 0.95 }, /^frozenLake\.holeDensity must be <= 0\.9/],
    [{ slippery: 'yes' }, /^frozenLake\.slippery must be of type boolean/],
    [{ seed: -1 }, /^frozenLake\.seed must be >= 0/],
    [{ seed: 1.5 }, /^frozenLake\.seed must be of type integer/],
    [{ maxSteps: 0 }, /^frozenLake\.maxSteps must be >= 1/],
    [{ sizes: 4 }, /^frozenLake\.sizes is not a known option/],
    [{ size: 32, holeDensity: 0.9 }, /^frozenLake\.holeDensity is 0\.9, too dense for a 32x32 map/],
    [{ map: [] }, /^frozenLake\.map must NOT have fewer than 1 items/],
    [{ map: ['SFX', 'FFG'] }, /^frozenLake\.map\[0\] is "SFX"/],
    [{ map: ['SF', 'G'] }, /^frozenLake\.map\[1\] has 1 cells but row 0 has 2/],
    [{ map: ['SS', 'FG'] }, /^frozenLake\.map has 2 S cells/],
    [{ map: ['SH', 'HG'] }, /^frozenLake\.map has no path from S to G/],
    [{ map: ['SG'], size: 2 }, /^frozenLake\.size cannot be given with map/],
    [{ map: ['SG'], holeDensity: 0.1 }, /^frozenLake\.holeDensity cannot be given with map/],
  ];
  for (const [options, message] of cases) {
    t.throws(() => new FrozenLakeEnv(options as object), { name: 'SwerlError', code: 'ERR_SWERL_INVALID_ARG', message }, JSON.stringify(options));
  }
  const env = new FrozenLakeEnv();
  t.equal(env.rows, 4);
  t.equal(env.slippery, false);
  t.equal(env.seed, 0);
  t.equal(env.maxSteps, 20);
});

async function slipDirections(seed: number, moves: number, move: Direction): Promise<Direction[]> {
  // Pressing Up on the top row of this map never reaches G: the player wanders along row 0.
  const env = new FrozenLakeEnv({ map: ['SFFFFFFF', 'FFFFFFFG'], slippery: true, seed, maxSteps: moves });
  await env.reset();
  const out: Direction[] = [];
  for (let i = 0; i < moves; i++) out.push(info((await env.step(move)).info).direction!);
  return out;
}

t.test('slippery moves are deterministic given the seed', async (t) => {
  const a = await slipDirections(7, 100, 'Up');
  t.same(await slipDirections(7, 100, 'Up'), a, 'same seed, same slips');
  t.notSame(await slipDirections(8, 100, 'Up'), a, 'another seed, other slips');

  const env = new FrozenLakeEnv({ seed: 11, size: 8, holeDensity: 0.1, slippery: true, maxSteps: 30 });
  const play = async () => {
    await env.reset();
    const trace: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await env.step(i % 2 ? 'Down' : 'Right');
      trace.push(r.observation);
      if (r.done) break;
    }
    return trace;
  };
  const first = await play();
  t.same(await play(), first, 'reset() replays the same episode');
  t.ok(first.some((o) => o.includes('slipped')), 'it does slip');
});

t.test('slippery move statistics: 1/3 intended, 1/3 each perpendicular, never backwards', async (t) => {
  const opposite: Record<Direction, Direction> = { Up: 'Down', Down: 'Up', Left: 'Right', Right: 'Left' };
  const check = (label: string, move: Direction, dirs: Direction[]) => {
    const n = dirs.length;
    const counts = Object.fromEntries(DIRECTIONS.map((d) => [d, dirs.filter((x) => x === d).length])) as Record<Direction, number>;
    t.equal(counts[opposite[move]], 0, `${label}: never ${opposite[move]}`);
    for (const d of DIRECTIONS.filter((d) => d !== opposite[move])) {
      const p = counts[d] / n;
      // 1/3 +- 0.05 is over 5 standard deviations at n = 3000; a 1/2-1/4-1/4 or 1/4 rule fails it.
      t.ok(Math.abs(p - 1 / 3) < 0.05, `${label}: ${d} ${p.toFixed(3)}`);
    }
  };
  // Within one episode: 3000 presses of Up.
  check('one episode, Up', 'Up', await slipDirections(0, 3000, 'Up'));
  // Across seeds: the first move of 3000 episodes, each direction, from the middle of an open map.
  for (const move of DIRECTIONS) {
    const dirs: Direction[] = [];
    for (let seed = 0; seed < 3000; seed++) {
      const env = new FrozenLakeEnv({ map: ['FFF', 'FSF', 'FFG'], slippery: true, seed });
      await env.reset();
      dirs.push(info((await env.step(move)).info).direction!);
    }
    check(`first moves over seeds, ${move}`, move, dirs);
  }
});
