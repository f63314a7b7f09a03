import { spawnSync } from 'node:child_process';

const probed = new Map<string, boolean>();

/**
 * Whether `python` has torch: find_spec, not `import torch` (several seconds on a loaded machine; the
 * PyTorch tests then import it anyway, and fail loudly on a broken install rather than being skipped).
 * Each Python is probed once.
 */
export function hasTorch(python: string): boolean {
  let has = probed.get(python);
  if (has === undefined) {
    const probe = 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)';
    has = spawnSync(python, ['-c', probe]).status === 0;
    probed.set(python, has);
  }
  return has;
}

/**
 * A Python with torch for examples/pytorch/train.py: BOA_TORCH_PYTHON when set (only it), else the first
 * of python3 and Debian's /usr/bin/python3 (its python3-torch, where python3 is pyenv's without torch)
 * that has it, so the PyTorch tests run wherever torch is and are skipped elsewhere. Probed once, only by
 * the tests that need it (about 0.1 s a Python, 0.7 s through pyenv's shim).
 */
export function findTorchPython(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = env.BOA_TORCH_PYTHON;
  const candidates = given ? [given] : ['python3', '/usr/bin/python3'];
  return candidates.find(hasTorch);
}
