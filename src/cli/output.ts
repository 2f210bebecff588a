/**
 * The one place the `eidkit` CLI writes and ends: data to stdout with backpressure, messages to stderr, and the
 * end of a command that waits until both have drained (the exit code goes to `process.exitCode`; nothing calls
 * `process.exit()` after a write, which would cut output still queued for a pipe). A reader that closes the pipe
 * early (`| head -1`) ends the command quietly with status 141, as a program killed by SIGPIPE would.
 */
import { createInterface } from 'node:readline/promises';
import { CommanderError, type Command } from 'commander';
import { EXIT } from './exit-codes.js';
import { jsonTerminalSafe, terminalSafe } from '../core/terminal.js';

/** Exit status when stdout was closed by its reader (128 + SIGPIPE, what a shell reports for `yes | head -1`). */
export const EXIT_CLOSED_PIPE = 141;

/** Thrown by {@link Output.write} once the reader has closed the pipe: the command stops producing output. */
export class OutputClosedError extends Error {
  override readonly name = 'OutputClosedError';
}

/**
 * An error the CLI reports as `eidkit: <message>` (then each detail line, indented) and exits with `exitCode`.
 * Parts throw it (or map their errors to it) so every message is printed once, at the top.
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
    /** Further lines, e.g. one per invalid field. */
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * Ends a command with a non-zero exit code and no message, when its output already said everything (e.g.
 * `deals plan` exits 7 when there are changes, like `terraform plan -detailed-exitcode`).
 */
export class ExitStatus extends Error {
  override readonly name = 'ExitStatus';
  constructor(readonly exitCode: number) {
    super(`exit status ${exitCode}`);
  }
}

/** A writable stream that remembers whether its reader went away and lets a command wait until it drained. */
export class Output {
  #closed = false;
  #last: Promise<void> = Promise.resolve();

  constructor(readonly stream: NodeJS.WritableStream & { writableLength?: number }) {
    // Without a listener an EPIPE would be an uncaught exception with a stack trace.
    // EPIPE is the usual one; any other write error also means nothing more can be written.
    stream.on('error', () => {
      this.#closed = true;
    });
  }

  /** True once the reader has closed the pipe (or the stream failed). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Writes text; resolves at once while the stream's buffer has room, else when it drained. Rejects with
   * {@link OutputClosedError} once the reader is gone, so a long listing stops fetching pages nobody reads.
   */
  async write(text: string): Promise<void> {
    if (this.#closed) throw new OutputClosedError('output closed by its reader');
    if (text === '') return;
    let ok = true;
    this.#last = new Promise<void>((done) => {
      ok = this.stream.write(text, () => done());
    });
    if (!ok) await this.#drained();
    if (this.#closed) throw new OutputClosedError('output closed by its reader');
  }

