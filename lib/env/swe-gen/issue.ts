/**
 * The issue a user would file: a title, for each bug the failing call with what it gave and
 * what it should give, what the function is for, and where it is. Never a line of the code
 * (the buggy one or the fix): the user only ran it. A few sentences, a few hundred characters.
 */
import type { Failure } from './cases.js';
import type { Draw } from './draw.js';

export interface ReportedBug {
  /** The function's name in the task's language. */
  fn: string;
  /** What it should do ("add up the numbers in `xs` ..."), from the template. */
  doc: string;
  /** Failing calls, shortest first; the first is the example. */
  failures: readonly Failure[];
}

function symptom(f: Failure, draw: Draw): string {
  const expected = `\`${f.expectedText}\``;
  if (!f.got.ok) {
    return draw.pick([`\`${f.call}\` ${f.gotText} instead of returning ${expected}.`, `Calling \`${f.call}\` ${f.gotText}; it should return ${expected}.`]);
  }
  const got = `\`${f.gotText}\``;
  return draw.pick([
    `\`${f.call}\` returns ${got}, but it should return ${expected}.`,
    `Calling \`${f.call}\` gives ${got} instead of ${expected}.`,
    `I expected \`${f.call}\` to return ${expected}, but it returns ${got}.`,
  ]);
}

function another(f: Failure): string {
  return f.got.ok ? `Same with \`${f.call}\`: got \`${f.gotText}\`, expected \`${f.expectedText}\`.` : `Same with \`${f.call}\`, which ${f.gotText}.`;
}

function title(bugs: readonly ReportedBug[], draw: Draw): string {
  if (bugs.length > 1) {
    const names = bugs.map((b) => `\`${b.fn}\``).join(' and ');
    return draw.pick([`${names} give wrong results`, `Bugs in ${names}`]);
  }
  const { fn, failures } = bugs[0]!;
  const example = failures[0]!;
  if (!example.got.ok) return draw.pick([`\`${fn}\` ${example.gotText}`, `\`${fn}\` crashes`]);
  return draw.pick([`\`${fn}\` returns the wrong result`, `Wrong result from \`${fn}\``, `\`${fn}\` gives a wrong answer`]);
}

/** The issue's markdown. */
export function issueText(bugs: readonly ReportedBug[], file: string, draw: Draw): string {
  const paragraphs = bugs.map((bug) => {
    const [example, second] = bug.failures;
    const sentences = [symptom(example!, draw), draw.pick([`\`${bug.fn}\` should ${bug.doc}.`, `It is supposed to ${bug.doc}.`])];
    if (second) sentences.push(another(second));
    return sentences.join(' ');
  });
  const where = bugs.length > 1 ? `Both functions are in \`${file}\`.` : draw.pick([`The function is in \`${file}\`.`, `It lives in \`${file}\`.`]);
  return `# ${title(bugs, draw)}\n\n${paragraphs.join('\n\n')}\n\n${where}\n`;
}
