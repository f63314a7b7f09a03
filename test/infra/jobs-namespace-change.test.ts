/**
 * A new jobsNamespace on a deployed stack: the deploy updates the namespace's resource with
 * `kubectl apply`, and must not prune the old namespace, which holds the running jobs' pods and the
 * users' checkpoint claims (docs/deploy.md, Settings).
 */
import { describe, expect, it } from 'vitest';
import { type Resource, synthTemplate } from './synth.ts';

/** The logical ID deployed stacks have: a new one would be a create of a namespace that exists. */
const DEPLOYED_ID = 'EksClustermanifestJobsNamespace932C548F';

function jobsNamespaceResource(jobsNamespace?: string): Resource {
  const template = synthTemplate(jobsNamespace ? { jobsNamespace } : {});
  return template.toJSON().Resources[DEPLOYED_ID] as Resource;
}

describe('changing jobsNamespace', () => {
  it('updates the same resource, so a deployed stack applies the new namespace rather than creating it', () => {
    const before = jobsNamespaceResource();
    const after = jobsNamespaceResource('training');
    expect(before.Type).toBe('Custom::AWSCDK-EKS-KubernetesResource');
    expect(JSON.parse(before.Properties.Manifest)[0].metadata.name).toBe('boa-jobs');
    expect(JSON.parse(after.Properties.Manifest)[0].metadata.name).toBe('training');
  });

  it('never prunes the old namespace with its pods and claims', () => {
    // Found in a deploy review: the update ran `kubectl apply --prune -l <label>`, and the old
    // namespace carried the label, so it was deleted with everything in it.
    const resource = jobsNamespaceResource('training');
    expect(resource.Properties).not.toHaveProperty('PruneLabel');
    const labels = JSON.parse(resource.Properties.Manifest)[0].metadata.labels;
    expect(Object.keys(labels).filter((key) => key.startsWith('aws.cdk.eks/prune-'))).toEqual([]);
  });
});
