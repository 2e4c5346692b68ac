/** A subcommand's flags and positional arguments, as every `swerl` command reads them. */
import { parseArgs } from 'node:util';

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/** Parses `args` against `options`; an unknown flag or a missing value is an error. */
export function commandArgs<const O extends Options>(args: string[], options: O): Parsed<O> {
  return parseArgs({ args, options, allowPositionals: true, strict: true });
}
