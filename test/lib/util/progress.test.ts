/** Times, rates and the two faces of progress: live lines on a terminal, plain lines in a log. */
import { PassThrough } from 'node:stream';

import t from 'tap';

import { eta, formatDuration, formatRate, progressDisplay } from '../../../lib/util/progress.js';

t.test('durations, rates and the ETA', async (t) => {
  t.equal(formatDuration(0), '0s');
  t.equal(formatDuration(42.4), '42s');
  t.equal(formatDuration(185), '3m05s');
  t.equal(formatDuration(3720), '1h02m');
  t.equal(formatDuration(2 * 86400 + 3 * 3600 + 59), '2d03h');
  t.equal(formatDuration(NaN), '-');
  t.equal(formatDuration(-1), '-');
  t.equal(formatRate(1, 4), '0.25/s');
  t.equal(formatRate(123, 10), '12.3/s');
  t.equal(formatRate(4500, 1), '4.5k/s');
  t.equal(formatRate(45_000, 1), '45k/s');
  t.equal(formatRate(5, 0), '-');
  t.equal(formatRate(123, 10, 'ep'), '12.3 ep/s', 'with a unit');
  t.equal(formatRate(4500, 1, 'tok'), '4.5k tok/s');
  t.equal(eta(2, 10, 60), 240, '2 of 10 in a minute: 4 more minutes');
  t.ok(Number.isNaN(eta(0, 10, 60)), 'no ETA before anything is done');
});

/** A stream that collects what is written, a terminal or not. */
function sink(tty: boolean) {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number; cursorTo?: unknown; clearLine?: unknown; moveCursor?: unknown };
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  if (tty) {
    stream.isTTY = true;
    stream.columns = 120;
  }
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

t.test('not live: plain lines only, no carriage return or escape code', async (t) => {
  const out = sink(false);
  const display = progressDisplay(false, out.stream);
  const line = display.line();
  line.update('12/40 episodes');
  display.log('step 1/3 done');
  display.log('step 2/3 done\n');
  display.stop();
  t.equal(out.text(), 'step 1/3 done\nstep 2/3 done\n');
});

t.test('live: the line is drawn and redrawn, log lines above it', async (t) => {
  const out = sink(true);
  const display = progressDisplay(true, out.stream);
  const line = display.line();
  line.update('3/40 episodes');
  await new Promise((resolve) => setTimeout(resolve, 300));
  display.log('step 1/3 done');
  line.update('40/40 episodes');
  await new Promise((resolve) => setTimeout(resolve, 300));
  display.stop();
  const text = out.text();
  t.match(text, /3\/40 episodes/, 'drawn');
  t.match(text, /step 1\/3 done\n/, 'a log line');
  t.match(text, /40\/40 episodes/, 'redrawn with the new text');
  t.match(text, /\x1b\[/, 'with terminal control codes');
});
