import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { BoaClient } from './client.ts';
import { resolveConnection } from './connection.ts';
import { printable, printableJson } from './format.ts';

export interface GlobalOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/** What every command's action needs: a client for the configured service, and where output goes. */
export interface CliContext {
  client: BoaClient;
  json: boolean;
  print(text: string): void;
  /** Asks a yes/no question on a terminal; absent when nobody can answer (a script, a pipe, --json). */
  confirm?: (question: string) => Promise<boolean>;
}

export function contextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const json = options.json === true;
  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
  return {
    client: new BoaClient(resolveConnection(options, process.env, process.cwd())),
    json,
    print: (text) => process.stdout.write(text),
    ...(terminal && !json ? { confirm: askOnTerminal } : {}),
  };
}

async function askOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } catch (error) {
    // Ctrl+D at the question rejects it (AbortError): no answer, so the default, no.
    if ((error as Error).name === 'AbortError') {
      process.stdout.write('\n');
      return false;
    }
    throw error;
  } finally {
    rl.close();
  }
}

/** --json prints the API's body as received; otherwise the command's readable rendering; both escaped. */
export function output(context: CliContext, text: string, readable: () => string): void {
  context.print(context.json ? `${printableJson(text)}\n` : printable(readable(), true));
}
