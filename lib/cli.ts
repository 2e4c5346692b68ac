#!/usr/bin/env node
/** The swerl command (lib/cli/ holds its verbs). */
import { runCli } from './cli/program.js';

runCli(process.argv.slice(2)).then((code) => (process.exitCode = code));
