/**
 * Simulator users: company (buyer-side) users and DSP callers, each with OAuth client credentials and a login.
 * Loaded from a JSON file (`--users FILE`, shape in docs/simulator.md) or the built-in demo set.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { fileErrorText } from '../core/file-error.js';

/** One user the simulator accepts. */
export const SimulatorUserSchema = z.strictObject({
  /** Login (Auth0 username, usually an email). */
  username: z.string().min(1),
  /** Login password. */
  password: z.string().min(1),
  /** OAuth client id the user authenticates with. */
  clientId: z.string().min(1),
  /** OAuth client secret of that client. */
  clientSecret: z.string().min(1),
  /** `company`: a buyer-side company user; `dsp`: a DSP caller, refused some lookups and domain-list operations. */
  kind: z.enum(['company', 'dsp']),
  /** The company whose deals the user sees and edits. */
  companyId: z.int().positive(),
  /** For DSP callers: the DSP they act for. */
  dspId: z.int().positive().optional(),
});

/** One user the simulator accepts. */
export type SimulatorUser = z.infer<typeof SimulatorUserSchema>;

/** The users file: an array of users, or `{ "users": [...] }`. */
export const SimulatorUsersFileSchema = z.union([
  z.array(SimulatorUserSchema).min(1),
  z.strictObject({ users: z.array(SimulatorUserSchema).min(1) }).transform((f) => f.users),
]);

/** The built-in demo users: two companies and one DSP caller. Their credentials are printed by `eidkit simulate`. */
export const DEMO_USERS: readonly SimulatorUser[] = [
  {
    username: 'demo@eidkit.test',
    password: 'demo-password',
    clientId: 'eidkit-demo-client',
    clientSecret: 'eidkit-demo-secret',
    kind: 'company',
    companyId: 1,
  },
  {
    username: 'other@eidkit.test',
    password: 'other-password',
    clientId: 'eidkit-demo-client',
    clientSecret: 'eidkit-demo-secret',
    kind: 'company',
    companyId: 2,
  },
  {
    username: 'dsp@eidkit.test',
    password: 'dsp-password',
    clientId: 'eidkit-dsp-client',
    clientSecret: 'eidkit-dsp-secret',
    kind: 'dsp',
    companyId: 3,
    dspId: 1,
  },
];

/** Reads and checks a users file; throws an Error naming the bad entry (never echoing a password or secret). */
export function loadUsersFile(path: string): SimulatorUser[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read users file ${path}: ${fileErrorText(err)}`, { cause: err });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    // JSON.parse's message quotes the text around the error, which may be a password: give the position only.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    // eslint-disable-next-line preserve-caught-error -- the cause's message would carry the text, maybe a password
    throw new Error(`users file ${path} is not valid JSON${at === undefined ? '' : ` (at position ${at})`}`);
  }
  return parseUsers(raw, `users file ${path}`);
}

/** Checks a list of users; the error names the field, never its value. */
export function parseUsers(raw: unknown, source = 'users'): SimulatorUser[] {
  const r = SimulatorUsersFileSchema.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new Error(
      `invalid ${source}: ${first.path.join('.') || '(root)'}: ${first.code === 'unrecognized_keys' ? `unknown field ${first.keys.join(', ')}` : 'missing or of the wrong type'}`,
    );
  }
  const names = new Set<string>();
  for (const u of r.data) {
    const key = u.username.toLowerCase();
    if (names.has(key)) throw new Error(`invalid ${source}: username ${u.username} appears twice`);
    names.add(key);
    if (u.kind === 'dsp' && u.dspId === undefined)
      throw new Error(`invalid ${source}: DSP caller ${u.username} needs a dspId`);
  }
  return r.data;
}
