/**
 * A refused request says in plain words what is wrong with which field: an unknown field names the
 * fields taken, a missing one says so, a bad number says what it must be (not zod's own wording).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const STATE_MESSAGE =
  'state must be one of "waiting", "running", "done", "cancelled", "failed", "lost", or several separated by commas';

describe('validation errors', () => {
  it.each([
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', nmae: 'x' },
      'nmae',
      'unknown field "nmae"; the fields are class, name, workload',
    ],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], envs: {} } },
      'workload.envs',
      'workload: unknown field "envs"; the fields are image, command, args, env, workingDir, cpuPerGpu, memoryPerGpu, checkpoint',
    ],
    ['POST', '/v1/jobs', {}, 'class', 'class is missing (a string)'],
    ['PUT', '/v1/classes/cifar10', {}, 'profile', 'profile is missing (an object)'],
    ['PUT', '/v1/classes/cifar10', { profile: [] }, 'profile', 'profile must be an object, not an array'],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: 'node x' } },
      'workload.command',
      'workload.command must be an array, not a string',
    ],
    ['PUT', '/v1/budget', { budget: 40 }, 'budget', 'unknown field "budget"; the fields are gpuHoursPerHour'],
    // A budget of "40", -5 or 0 also names the smallest accepted one: budget-value-refused.test.ts.
    // JSON.parse reads a number past the doubles as Infinity.
    [
      'PUT',
      '/v1/budget',
      '{"gpuHoursPerHour":1e400}',
      'gpuHoursPerHour',
      'gpuHoursPerHour must be a finite number',
    ],
    [
      'GET',
      '/v1/jobs/abc',
      undefined,
      'id',
      'id must be a whole number in decimal digits (e.g. 20), got "abc"',
    ],
    // Decimal digits only: Number() would read these as jobs 20, 20 and 10.
    [
      'GET',
      '/v1/jobs/0x14',
      undefined,
      'id',
      'id must be a whole number in decimal digits (e.g. 20), got "0x14"',
    ],
    [
      'GET',
      '/v1/jobs/0b10100',
      undefined,
      'id',
      'id must be a whole number in decimal digits (e.g. 20), got "0b10100"',
    ],
    [
      'GET',
      '/v1/jobs/1e1',
      undefined,
      'id',
      'id must be a whole number in decimal digits (e.g. 20), got "1e1"',
    ],
    [
      'DELETE',
      '/v1/history/0x1',
      undefined,
      'id',
      'id must be a whole number in decimal digits (e.g. 20), got "0x1"',
    ],
    ['GET', '/v1/jobs?limit=2&limit=3', undefined, 'limit', 'limit given more than once: give it once'],
    // Any parameter, not only a number: these were refused as a value of the wrong kind ("order must be
    // one of ...", naming a value it takes; "name must be a string, not an array").
    [
      'GET',
      '/v1/jobs?order=ended&order=ended',
      undefined,
      'order',
      'order given more than once: give it once',
    ],
    ['GET', '/v1/jobs?name=a&name=b', undefined, 'name', 'name given more than once: give it once'],
    [
      'GET',
      '/v1/frontier?format=json&format=svg',
      undefined,
      'format',
      'format given more than once: give it once',
    ],
    [
      'GET',
      '/v1/jobs/1/logs?follow=true&follow=false',
      undefined,
      'follow',
      'follow given more than once: give it once',
    ],
    // A number out of range says the whole range, whichever side it is out on ("must be >= 1" did not say
    // the most taken).
    ['GET', '/v1/ledger?points=0', undefined, 'points', 'points must be a whole number from 1 to 500'],
    ['GET', '/v1/ledger?points=501', undefined, 'points', 'points must be a whole number from 1 to 500'],
    ['GET', '/v1/resizes?limit=0', undefined, 'limit', 'limit must be a whole number from 1 to 100'],
    ['GET', '/v1/jobs/0', undefined, 'id', 'id must be a whole number from 1 to 9007199254740991'],
    // Numbers in a body too.
    [
      'POST',
      '/v1/jobs/1/progress',
      { statEpoch: -1 },
      'statEpoch',
      'statEpoch must be a whole number from 0 to 1000',
    ],
    [
      'POST',
      '/v1/jobs/1/progress',
      { statEpoch: 0, workDoneSeconds: 2e9 },
      'workDoneSeconds',
      'workDoneSeconds must be a number from 0 to 1000000000',
    ],
    [
      'POST',
      '/v1/jobs/1/progress',
      { statEpoch: 0, generation: 1.5 },
      'generation',
      'generation must be a whole number from 0 to 9007199254740991',
    ],
    [
      'POST',
      '/v1/jobs/1/progress',
      { statEpoch: 0, sequence: { sender: 'a1', number: -1 } },
      'sequence.number',
      'sequence.number must be a whole number from 0 to 9007199254740991',
    ],
    [
      'PUT',
      '/v1/classes/cifar10',
      { profile: {}, priorRatePerHour: -1 },
      'priorRatePerHour',
      'priorRatePerHour must be a number from 0 to 100000',
    ],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], cpuPerGpu: 0 } },
      'workload.cpuPerGpu',
      'workload.cpuPerGpu must be a number above 0 and at most 1024',
    ],
    [
      'POST',
      '/v1/history',
      { arrivals: [{ className: 'cifar10', submittedAt: -5 }] },
      'arrivals.0.submittedAt',
      'arrivals.0.submittedAt must be milliseconds since 1970, a whole number from 0 to 8640000000000000, or an ISO 8601 date-time with its offset',
    ],
    [
      'GET',
      '/v1/ledger?hours=0',
      undefined,
      'hours',
      'hours must be a number above 0 and at most 744 (31 days)',
    ],
    [
      'GET',
      '/v1/ledger?hours=745',
      undefined,
      'hours',
      'hours must be a number above 0 and at most 744 (31 days)',
    ],
    ['POST', '/v1/jobs', { class: 'cifar10', name: '   ' }, 'name', 'name must hold more than spaces'],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', name: ' r18' },
      'name',
      'name must not begin or end with a space',
    ],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', name: 'r18 ' },
      'name',
      'name must not begin or end with a space',
    ],
    [
      'POST',
      '/v1/history',
      { arrivals: [{ className: 'cifar10', submittedAt: null }] },
      'arrivals.0.submittedAt',
      'arrivals.0.submittedAt must be milliseconds since 1970 or an ISO 8601 date-time with its offset, e.g. 2026-11-27T09:30:00Z',
    ],
    [
      'POST',
      '/v1/history',
      { observedFrom: '0000-01-01T00:00:00Z', arrivals: [{ className: 'cifar10', submittedAt: 0 }] },
      'observedFrom',
      'observedFrom must be from 1970-01-01T00:00:00Z on (milliseconds since then, or a date-time)',
    ],
    [
      'GET',
      '/v1/jobs?limit=0x10',
      undefined,
      'limit',
      'limit must be a number in decimal digits (e.g. 20), got "0x10"',
    ],
    [
      'GET',
      '/v1/ledger?points=1e2',
      undefined,
      'points',
      'points must be a number in decimal digits (e.g. 20), got "1e2"',
    ],
    ['GET', '/v1/jobs?limit=0', undefined, 'limit', 'limit must be a whole number from 1 to 10000'],
    ['GET', '/v1/jobs?limit=1.5', undefined, 'limit', 'limit must be a whole number from 1 to 10000'],
    ['GET', '/v1/jobs?state=sleeping', undefined, 'state', STATE_MESSAGE],
    ['GET', '/v1/jobs?state=waiting,sleeping', undefined, 'state', STATE_MESSAGE],
    ['GET', '/v1/jobs?state=waiting,', undefined, 'state', STATE_MESSAGE],
    // A string or a list of the wrong length says its bounds in words, not zod's "Too small: ...".
    ['POST', '/v1/jobs', { class: 'cifar10', name: '' }, 'name', 'name must not be empty'],
    ['GET', '/v1/jobs?name=', undefined, 'name', 'name must not be empty'],
    [
      'GET',
      '/v1/jobs/1/logs?rank=',
      undefined,
      'rank',
      'rank must be a number in decimal digits (e.g. 20), got ""',
    ],
    ['GET', '/v1/jobs/1/logs?rank=-1', undefined, 'rank', 'rank must be a whole number from 0 to 10000'],
    [
      'GET',
      '/v1/jobs/1/logs?tail=',
      undefined,
      'tail',
      'tail must be a number in decimal digits (e.g. 20), got ""',
    ],
    [
      'GET',
      '/v1/jobs/1/logs?follow=true&skip=5',
      undefined,
      'skip',
      'skip counts bytes past a cursor: give the cursor too',
    ],
    [
      'GET',
      '/v1/jobs/1/logs?cursor=start',
      undefined,
      'cursor',
      'cursor says where a followed log goes on from: give follow=true too',
    ],
    [
      'GET',
      `/v1/jobs/1/logs?follow=true&cursor=${'9'.repeat(65)}`,
      undefined,
      'cursor',
      'cursor must be at most 64 characters',
    ],
    // Past the doubles' whole numbers: the parameter's own range, not zod's 2^53.
    [
      'GET',
      '/v1/jobs/1/logs?tail=99999999999999999999',
      undefined,
      'tail',
      'tail must be a whole number from 1 to 10000',
    ],
    [
      'GET',
      '/v1/jobs?limit=99999999999999999999',
      undefined,
      'limit',
      'limit must be a whole number from 1 to 10000',
    ],
    [
      'GET',
      '/v1/jobs/99999999999999999999',
      undefined,
      'id',
      'id must be a whole number from 1 to 9007199254740991',
    ],
    // A record's key: the schema's own words for it, not zod's "Invalid key in record".
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: { 'A=B': 'x' } } },
      'workload.env.A=B',
      'workload.env.A=B: environment variable names are letters, digits and _, not starting with a digit',
    ],
    // A variable boa sets per generation: given, it was overridden without a word.
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: { WORLD_SIZE: '5' } } },
      'workload.env.WORLD_SIZE',
      'workload.env.WORLD_SIZE: WORLD_SIZE cannot be given: boa sets BOA_URL, BOA_URL_FILE, BOA_JOB_ID, BOA_JOB_TOKEN, BOA_GENERATION, BOA_FIRST_RANK, BOA_SIGTERM_FILE, WORLD_SIZE, NNODES, NODE_RANK, NPROC_PER_NODE, MASTER_ADDR, MASTER_PORT itself, for each generation (WORLD_SIZE is the width boa chooses)',
    ],
    [
      'POST',
      '/v1/jobs',
      {
        class: 'cifar10',
        workload: { command: ['node'], env: { BOA_CHECKPOINT_DIR: '/x', BOA_JOB_TOKEN: 't' } },
      },
      'workload.env.BOA_JOB_TOKEN',
      'workload.env.BOA_JOB_TOKEN: BOA_JOB_TOKEN cannot be given: boa sets BOA_URL, BOA_URL_FILE, BOA_JOB_ID, BOA_JOB_TOKEN, BOA_GENERATION, BOA_FIRST_RANK, BOA_SIGTERM_FILE, WORLD_SIZE, NNODES, NODE_RANK, NPROC_PER_NODE, MASTER_ADDR, MASTER_PORT itself, for each generation (WORLD_SIZE is the width boa chooses)',
    ],
    // Letters and digits alone, but a digit first: the rule says so (it read as letters and digits).
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: { '1A': 'x' } } },
      'workload.env.1A',
      'workload.env.1A: environment variable names are letters, digits and _, not starting with a digit',
    ],
    ['GET', `/v1/jobs?name=${'n'.repeat(201)}`, undefined, 'name', 'name must be at most 200 characters'],
    ['POST', '/v1/history', { arrivals: [] }, 'arrivals', 'arrivals must have at least 1 item'],
    // A message the schema wrote itself is kept as it is.
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: { EPOCHS: 90 } } },
      'workload.env.EPOCHS',
      'workload.env.EPOCHS: environment values must be strings',
    ],
    // No process can be given a NUL: the job could never start and would hold its GPUs until it failed.
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], args: ['a\u0000b'] } },
      'workload.args.0',
      'workload.args.0: each argument must not contain a NUL character (\\u0000)',
    ],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: { A: 'a\u0000b' } } },
      'workload.env.A',
      'workload.env.A: environment values must not contain a NUL character (\\u0000)',
    ],
    // Every string has a bound of its own, not only the body's 64 KiB.
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], memoryPerGpu: '1'.repeat(65) } },
      'workload.memoryPerGpu',
      'workload.memoryPerGpu: memoryPerGpu is longer than 64 characters',
    ],
    // JSON's own key, which JavaScript objects cannot hold as data: refused, not silently dropped.
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['node'], env: JSON.parse('{"__proto__":"x","A":"a"}') } },
      'workload.env.__proto__',
      'workload.env.__proto__: __proto__ cannot be given as a field or a name',
    ],
    [
      'POST',
      '/v1/jobs',
      { class: 'cifar10', workload: { command: ['no\u0000de'] } },
      'workload.command.0',
      'workload.command.0: each command word must not contain a NUL character (\\u0000)',
    ],
  ])('%s %s %j: 400 naming %s', async (method, path, body, field, message) => {
    boa = await startService();
    const res = await boa.request(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid', field, message });
    expect((await boa.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });
});

describe('a body nested thousands deep', () => {
  it('is refused as any wrong body, not a 500, and costs nothing before the token check', async () => {
    boa = await startService();
    const deep = `{"class":"cifar10","workload":{"command":["node"],"env":{"A":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
    const res = await boa.request('POST', '/v1/jobs', deep);
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('workload.env.A');
    const anonymous = await boa.app.request('/nothing-here', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `${'['.repeat(5000)}${']'.repeat(5000)}`,
    });
    expect(anonymous.status).toBe(404);
  });
});

describe('a body that is not sent as JSON', () => {
  it.each([
    ['application/x-www-form-urlencoded', '"application/x-www-form-urlencoded"'], // what curl -d sends
    ['text/plain', '"text/plain"'],
    [undefined, 'none'],
  ])('with Content-Type %s: 415 saying to send application/json', async (type, got) => {
    boa = await startService();
    const res = await boa.app.request('/v1/jobs', {
      method: 'POST',
      headers: { authorization: `Bearer ${boa.token}`, ...(type ? { 'content-type': type } : {}) },
      body: new TextEncoder().encode('{"class":"cifar10"}'),
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      error: {
        code: 'unsupported_media_type',
        message: `the body must be JSON: send Content-Type: application/json (got ${got})`,
      },
    });
    expect((await boa.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });
});

describe('a body sent as JSON that does not parse', () => {
  // Found trying the API with curl: both were answered "Malformed JSON in request body", nothing more.
  it.each([
    [
      '{class: "cifar10"}',
      /^the body is not JSON \(.*position 1.*\): send one JSON object, its names and strings in double quotes/,
    ],
    ['', /^the body is not JSON \(it is empty\): send one JSON object/],
  ])('%j: 400 saying why, in the parser words', async (body, message) => {
    boa = await startService();
    const res = await boa.request('POST', '/v1/jobs', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid');
    expect(res.body.error.message).toMatch(message);
    expect((await boa.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  });
});
