/** Examples held to maxLength (dropped or cut, always counted) and split into training and held-out sets by the seed. */
import t from 'tap';

import { fitLength, splitHeldOut, trajectoryExample, type SftExample } from '../../../../lib/train/sft/example.js';

function example(length: number, trainedFrom: number, id: string): SftExample {
  return { tokens: Int32Array.from({ length }, (_, i) => i), mask: Uint8Array.from({ length }, (_, i) => (i >= trainedFrom ? 1 : 0)), logprobs: new Float32Array(length).fill(-1), source: 's', id };
}

t.test('over maxLength: dropped, or truncated to the first maxLength tokens (dropped if nothing trained is left)', async (t) => {
  const examples = [example(10, 2, 'short'), example(30, 5, 'long'), example(30, 25, 'late')];
  const dropped = fitLength(examples, 20, 'drop');
  t.same(dropped.examples.map((e) => e.id), ['short']);
  t.match(dropped, { dropped: 2, truncated: 0, longest: 30 });
  const cut = fitLength(examples, 20, 'truncate');
  t.same(cut.examples.map((e) => [e.id, e.tokens.length, e.mask.length, e.logprobs!.length]), [['short', 10, 10, 10], ['long', 20, 20, 20]]);
  t.match(cut, { dropped: 1, truncated: 1 }, 'the one whose trained tokens all lay past the cut is dropped');
  t.same(Array.from(cut.examples[1]!.tokens), Array.from(examples[1]!.tokens.subarray(0, 20)), 'the first tokens, as they were');
});

t.test('the held-out split is drawn by the seed, at least one on each side', async (t) => {
  const examples = Array.from({ length: 20 }, (_, i) => example(4, 1, `e${i}`));
  const a = splitHeldOut(examples, 0.25, 3);
  t.equal(a.heldOut.length, 5);
  t.equal(a.train.length, 15);
  t.same([...a.train, ...a.heldOut].map((e) => e.id).sort(), examples.map((e) => e.id).sort(), 'a partition');
  t.same(a.train.map((e) => e.id), examples.filter((e) => !a.heldOut.includes(e)).map((e) => e.id), 'training examples keep their order');
  t.same(splitHeldOut(examples, 0.25, 3).heldOut.map((e) => e.id), a.heldOut.map((e) => e.id), 'the same seed, the same split');
  t.notSame(splitHeldOut(examples, 0.25, 4).heldOut.map((e) => e.id), a.heldOut.map((e) => e.id), 'another seed, another split');
  t.equal(splitHeldOut(examples, 0.001, 3).heldOut.length, 1, 'a small fraction still holds one out');
  t.equal(splitHeldOut(examples.slice(0, 2), 0.5, 3).train.length, 1, 'and leaves one to train on');
  t.equal(splitHeldOut(examples, 0, 3).heldOut.length, 0);
});

t.test('an example from a trajectory in memory (what rejection fine-tuning keeps)', async (t) => {
  const e = trajectoryExample({ tokens: Int32Array.from([5, 6, 7]), mask: Uint8Array.from([0, 1, 1]), logprobs: Float32Array.from([0, -0.5, -0.25]) }, 'rollouts', 'step-3/task-a/0');
  t.same([Array.from(e.tokens), Array.from(e.mask), Array.from(e.logprobs!)], [[5, 6, 7], [0, 1, 1], [0, -0.5, -0.25]]);
  t.throws(() => trajectoryExample({ tokens: [1, 2], mask: [1, 1] }, 's', 'x'), { message: /^x mask\[0\] is 1/ });
  t.throws(() => trajectoryExample({ tokens: [1, 2], mask: [0] }, 's', 'x'), { message: /^x mask has 1 entries for 2 tokens/ });
});
