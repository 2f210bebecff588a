/**
 * Commands as data: a {@link CommandDef} says what one command is (its place, summary, examples, arguments, option
 * groups, options, handler) and {@link registerCommands} turns a list of them into commander commands. The help, the
 * parsing and the usage errors stay commander's.
 */
import { Option, type Command } from 'commander';
import { examples } from '../output.js';
import { action } from '../deals-io.js';
import { connectionOptions } from '../deals-session.js';

/** One positional argument: commander's name (`<id>`), its help, and its parser. */
export interface ArgumentDef {
  name: string;
  description: string;
  parse?: (value: string) => unknown;
}

/** A command that runs a handler. */
export interface CommandDef {
  /** The words that call it, e.g. `['deals', 'list']`; every word before the last is a group registered before it. */
  path: readonly string[];
  summary: string;
  examples: readonly string[];
  arguments?: readonly ArgumentDef[];
  /** Options shared with other commands, added in this order, before {@link options}. */
  groups: readonly ((cmd: Command) => Command)[];
  options?: readonly Option[];
  /** Called with the parsed arguments, then the parsed options (as commander's action). */
  handler: (...args: never[]) => Promise<void>;
}

/** A command that only holds others (`deals`, `deals domainlist`); `then` adds commands registered elsewhere. */
export interface GroupDef {
  path: readonly string[];
  summary: string;
  then?: (group: Command) => void;
}

/** An option, as `program.option(flags, description, parse)` would add it. */
export function option(flags: string, description: string, parse?: (value: string) => unknown): Option {
  const made = new Option(flags, description);
  return parse ? made.argParser(parse) : made;
}

/** The options of every writing command: the connection, --dry-run and --json. */
export function writeOptions(cmd: Command): Command {
  return connectionOptions(cmd)
    .option('--dry-run', 'validate and print the request (secrets masked) without sending it')
    .option('--json', 'print JSON');
}

/** The options that give a deal or a patch: --file, --data, repeatable --set. */
export function dealInputOptions(cmd: Command): Command {
  return cmd
    .option('--file <path>', 'the deal as JSON (- reads stdin)')
    .option('--data <json>', 'the deal as inline JSON')
    .option(
      '--set <field=value>',
      'set one field (value parsed as JSON, else a string); repeatable',
      (v: string, prev?: string[]) => [...(prev ?? []), v],
    );
}

/** Registers `defs` in order under `root`: a definition's group is the command its path names without its last word. */
export function registerCommands(root: Command, defs: readonly (CommandDef | GroupDef)[]): void {
  const registered = new Map<string, Command>([['', root]]);
  for (const def of defs) {
    const parent = registered.get(def.path.slice(0, -1).join(' '));
    if (!parent) throw new Error(`${def.path.join(' ')}: its group is not registered before it`);
    const command = parent.command(def.path[def.path.length - 1]).description(def.summary);
    if ('handler' in def) addCommand(command, def);
    else def.then?.(command);
    registered.set(def.path.join(' '), command);
  }
}

function addCommand(command: Command, def: CommandDef): void {
  examples(command, ...def.examples);
  for (const group of def.groups) group(command);
  for (const arg of def.arguments ?? []) command.argument(arg.name, arg.description, arg.parse);
  for (const added of def.options ?? []) command.addOption(added);
  // Commander checks arguments and options against the definition before it calls the handler with them.
  command.action(action(def.handler as (...args: unknown[]) => Promise<void>));
}