  /** Resolves when everything written so far has been handed to the operating system (or the reader is gone). */
  async flush(): Promise<void> {
    if (this.#closed) return;
    // The listeners go once the write is handed over: a process that runs many commands (tests, the fuzz suite)
    // must not pile them up on stdout.
    let stop = () => {};
    const gone = new Promise<void>((done) => {
      const finish = () => done();
      this.stream.once('error', finish);
      this.stream.once('close', finish);
      stop = () => {
        this.stream.off('error', finish);
        this.stream.off('close', finish);
      };
    });
    try {
      await Promise.race([this.#last, gone]);
    } finally {
      stop();
    }
  }

  #drained(): Promise<void> {
    return new Promise((done) => {
      const finish = () => {
        this.stream.off('drain', finish);
        this.stream.off('error', finish);
        this.stream.off('close', finish);
        done();
      };
      this.stream.on('drain', finish);
      this.stream.on('error', finish);
      this.stream.on('close', finish);
    });
  }
}

let stdoutOutput: Output | undefined;
let stderrOutput: Output | undefined;

/** The process's stdout (data). */
export function stdout(): Output {
  return (stdoutOutput ??= new Output(process.stdout));
}

/** The process's stderr (messages, progress). */
export function stderr(): Output {
  return (stderrOutput ??= new Output(process.stderr));
}

/**
 * Writes data to stdout exactly as given (JSON, CSV), honouring backpressure (see {@link Output.write}). Text for
 * people goes through {@link outText}.
 */
export function out(text: string): Promise<void> {
  return stdout().write(text);
}

/**
 * Writes human-readable text to stdout: every control character but the line breaks is shown escaped
 * ({@link terminalSafe}), so nothing in it can act on the terminal. Build it from fields already escaped
 * (`fieldText`, `formatTable`, `formatRecord`) so a line break inside a value cannot forge a line either.
 */
export function outText(text: string): Promise<void> {
  return out(terminalSafe(text, { keepNewlines: true }));
}

/**
 * Writes human-readable text to stderr, escaped as {@link outText} does; never throws (a closed stderr loses the
 * message, not the command).
 */
export function toStderr(text: string): void {
  toStderrRaw(terminalSafe(text, { keepNewlines: true }));
}

/** Writes to stderr as is: only for the CLI's own control sequences (a progress line redrawn with `\r`). */
export function toStderrRaw(text: string): void {
  const err = stderr();
  if (!err.closed) void err.write(text).catch(() => undefined);
}

/** Writes a message line to stderr (adds the newline); never throws. */
export function say(line: string): void {
  toStderr(line.endsWith('\n') ? line : `${line}\n`);
}

/** True when a person is at the terminal (stdin and stderr are terminals), so a question can be asked. */
export function interactive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/**
 * Asks a yes/no question on stderr; true only for `y` or `yes` (any case), or with `onlyYes` only for `yes` typed
 * in full (the question is then shown as given, and should say so). Ask only when {@link interactive}.
 */
export async function confirm(question: string, { onlyYes = false }: { onlyYes?: boolean } = {}): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(onlyYes ? question : `${question} [y/N] `)).trim();
    return onlyYes ? answer === 'yes' : /^y(es)?$/i.test(answer);
  } finally {
    rl.close();
  }
}

/** Adds an "Examples:" section to a command's help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/**
 * JSON text as stdout should get it: byte for byte as given when stdout is a pipe or a file (what a program reads);
 * on a terminal, every character {@link terminalSafe} escapes is written as a `\u` escape ({@link jsonTerminalSafe}),
 * still valid JSON of the same value, so a C1 control or a bidi override in a value cannot act on the terminal.
 */
export function jsonForStdout(json: string): string {
  return process.stdout.isTTY ? jsonTerminalSafe(json) : json;
}

/** Writes a JSON value to stdout, pretty-printed, with a final newline (see {@link jsonForStdout}). */
export function outJson(value: unknown): Promise<void> {
  return out(jsonForStdout(JSON.stringify(value, null, 2)) + '\n');
}

/**
 * The text the CLI prints for an error: the message once, then its detail lines. Messages may quote what a server
 * or a file said, so each is one terminal-safe line (a line break inside shows as `\x0a`).
 */
export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  let text = `eidkit: ${terminalSafe(message)}\n`;
  if (err instanceof CliError) text += err.details.map((d) => `  ${terminalSafe(d)}\n`).join('');
  return text;
}

/** The exit code for an error thrown by a command. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof OutputClosedError) return EXIT_CLOSED_PIPE;
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' ? code : EXIT.ERROR;
}

/**
 * Runs the program: parses `argv`, runs the command, prints an error once (commander prints its own usage errors),
 * waits until stdout and stderr have drained, and resolves with the exit code (also set on `process.exitCode`).
 */
export async function runCli(program: Command, argv: string[]): Promise<number> {
  let code: number = EXIT.OK;
  try {
    await program.parseAsync(argv);
  } catch (err) {
    code = exitCodeOf(err);
    if (!(err instanceof CommanderError) && !(err instanceof OutputClosedError) && !(err instanceof ExitStatus)) {
      let text = errorText(err);
      if (code === EXIT.ERROR && err instanceof Error && process.env.EIDKIT_DEBUG) text += `${err.stack}\n`;
      say(text);
    }
  }
  await Promise.all([stdout().flush(), stderr().flush()]);
  if (stdout().closed && code === EXIT.OK) code = EXIT_CLOSED_PIPE;
  process.exitCode = code;
  return code;
}
