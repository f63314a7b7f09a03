/** Reading boa's labels back (src/cloud/kubernetes/names.ts): only what boa itself writes is an id. */
import { expect, it } from 'vitest';
import { identityOf, LABELS } from '../../src/cloud/kubernetes/names.ts';

const labels = (jobId: string, generation = '2', rank = '0') => ({
  [LABELS.jobId]: jobId,
  [LABELS.generation]: generation,
  [LABELS.rank]: rank,
});

it("reads a replica pod's job, generation and rank from its labels", () => {
  expect(identityOf(labels('12', '3', '1'))).toEqual({ jobId: 12, generation: 3, rank: 1 });
  expect(identityOf(labels('999999999999999'))).toMatchObject({ jobId: 999_999_999_999_999 });
});

it('takes no label made by hand for an id: exponents, hex, signs, more than 15 digits, missing ones', () => {
  for (const jobId of ['1e15', '0x10', '-1', '+3', ' 4', '9007199254740993', '1234567890123456', ''])
    expect(identityOf(labels(jobId)), jobId).toBeUndefined();
  expect(identityOf(labels('1', '1.5'))).toBeUndefined();
  expect(identityOf({ [LABELS.jobId]: '1', [LABELS.generation]: '1' })).toBeUndefined();
  expect(identityOf(undefined)).toBeUndefined();
});
