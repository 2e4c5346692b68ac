/**
 * The agent's four tools (docs/swe-env.md): execute_bash, search, file_editor and finish,
 * dispatched from parsed actions, plus their descriptions for the system prompt (text mode) and
 * as OpenAI `tools` schemas (chat mode). Both descriptions come from one table, so they always
 * name the same parameters.
 *
 * Observations follow R2E-Gym's environment as rLLM ran it: execute_bash's starts with its exit
 * code line (observations.ts); search's and file_editor's start with
 * `Execution output of [TOOL]:`; finish answers `<<< Finished >>>`.
 */
import { SwerlError, invalidArg } from '../../errors.js';
import { bashObservation } from '../observations.js';
import type { Action } from '../actions.js';
import { DEFAULT_STEP_TIMEOUT_MS } from '../env.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { ToolProfile } from './common.js';
import { FileEditor } from './file-editor.js';
import { runSearch } from './search.js';

export { FileEditor, fileView, replaceOnce, parseViewRange, FILE_EDITOR_COMMANDS, type FileEditorOptions, type FileEditorRunOptions } from './file-editor.js';
export { runSearch, type SearchOptions, type SearchResult } from './search.js';
export { CLIPPED_MARKER, MAX_RESPONSE_CHARS, TOOL_PROFILES, type ToolProfile } from './common.js';

export const TOOL_NAMES = ['execute_bash', 'search', 'file_editor', 'finish'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * r2egym profile: R2E-Gym's execute_bash tool refused commands whose first word is one of these
 * (exit code 1 and a one-line message).
 */
export const R2EGYM_BLOCKED_COMMANDS = ['cd', 'ipython', 'jupyter', 'pip', 'nohup'] as const;

export interface SweToolsOptions {
  profile?: ToolProfile;
}

export interface ToolCallResult {
  /** The tool called (as the action named it). */
  tool: string;
  observation: string;
  /** finish was called: the episode is over. */
  finished: boolean;
  /** The call failed: unknown tool, missing parameter, or the tool reported an error. */
  error: boolean;
  /** The tool's command ran past its time limit (execute_bash, search). */
  timedOut: boolean;
}

export interface ToolCallOptions {
  /**
   * The call's time limit, ms (execute_bash's and search's command, each of file_editor's):
   * the step's limit the agent loop gives. Default DEFAULT_STEP_TIMEOUT_MS.
   */
  timeoutMs?: number;
}

/** The observation of a search or file_editor call: the tool line, then its output. */
export function toolOutput(tool: 'search' | 'file_editor', output: string): string {
  return `Execution output of [${tool}]:\n${output}`;
}

/** An observation in a line: its first line past the tool line toolOutput wrote (a failed call's error). */
export function firstOutputLine(observation: string): string {
  const line = observation.split('\n').find((l) => l.trim() !== '' && !/^Execution output of \[[a-z_]+\]:$/.test(l));
  return (line ?? 'the tool reported an error').slice(0, 300);
}

/** One episode's tools over one sandbox (file_editor's undo history lives here). */
export class SweTools {
  readonly profile: ToolProfile;
  private readonly editor: FileEditor;

  constructor(
    private readonly sandbox: Sandbox,
    options: SweToolsOptions = {},
  ) {
    this.profile = options.profile ?? 'default';
    if (this.profile !== 'default' && this.profile !== 'r2egym') {
      throw invalidArg('options.profile', `is ${JSON.stringify(this.profile)}`, 'use "default" or "r2egym"');
    }
    this.editor = new FileEditor(sandbox, { profile: this.profile });
  }

  /**
   * Runs one action. A failing call is an observation (error: true). Only a failure of the
   * sandbox itself (destroyed, or a command could not be started) is thrown, as the SwerlError
   * the sandbox raised: the episode cannot go on.
   */
  async call(action: Action, options: ToolCallOptions = {}): Promise<ToolCallResult> {
    const tool = action.name;
    const timeoutMs = options.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw invalidArg('options.timeoutMs', `is ${timeoutMs}`, 'give a positive number of milliseconds');
    }
    const result = (observation: string, extra: Partial<ToolCallResult> = {}): ToolCallResult => ({
      tool,
      observation,
      finished: false,
      error: false,
      timedOut: false,
      ...extra,
    });
    const spec = TOOL_SPECS.find((s) => s.name === tool);
    if (!spec) {
      return result(`ERROR: Unknown tool '${tool}'. Valid tools: ${TOOL_NAMES.join(', ')}.`, { error: true });
    }
    const missing = spec.parameters.find((p) => p.required && action.args[p.name] === undefined);
    if (missing) {
      const valid = spec.parameters.map((p) => `${p.name} (${p.required ? 'required' : 'optional'})`).join(', ');
      return result(`ERROR: Missing required parameter '${missing.name}' for tool '${tool}'. Parameters of ${tool}: ${valid}.`, { error: true });
    }
    try {
      switch (tool as ToolName) {
        case 'execute_bash': {
          const { observation, timedOut } = await this.bash(action.args.cmd!, timeoutMs);
          return result(observation, { timedOut });
        }
        case 'search': {
          const found = await runSearch(this.sandbox, action.args, this.profile, { timeoutMs });
          return result(toolOutput('search', found.observation), { error: found.error, timedOut: found.timedOut });
        }
        case 'file_editor': {
          const output = await this.editor.run(action.args, { timeoutMs });
          return result(toolOutput('file_editor', output), { error: output.startsWith('ERROR:') });
        }
        case 'finish':
          return result('<<< Finished >>>', { finished: true });
      }
    } catch (error) {
      if (this.sandbox.destroyed || error instanceof SwerlError) throw error;
      return result(`ERROR: ${tool} failed: ${error instanceof Error ? error.message : String(error)}`, { error: true });
    }
  }

  private async bash(cmd: string, timeoutMs: number): Promise<{ observation: string; timedOut: boolean }> {
    const seconds = timeoutMs / 1000;
    if (this.profile === 'r2egym') {
      const first = cmd.trim().split(/\s+/)[0] ?? '';
      if ((R2EGYM_BLOCKED_COMMANDS as readonly string[]).includes(first)) {
        const output = `Bash command '${first}' is not allowed. Please use a different command or tool.\n`;
        return { observation: bashObservation({ exitCode: 1, output, timedOut: false }, seconds), timedOut: false };
      }
    }
    const result = await this.sandbox.exec(cmd, { timeoutMs });
    let observation = bashObservation({ exitCode: result.exitCode, output: result.output, timedOut: result.timedOut }, seconds);
    if (result.outputLimited && !result.timedOut) {
      observation +=
        (observation.endsWith('\n') ? '' : '\n') +
        '[The output passed the size limit, so the command was stopped. Send long output to a file and read parts of it (head, tail, grep).]';
    }
    return { observation, timedOut: result.timedOut };
  }
}

