/**
 * Checks the `eidkit …` commands written in the docs' shell blocks against the CLI's own commander program: every
 * subcommand and every flag must exist. It reads real command lines (quotes, pipes, `&&`, `\` continuations,
 * `$ ` prompts) and the synopsis notation the docs use (`[--json|--csv]`, `pause|resume|delete <id>`, an indented
 * line continuing the one above).
 */
import { Command, type Option } from 'commander';
import { codeBlocksOf, type MarkdownDoc } from './markdown.js';

/** The shape of one (sub)command, as the check needs it. */
export interface CliSpec {
  /** Its name and aliases. */
  names: string[];
  /** `eidkit deals list`. */
  path: string;
  /** Every flag it accepts (`--json`, `-v`), its own and its ancestors' (commander reads those after it too). */
  flags: Set<string>;
  /** The short flags that take a value (`-o <file>`), so `-ofile` is not read as `-o -f -i …`. */
  shortWithValue: Set<string>;
  subcommands: CliSpec[];
  /** Whether it takes positional arguments (then a word that is no subcommand name is one). */
  takesArguments: boolean;
}

/**
 * The `eidkit` program exactly as the binary builds it, so the tree is the one every part registers, with no list
 * kept here to drift: src/cli/index.ts's `createProgram()` or `program` export when it has one, else the program
 * it parses on import, with commander's parse intercepted.
 */
export async function loadCliProgram(): Promise<Command> {
  const proto = Command.prototype;
  const { parse, parseAsync } = proto;
  let parsed: Command | undefined;
  proto.parse = function (this: Command) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the program commander parsed is what we read
    parsed ??= this;
    return this;
  };
  proto.parseAsync = async function (this: Command) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the program commander parsed is what we read
    parsed ??= this;
    return this;
  };
  let entry: { createProgram?: () => Command; program?: unknown };
  try {
    entry = await import('../../src/cli/index.js');
  } finally {
    proto.parse = parse;
    proto.parseAsync = parseAsync;
  }
  const program =
    typeof entry.createProgram === 'function'
      ? entry.createProgram()
      : entry.program instanceof Command
        ? entry.program
        : parsed;
  if (!program)
    throw new Error(
      'src/cli/index.ts neither exports createProgram() or program nor parses a commander program on import',
    );
  return program;
}

/** The spec of a commander command and, recursively, of its subcommands (help command and options included). */
export function cliSpecOf(cmd: Command, parent?: CliSpec): CliSpec {
  const help = cmd.createHelp();
  const options = new Set<Option>([...cmd.options, ...help.visibleOptions(cmd)]);
  const flags = new Set(parent?.flags);
  const shortWithValue = new Set(parent?.shortWithValue);
  for (const o of options) {
    if (o.long) flags.add(o.long);
    if (o.short) flags.add(o.short);
    if (o.short && (o.required || o.optional)) shortWithValue.add(o.short);
  }
  const spec: CliSpec = {
    names: [cmd.name(), ...cmd.aliases()],
    path: parent ? `${parent.path} ${cmd.name()}` : cmd.name(),
    flags,
    shortWithValue,
    subcommands: [],
    takesArguments: cmd.registeredArguments.length > 0,
  };
  const subcommands = new Set<Command>([...cmd.commands, ...help.visibleCommands(cmd)]);
  spec.subcommands = [...subcommands].map((sub) => cliSpecOf(sub, spec));
  return spec;
}

/** A documented command the CLI does not have. */
export interface CliDocProblem {
  /** `README.md:421`. */
  at: string;
  /** The command line as written. */
  command: string;
  problem: string;
}

