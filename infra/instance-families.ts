/** The GPU instance families the CDK app's node group can run. */

/**
 * The instance families the GPU node group's AMI (EKS AL2023 NVIDIA, x86_64) supports, as AWS lists them
 * in "Use EKS-optimized accelerated AMIs for GPU instances"
 * (docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html, read 2026-12). An allowlist, not a
 * pattern: older NVIDIA families (p2, g3) would deploy and be paid for while the AMI's driver cannot use
 * their GPUs, and g4ad (AMD), g5g and p6e-gb200/gb300 (Arm) are not x86 NVIDIA at all. EKS itself refuses
 * some of these only at deploy time, others not at all. A family AWS adds later must be added here.
 */
export const NVIDIA_X86_FAMILIES: readonly string[] = [
  'p6-b300',
  'p6-b200',
  'p5',
  'p5e',
  'p5en',
  'p4d',
  'p4de',
  'p3',
  'p3dn',
  'g7e',
  'gr6',
  'g6',
  'g6e',
  'g5',
  'g4dn',
];

/**
 * On the AMI's list, but each instance has a fraction of one L4 GPU: boa's widths count whole GPUs, and
 * no gpusPerNode would say what such a node holds (found in review).
 */
export const FRACTIONAL_GPU_FAMILIES: readonly string[] = ['g6f', 'gr6f'];

/** The family of an instance type: everything before the size, dashes kept (p6-b200.48xlarge: p6-b200). */
export function instanceFamily(instanceType: string): string {
  return instanceType.slice(0, instanceType.indexOf('.'));
}
