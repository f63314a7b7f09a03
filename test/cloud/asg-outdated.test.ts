import { describe, expect, it } from 'vitest';
import { outdatedInstances } from '../../src/cloud/aws/asg.ts';

const byName = { LaunchTemplateName: 'eks-gpu' };
const both = { LaunchTemplateId: 'lt-0abc', LaunchTemplateName: 'eks-gpu' };

describe('outdatedInstances (the nodes an EKS update replaces)', () => {
  it('compares the template by id only when both name one: by name the same template is not outdated', () => {
    const group = {
      LaunchTemplate: { ...byName, Version: '2' },
      Instances: [
        { InstanceId: 'i-new', LaunchTemplate: { ...both, Version: '2' } },
        { InstanceId: 'i-old', LaunchTemplate: { ...both, Version: '1' } },
      ],
    };
    expect([...outdatedInstances(group as never)]).toEqual(['i-old']);
  });

  it("reads a MixedInstancesPolicy's template (EKS managed groups), another template as outdated", () => {
    const group = {
      MixedInstancesPolicy: { LaunchTemplate: { LaunchTemplateSpecification: { ...both, Version: '3' } } },
      Instances: [
        { InstanceId: 'i-new', LaunchTemplate: { ...both, Version: '3' } },
        { InstanceId: 'i-other', LaunchTemplate: { LaunchTemplateId: 'lt-0def', Version: '3' } },
        { InstanceId: 'i-no-template' },
      ],
    };
    expect([...outdatedInstances(group as never)]).toEqual(['i-other']);
  });

  it('names none with a version that is no number ($Latest, $Default) or no group', () => {
    const instances = [{ InstanceId: 'i-1', LaunchTemplate: { ...both, Version: '1' } }];
    for (const Version of ['$Latest', '$Default', undefined])
      expect(
        outdatedInstances({ LaunchTemplate: { ...both, Version }, Instances: instances } as never).size,
      ).toBe(0);
    expect(outdatedInstances(undefined).size).toBe(0);
  });
});