// -------------------------------------------------------------------------------------------
// Descriptions

type ParamType = 'string' | 'integer' | 'boolean' | 'array';

interface ParamSpec {
  name: string;
  type: ParamType;
  required: boolean;
  description: string;
  enum?: readonly string[];
}

interface ToolSpec {
  name: ToolName;
  description: string;
  parameters: ParamSpec[];
}

/** Required parameters are what SweTools checks; descriptions are written per profile. */
const TOOL_SPECS: readonly ToolSpec[] = specs('default', '/testbed');

/** `workdir`: where the repository is, as the descriptions tell the agent (the task's). */
function specs(profile: ToolProfile, workdir: string): ToolSpec[] {
  const r2egym = profile === 'r2egym';
  return [
    {
      name: 'execute_bash',
      description: [
        'Runs a shell command (sh -c) in the repository root and returns its exit code and its output, stdout and stderr together.',
        'Each call starts a fresh shell: `cd` and environment variables do not carry over to the next call, so chain commands with `&&` when needed.',
        `A command is stopped after the step time limit; long outputs keep their first and last 40 lines.`,
        'There is no network access.',
        ...(r2egym ? [`Commands starting with ${R2EGYM_BLOCKED_COMMANDS.map((c) => `\`${c}\``).join(', ')} are refused.`] : []),
      ].join('\n'),
      parameters: [{ name: 'cmd', type: 'string', required: true, description: 'The command line to run, e.g. `python -m pytest tests/test_io.py -x -q`.' }],
    },
    {
      name: 'search',
      description: [
        'Finds a literal piece of text (not a regular expression).',
        r2egym
          ? '- `path` is a folder: searches its non-hidden `.py` files and lists each matching file with its number of matching lines (over 100 files: asks you to narrow the search).'
          : '- `path` is a folder: searches its non-hidden text files and lists each matching file with its number of matching lines (over 100 files: asks you to narrow the search).',
        '- `path` is a file: shows every matching line with its line number, as `grep -n` does.',
      ].join('\n'),
      parameters: [
        { name: 'search_term', type: 'string', required: true, description: 'The text to look for, matched exactly (case-sensitive).' },
        { name: 'path', type: 'string', required: false, description: 'The folder or file to search in; default `.`, the repository root.' },
      ],
    },
    {
      name: 'file_editor',
      description: [
        `Views, creates and edits files. \`path\` must be absolute (the repository is at ${workdir}, e.g. \`${workdir}/src/module.py\`).`,
        r2egym
          ? '- `view` on a file shows it with line numbers; only `.py` files can be viewed. A Python file over 110 lines is shown condensed (long function bodies elided) unless you give a `view_range`. On a folder, `view` lists folders and `.py` files two levels deep, hidden ones left out.'
          : '- `view` on a file shows it with line numbers; `concise` condenses a Python file by eliding long function bodies. On a folder, `view` lists files and folders two levels deep, hidden ones left out.',
        '- `create` writes a new file; it refuses a path that already exists.',
        '- `str_replace` replaces `old_str` with `new_str`. `old_str` must match exactly one place in the file, whitespace and indentation included; add surrounding lines to make it unique. Leave out `new_str` to delete `old_str`.',
        '- `insert` adds `new_str` after line `insert_line` (0 puts it at the top).',
        '- `undo_edit` reverts the last create/str_replace/insert made to `path`; repeat it to go further back.',
        'Edits answer with the changed lines and their neighbours, numbered. Long outputs are cut at 10,000 characters: then find line numbers with `grep -n` (or `search`) and view a `view_range`.',
      ].join('\n'),
      parameters: [
        { name: 'command', type: 'string', required: true, description: 'What to do.', enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'] },
        { name: 'path', type: 'string', required: true, description: `Absolute path of the file or folder, e.g. \`${workdir}/setup.py\`.` },
        { name: 'file_text', type: 'string', required: false, description: 'For `create`: the whole content of the new file.' },
        { name: 'old_str', type: 'string', required: false, description: 'For `str_replace`: the exact text to replace, found once in the file.' },
        { name: 'new_str', type: 'string', required: false, description: 'For `str_replace`: the replacement (left out: delete). For `insert`: the text to insert.' },
        { name: 'insert_line', type: 'integer', required: false, description: 'For `insert`: the line number after which `new_str` goes; 0 for the top of the file.' },
        { name: 'view_range', type: 'array', required: false, description: 'For `view` of a file: `[start_line, end_line]`, 1-based and inclusive, e.g. `[20, 45]`; an end_line of -1 means to the end of the file.' },
        { name: 'concise', type: 'boolean', required: false, description: 'For `view` of a Python file: `true` shows a condensed outline with long function bodies elided.' },
      ],
    },
    {
      name: 'finish',
      description: 'Ends the task once your changes are complete. Your edits to the repository are what gets submitted and tested; nothing else is needed.',
      parameters: [
        { name: 'command', type: 'string', required: false, description: 'Always `submit`.', enum: ['submit'] },
        { name: 'result', type: 'string', required: false, description: 'Optional short note about what you did.' },
      ],
    },
  ];
}

export interface ToolDescriptions {
  /** The tools and the call grammar, for the system prompt of text-mode policies. */
  text: string;
  /**
   * The same tools in a few lines (each tool's name and parameters, optional ones marked `?`),
   * for small models whose every prompt byte costs: about a tenth of `text`.
   */
  compactText: string;
  /** OpenAI chat-completions `tools` entries for chat policies. */
  openAiTools: object[];
}

export function toolDescriptions(profile: ToolProfile = 'default', workdir = '/testbed'): ToolDescriptions {
  const tools = specs(profile, workdir);
  const sections = tools.map((tool) => {
    const params = tool.parameters.map((p) => {
      const allowed = p.enum ? ` Allowed values: ${p.enum.map((v) => `\`${v}\``).join(', ')}.` : '';
      return `  - ${p.name} (${p.type}, ${p.required ? 'required' : 'optional'}): ${p.description}${allowed}`;
    });
    return `### ${tool.name}\n${tool.description}\nParameters:\n${params.join('\n')}`;
  });
  const text = [
    'Call exactly one tool in each response, in this form:',
    '',
    '<function=TOOL_NAME>',
    '<parameter=PARAMETER_NAME>value</parameter>',
    '<parameter=OTHER_PARAMETER>a value that may',
    'span several lines</parameter>',
    '</function>',
    '',
    'Rules for calls:',
    '- Values are written as they are, with no quotes or escaping; spaces and newlines around a value are dropped.',
    '- Only the first call in a response runs, and anything after its `</function>` is ignored, so end your response with the call.',
    '- Every response needs a call. When you are done, call `finish`.',
    '- Numbers and lists are written as text too, e.g. `<parameter=view_range>[10, 40]</parameter>`.',
    '',
    'Example:',
    '<function=file_editor>',
    '<parameter=command>view</parameter>',
    `<parameter=path>${workdir}/src/package/module.py</parameter>`,
    '<parameter=view_range>[1, 20]</parameter>',
    '</function>',
    '',
    'Tools:',
    '',
    sections.join('\n\n'),
  ].join('\n');
  const openAiTools = tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          tool.parameters.map((p) => [
            p.name,
            {
              type: p.type,
              description: p.description,
              ...(p.enum ? { enum: [...p.enum] } : {}),
              ...(p.type === 'array' ? { items: { type: 'integer' } } : {}),
            },
          ]),
        ),
        required: tool.parameters.filter((p) => p.required).map((p) => p.name),
      },
    },
  }));
  const signature = (tool: ToolSpec) =>
    tool.parameters.map((p) => `${p.name}${p.enum ? `=${p.enum.join('|')}` : ''}${p.required ? '' : '?'}`).join(', ');
  const compactText = [
    'Call one tool per reply:',
    '<function=NAME>',
    '<parameter=KEY>value</parameter>',
    '</function>',
    'Tools:',
    ...tools.map((tool) => `- ${tool.name}(${signature(tool)})`),
  ].join('\n');
  return { text, compactText, openAiTools };
}
