import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileDurably } from '../cloud/durable-file.ts';

const newInstanceId = () => `boa-${randomUUID()}`;

const IN_MEMORY_ID = newInstanceId();

/** The file in the data dir holding this boa's instance id. */
export const INSTANCE_ID_FILE = 'instance-id';

/**
 * This boa's id, which its claim on the Kubernetes jobs namespace names (kubernetes/namespace-claim.ts):
 * made once and kept in the data dir beside the database, not in it, as the highest job id is (store/
 * job-ids.ts): a database started afresh (--init) or rolled back to a copy is still the same boa, whose
 * pods are in the namespace, and must not find itself locked out of it by its own claim. An in-memory
 * store (tests, trials) has no data dir: every start in this process is one boa.
 */
export function instanceIdOf(dataDir: string): string {
  if (dataDir === ':memory:') return IN_MEMORY_ID;
  const file = join(dataDir, INSTANCE_ID_FILE);
  // Empty: its first write cut short (a crash, a full disk); no claim can name an empty id yet.
  const stored = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (stored !== '') return stored;
  const made = newInstanceId();
  writeFileDurably(file, `${made}\n`);
  return made;
}
