/**
 * The viewer's JSON API, GET only:
 *
 *   /api/runs                                  every run: name, dir, config, summary, last step
 *   /api/runs/:run/metrics                     metrics.jsonl's rows (a live run's grow)
 *   /api/runs/:run/steps                       steps that have a trajectories file
 *   /api/runs/:run/steps/:step                 that step's trajectories, summarized
 *   /api/runs/:run/steps/:step/trajectories/:i one trajectory whole, its tokens as text pieces
 *   /api/runs/:run/evals                       eval reports in the run directory
 *   /api/runs/:run/eval?path=REL               one report with its predictions
 */
import { badRequest, notFound } from './http-error.js';
import type { ViewRun } from './view-run.js';

/** A step or index as the URL writes it: plain decimal digits, no sign, exponent or padding. */
const NUMBER = /^(0|[1-9]\d{0,8})$/;

function parseIndex(text: string, what: string): number {
  if (!NUMBER.test(text)) throw badRequest(`${what} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
}

export async function answerApi(runs: readonly ViewRun[], segments: readonly string[], query: URLSearchParams): Promise<unknown> {
  if (segments.length === 1 && segments[0] === 'runs') return { runs: await Promise.all(runs.map((run) => run.info())) };
  if (segments[0] !== 'runs' || segments.length < 2) throw notFound(`/api/${segments.join('/')}`);
  const id = parseIndex(segments[1]!, 'run');
  const run = runs[id];
  if (!run) throw notFound(`run ${id} (there are ${runs.length})`);
  const rest = segments.slice(2);
  // Names and numbers alternate: steps/:n/trajectories/:n.
  const route = rest.map((segment, i) => (i % 2 === 1 ? ':n' : segment)).join('/');
  switch (route) {
    case '':
      return run.info();
    case 'metrics':
      return run.metrics();
    case 'steps':
      return { steps: await run.trajectorySteps() };
    case 'steps/:n': {
      const step = parseIndex(rest[1]!, 'step');
      return { step, trajectories: await run.trajectorySummaries(step) };
    }
    case 'steps/:n/trajectories/:n':
      return run.trajectoryDetail(parseIndex(rest[1]!, 'step'), parseIndex(rest[3]!, 'trajectory'));
    case 'evals':
      return { reports: await run.evalReports() };
    case 'eval': {
      const relative = query.get('path');
      if (relative === null) throw badRequest('eval needs ?path=, a report path from /evals');
      return run.evalReport(relative);
    }
    default:
      throw notFound(`/api/${segments.join('/')}`);
  }
}