/** `README.md:421: unknown flag --jsn of eidkit decode  (eidkit decode --jsn x)`, one a line. */
export function formatCliProblems(list: CliDocProblem[]): string {
  return list.map((p) => `${p.at}: ${p.problem}  (${p.command})`).join('\n');
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** Every `eidkit` command in the shell blocks of the documents that names a subcommand or flag the CLI lacks. */
export function cliDocProblems(cli: CliSpec, docs: MarkdownDoc[]): CliDocProblem[] {
  const problems: CliDocProblem[] = [];
  for (const doc of docs) {
    for (const block of codeBlocksOf(doc)) {
      if (!SHELL.has(block.lang)) continue;
      for (const { text, line } of commandLines(block.text, block.lang === 'console')) {
        for (const invocation of eidkitInvocations(tokenize(text))) {
          for (const problem of checkInvocation(cli, invocation)) {
            problems.push({ at: `${doc.file}:${block.line + line}`, command: text.trim(), problem });
          }
        }
      }
    }
  }
  return problems;
}

/** Logical lines of a block, with the 0-based line where each starts; `console` blocks only count `$ ` lines. */
function commandLines(block: string, consoleOnly: boolean): { text: string; line: number }[] {
  const out: { text: string; line: number; open: boolean; eidkit: boolean }[] = [];
  block.split('\n').forEach((raw, i) => {
    const last = out[out.length - 1];
    const continues = last?.open || (last?.eidkit && /^\s+\S/.test(raw) && !/^\s*\$ /.test(raw));
    let text = raw;
    if (!continues) {
      const prompt = /^\s*\$ /.exec(text);
      if (prompt) text = text.slice(prompt[0].length);
      else if (consoleOnly) return; // output, not a command
    }
    const open = /\\$/.test(text);
    if (open) text = text.slice(0, -1);
    if (continues) {
      last.text += ` ${text}`;
      last.open = open;
    } else out.push({ text, line: i, open, eidkit: /\beidkit\b/.test(text) });
  });
  return out.map(({ text, line }) => ({ text, line }));
}

type ShellToken = { word: string } | { op: string; spaced: boolean };

/** Splits a shell line into words and operators, honouring quotes and escapes; a `#` word starts a comment. */
export function tokenize(line: string): ShellToken[] {
  const tokens: ShellToken[] = [];
  let word: string | undefined;
  const end = () => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (/\s/.test(c)) end();
    else if (c === "'" || c === '"') {
      let stop = i + 1;
      while (stop < line.length && (line[stop] !== c || (c === '"' && line[stop - 1] === '\\'))) stop++;
      const quoted = line.slice(i + 1, stop);
      word = (word ?? '') + (c === '"' ? quoted.replace(/\\(["\\$`])/g, '$1') : quoted);
      i = stop;
    } else if (c === '\\') word = (word ?? '') + (line[++i] ?? '');
    else if (c === '#' && word === undefined) break;
    else if (c === '<' && word === undefined && /^<[A-Za-z][^<>\s]*>/.test(line.slice(i))) {
      // A synopsis placeholder, `<id>`, not an input redirect.
      const close = line.indexOf('>', i);
      word = line.slice(i, close + 1);
      i = close;
    } else if (c === '>' || c === '<') {
      if (word !== undefined && /^\d+$/.test(word)) word = undefined; // the fd of `2>`
      end();
      const m = /^(?:>>?|<)(&\d+)?/.exec(line.slice(i))!;
      i += m[0].length - 1;
      tokens.push({ op: m[1] ? 'dup' : 'redirect', spaced: true });
    } else if ('|&;'.includes(c)) {
      end();
      const double = (c === '|' || c === '&') && line[i + 1] === c;
      const spaced = /\s/.test(line[i - 1] ?? ' ') && /\s/.test(line[i + (double ? 2 : 1)] ?? ' ');
      tokens.push({ op: double ? c + c : c, spaced });
      if (double) i++;
    } else word = (word ?? '') + c;
  }
  end();
  return tokens;
}

/** The words after `eidkit` in each simple command; a position holds the alternatives of `a|b`, brackets stripped. */
function eidkitInvocations(tokens: ShellToken[]): string[][][] {
  const commands: string[][][] = [[]];
  let alternation = false;
  let skipNext = false;
  tokens.forEach((token, i) => {
    const current = commands[commands.length - 1];
    if ('word' in token) {
      if (skipNext) return void (skipNext = false);
      const word = token.word.replace(/^[[(]+|[\])]+$|\.\.\.$/g, '');
      if (!word) return; // `[` or `]` alone
      if (alternation && current.length) current[current.length - 1].push(word);
      else current.push([word]);
      alternation = false;
      return;
    }
    if (token.op === 'redirect') return void (skipNext = true);
    if (token.op === 'dup') return;
    const next = tokens[i + 1];
    // `pause|resume`, `[--json|--csv]`, `--file x | --data y` are the synopsis's alternatives; `… | jq` is a pipe.
    if (token.op === '|' && (!token.spaced || (next && 'word' in next && /^[-[<(]/.test(next.word)))) {
      alternation = true;
      return;
    }
    commands.push([]);
    alternation = false;
  });
  return commands.flatMap((positions) => {
    let i = 0;
    while (i < positions.length && /^[A-Za-z_]\w*=/.test(positions[i][0])) i++; // FOO=bar eidkit …
    const skipFlags = () => {
      while (i < positions.length && positions[i][0].startsWith('-')) i++;
    };
    if (positions[i]?.[0] === 'npx') {
      i++;
      skipFlags();
    }
    // The clone's npm script: `npm run -s eidkit -- deals list`, the CLI's words after the `--`.
    const script = positions[i]?.[0] === 'npm' && positions[i + 1]?.[0] === 'run';
    if (script) {
      i += 2;
      skipFlags();
    }
    if (!/^eidkit(@\S+)?$/.test(positions[i]?.[0] ?? '')) return []; // also `npx eidkit@0.1.0`
    return [positions.slice(script && positions[i + 1]?.[0] === '--' ? i + 2 : i + 1)];
  });
}

function checkInvocation(spec: CliSpec, positions: string[][]): string[] {
  let cmd = spec;
  let i = 0;
  for (; i < positions.length && cmd.subcommands.length > 0; i++) {
    const alternatives = positions[i];
    if (alternatives.some((w) => w.startsWith('-'))) break;
    if (alternatives.some((w) => w.startsWith('<'))) return []; // `eidkit deals <command>`: any of them
    const found = alternatives.map((w) => cmd.subcommands.find((s) => s.names.includes(w)));
    if (cmd.takesArguments && found.some((s) => !s)) break;
    const unknown = alternatives.filter((_, k) => !found[k]);
    if (unknown.length)
      return unknown.map(
        (w) =>
          `unknown subcommand "${w}" of ${cmd.path} (it has: ${cmd.subcommands.map((s) => s.names[0]).join(', ')})`,
      );
    if (found.length > 1) return found.flatMap((sub) => checkInvocation(sub!, positions.slice(i + 1)));
    cmd = found[0]!;
  }
  const problems: string[] = [];
  for (const word of positions.slice(i).flat()) {
    if (word === '--') break;
    if (!/^--?[A-Za-z]/.test(word)) continue;
    for (const flag of flagsOf(word, cmd)) {
      if (!cmd.flags.has(flag)) problems.push(`unknown flag ${flag} of ${cmd.path}`);
    }
  }
  return problems;
}

/** `--x=1` → `--x`; `-vh` → `-v`, `-h`; `-ofile` → `-o` when `-o` takes a value. */
function flagsOf(word: string, cmd: CliSpec): string[] {
  if (word.startsWith('--')) return [word.split('=')[0]];
  const flags: string[] = [];
  for (const c of word.slice(1)) {
    flags.push(`-${c}`);
    if (cmd.shortWithValue.has(`-${c}`)) break;
  }
  return flags;
}
