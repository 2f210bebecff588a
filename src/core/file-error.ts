/** Words for the error of a file read, for messages: `no such file` rather than the bare code `ENOENT`. */

const WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links',
};

/** Why reading a file failed, in words (`no such file`), for an error thrown by `fs`; its message otherwise. */
export function fileErrorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && WORDS[code]) return WORDS[code];
  return err instanceof Error ? err.message : String(err);
}
