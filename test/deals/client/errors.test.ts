import { expect, test } from 'vitest';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as mine from '../../../src/deals/client/errors.js';

test('instanceof holds across two copies of the package, both ways, and keeps subclasses apart', async () => {
  // A second copy: the built errors module copied elsewhere and loaded as a separate module instance.
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-copy-'));
  try {
    copyFileSync(
      fileURLToPath(new URL('../../../dist/node/deals/client/errors.js', import.meta.url)),
      join(dir, 'errors.js'),
    );
    const other = (await import(pathToFileURL(join(dir, 'errors.js')).href)) as typeof mine;
    expect(other.NotFoundError).not.toBe(mine.NotFoundError);

    const foreign = new other.CreationQuotaExceededError('quota', 1000, { status: 429 });
    expect(foreign).toBeInstanceOf(mine.CreationQuotaExceededError);
    expect(foreign).toBeInstanceOf(mine.QuotaExceededError);
    expect(foreign).toBeInstanceOf(mine.RateLimitedError);
    expect(foreign).toBeInstanceOf(mine.DealApiError);
    expect(foreign).not.toBeInstanceOf(mine.UpdateQuotaExceededError);
    expect(foreign).not.toBeInstanceOf(mine.NotFoundError);

    const local = new mine.InvalidGrantError('wrong password');
    expect(local).toBeInstanceOf(other.AuthenticationError);
    expect(local).not.toBeInstanceOf(other.AuthAttemptsExhaustedError);
    expect(local).toBeInstanceOf(Error);
    expect(local.name).toBe('InvalidGrantError');
    expect({}).not.toBeInstanceOf(mine.DealApiError);
    expect(new Error('x')).not.toBeInstanceOf(mine.DealApiError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('errors serialise to plain, secret-free JSON with their fields', () => {
  const redact = (s: string) => s.split('s3cret-value').join('[REDACTED]');
  const err = new mine.ValidationError('bad s3cret-value', [{ path: 'price', message: 'must be a number' }], {
    status: 400,
    method: 'POST',
    url: 'https://x.test/deals',
    redact,
    cause: new Error('s3cret-value'),
  });
  const json = JSON.parse(JSON.stringify(err));
  expect(json).toEqual({
    name: 'ValidationError',
    message: 'bad [REDACTED]',
    status: 400,
    method: 'POST',
    url: 'https://x.test/deals',
    issues: [{ path: 'price', message: 'must be a number' }],
  });
});
