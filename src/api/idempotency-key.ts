import { z } from '@hono/zod-openapi';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_RULE as ALLOWED } from '../core/idempotency-key.ts';

/**
 * The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header), taken as an opaque
 * string: the draft's quoted form ("k") works too, its quotes part of the key. Printable ASCII only, so
 * the key can be echoed in messages and logs as it is.
 */
export const IdempotencyKeyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1, `Idempotency-Key is empty; it must be ${ALLOWED}`)
    .max(IDEMPOTENCY_KEY_MAX, `Idempotency-Key is too long; it must be ${ALLOWED}`)
    .regex(
      /^[\x20-\x7e]*$/,
      `Idempotency-Key has a character that is not printable ASCII; it must be ${ALLOWED}`,
    )
    .optional()
    .openapi({
      description:
        `${ALLOWED}. A submission repeated with the same key (a retry after a timeout) creates no second ` +
        'job: it answers with the first one and the header Idempotent-Replayed: true; the same key with a ' +
        'different body is refused with 422',
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    }),
});
