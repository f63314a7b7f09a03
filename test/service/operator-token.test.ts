import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OperatorToken, type TokenSource } from '../../src/service/operator-token.ts';
import { captureLogs } from '../cloud/fake-time.ts';

const A = 'token-a-0123456789abcdef';
const B = 'token-b-0123456789abcdef';

function rotatingSource(first: string) {
  let value: string | Error = first;
  let reads = 0;
  const source: TokenSource = {
    name: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:boa-operator-token-AbCdEf',
    async read() {
      reads++;
      if (value instanceof Error) throw value;
      return value;
    },
  };
  return { source, set: (v: string | Error) => void (value = v), reads: () => reads };
}

function setup(first = A) {
  let now = Date.UTC(2026, 10, 1);
  const clock = { now: () => now };
  const logs = captureLogs();
  const secret = rotatingSource(first);
  const tokens = new OperatorToken(first, {
    source: secret.source,
    clock,
    logger: logs.logger,
    overlapMs: 15 * 60_000,
    unknownTokenRefreshGapMs: 30_000,
  });
  return { tokens, secret, logs, advance: (ms: number) => void (now += ms) };
}

describe('OperatorToken', () => {
  it('a fixed token matches itself only and never reads anything', async () => {
    const tokens = OperatorToken.fixed(A);
    expect(tokens.matches(A)).toBe(true);
    expect(tokens.matches(B)).toBe(false);
    expect(await tokens.matchesAfterRefresh(B)).toBe(false);
    expect(tokens.rotates).toBe(false);
  });

  it('after a rotation accepts the new token, and the previous one only during the overlap', async () => {
    const { tokens, secret, logs, advance } = setup();
    secret.set(B);
    await tokens.refresh();
    expect(tokens.current).toBe(B);
    expect(tokens.matches(B)).toBe(true);
    expect(tokens.matches(A)).toBe(true);
    advance(15 * 60_000 - 1);
    expect(tokens.matches(A)).toBe(true);
    advance(1);
    expect(tokens.matches(A)).toBe(false);
    expect(tokens.matches(B)).toBe(true);
    const rotated = logs.lines.find((l) => l.event === 'operator_token.rotated');
    expect(rotated).toMatchObject({ reason: 'timer', source: secret.source.name });
    expect(JSON.stringify(logs.lines)).not.toContain(B);
  });

  it('an unknown token re-reads the source at most once per gap, so a client with the new token gets in', async () => {
    const { tokens, secret, advance } = setup();
    expect(await tokens.matchesAfterRefresh('wrong-token-0123456789')).toBe(false);
    // Read at construction: within the gap, nothing is read.
    expect(secret.reads()).toBe(0);
    advance(30_000);
    expect(await tokens.matchesAfterRefresh('wrong-token-0123456789')).toBe(false);
    expect(secret.reads()).toBe(1);
    secret.set(B);
    // Many wrong tokens in the gap: no more reads (a caller cannot make boa hammer Secrets Manager).
    for (let i = 0; i < 50; i++) expect(await tokens.matchesAfterRefresh(B)).toBe(false);
    expect(secret.reads()).toBe(1);
    advance(30_000);
    expect(await tokens.matchesAfterRefresh(B)).toBe(true);
    expect(secret.reads()).toBe(2);
  });

  it('concurrent refreshes share one read', async () => {
    const { tokens, secret } = setup();
    secret.set(B);
    await Promise.all([tokens.refresh(), tokens.refresh(), tokens.refresh()]);
    expect(secret.reads()).toBe(1);
  });

  it('requests that bring the new token while a read is under way wait for it, and all get in', async () => {
    // The dashboard sends eight requests at once with a token just pasted: one starts the read (the
    // gap has passed), the others arrive while Secrets Manager has not answered yet.
    let now = Date.UTC(2026, 10, 1);
    let answer: (token: string) => void = () => {};
    let reads = 0;
    const slow: TokenSource = {
      name: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:boa-operator-token-AbCdEf',
      read: () => {
        reads++;
        return new Promise<string>((resolve) => (answer = resolve));
      },
    };
    const slowTokens = new OperatorToken(A, {
      source: slow,
      clock: { now: () => now },
      logger: pino({ level: 'silent' }),
      unknownTokenRefreshGapMs: 30_000,
    });
    now += 30_000;
    const [first, ...rest] = Array.from({ length: 8 }, () => slowTokens.matchesAfterRefresh(B));
    answer(B);
    expect(await first).toBe(true);
    expect(await Promise.all(rest)).toEqual(Array(7).fill(true));
    expect(reads).toBe(1);
    // A timer read under way counts too: a client with the next token waits for it rather than a 401.
    const timer = slowTokens.refresh('timer');
    const waiting = slowTokens.matchesAfterRefresh('token-c-0123456789abcdef');
    answer('token-c-0123456789abcdef');
    await timer;
    expect(await waiting).toBe(true);
  });

  it('a failed read keeps the known token in force and is logged', async () => {
    const { tokens, secret, logs } = setup();
    secret.set(new Error('AccessDeniedException: not authorized'));
    await tokens.refresh();
    expect(tokens.matches(A)).toBe(true);
    expect(logs.lines.find((l) => l.event === 'operator_token.read_failed')).toMatchObject({
      error: 'AccessDeniedException: not authorized',
    });
  });

  it('re-reads on its timer once started, and stops', async () => {
    const secret = rotatingSource(A);
    const tokens = new OperatorToken(A, {
      source: secret.source,
      clock: { now: Date.now },
      logger: pino({ level: 'silent' }),
      refreshMs: 20,
    });
    secret.set(B);
    tokens.start();
    try {
      const deadline = Date.now() + 10_000;
      while (tokens.current !== B && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(tokens.current).toBe(B);
    } finally {
      tokens.stop();
    }
    const reads = secret.reads();
    await new Promise((r) => setTimeout(r, 100));
    expect(secret.reads()).toBe(reads);
  });
});
