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
}

export function contextOf(command: Command): CliContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new BoaClient(resolveConnection(options, process.env, process.cwd())),
    json: options.json === true,
    print: (text) => process.stdout.write(text),
  };
}

/** --json prints the API's body as received; otherwise the command's readable rendering; both escaped. */
export function output(context: CliContext, text: string, readable: () => string): void {
  context.print(context.json ? `${printableJson(text)}\n` : printable(readable(), true));
}
