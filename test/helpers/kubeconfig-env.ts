import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * KUBECONFIG pointing at a fake API server, as a cluster admin's would (and no in-cluster address);
 * `cleanups` gets what restores the environment and removes the file.
 */
export function useKubeconfig(exported: string, cleanups: Array<() => Promise<void> | void>): void {
  const dir = mkdtempSync(join(tmpdir(), 'boa-kubeconfig-'));
  writeFileSync(join(dir, 'config'), exported);
  const saved = {
    KUBECONFIG: process.env.KUBECONFIG,
    KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST,
  };
  process.env.KUBECONFIG = join(dir, 'config');
  delete process.env.KUBERNETES_SERVICE_HOST;
  cleanups.push(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  });
}
