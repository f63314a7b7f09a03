// Reads the AWS API calls out of the code, for test/infra/aws-permissions.test.ts: what a call sends is
// its command's name and the SDK package it was imported from (the IAM prefix: infra/aws-calls.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { IAM_PREFIX, type Principal, PRINCIPAL_CODE } from '../../infra/aws-calls.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Source files under `entry` (a file or a folder), declarations left out. */
export function sourceFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (statSync(full).isFile()) return [entry];
  return readdirSync(full, { withFileTypes: true }).flatMap((d) => {
    const child = path.join(entry, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : sourceFiles(child);
    return /\.(ts|mts|mjs|js)$/.test(d.name) && !/\.d\.m?ts$/.test(d.name) ? [child] : [];
  });
}

/** The files whose calls are `principal`'s: under its paths, and under no longer path of another's. */
export function filesOf(principal: Principal): string[] {
  const owner = (file: string) =>
    (Object.entries(PRINCIPAL_CODE) as [Principal, readonly string[]][])
      .flatMap(([p, entries]) =>
        entries.filter((e) => file === e || file.startsWith(`${e}/`)).map((e) => [p, e]),
      )
      .sort((a, b) => b[1]!.length - a[1]!.length)[0]?.[0];
  return PRINCIPAL_CODE[principal].flatMap(sourceFiles).filter((file) => owner(file) === principal);
}

/** A file's code without its comments (which may name calls the code does not make). */
export function codeOf(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

export interface FoundCall {
  readonly action: string;
  readonly file: string;
}

/** The names each `@aws-sdk/client-*` package gives this file (static and dynamic imports). */
function importedNames(text: string): Map<string, string> {
  const names = new Map<string, string>();
  const imports = [
    /import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*['"](@aws-sdk\/client-[\w-]+)['"]/g,
    /\{([^}]*)\}\s*=\s*await\s+import\(\s*['"](@aws-sdk\/client-[\w-]+)['"]\s*\)/g,
  ];
  for (const pattern of imports) {
    for (const [, list, pkg] of text.matchAll(pattern)) {
      for (const item of list!.split(',')) {
        const name = item
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0]!;
        if (name) names.set(name, pkg!);
      }
    }
  }
  return names;
}

/** The aggregated clients (`new EKS({})`, `client.describeSecret(...)`): one class per package. */
const AGGREGATED = new Set(['EKS', 'SecretsManager', 'AutoScaling', 'CloudWatch', 'EC2']);
const OPERATION_VERB =
  /\b(?:eks|client|secretsManager|autoscaling|cloudwatch|ec2)\.((?:describe|update|get|put|list|create|delete|set|terminate|suspend|resume|enable|disable|start|stop|tag|untag|rotate|cancel)[A-Z]\w*)\(/g;

function prefixOf(pkg: string, file: string): string {
  const prefix = IAM_PREFIX[pkg];
  if (!prefix) {
    throw new Error(`${file} imports ${pkg}: add its IAM prefix to IAM_PREFIX in infra/aws-calls.ts`);
  }
  return prefix;
}

/** Every AWS API call written in one file, as the IAM action it needs. */
export function callsInFile(file: string): FoundCall[] {
  const text = codeOf(file);
  const names = importedNames(text);
  const found: FoundCall[] = [];
  const add = (operation: string, pkg: string | undefined, what: string) => {
    if (!pkg) throw new Error(`${file}: ${what} is sent, but from no @aws-sdk/client-* import found here`);
    found.push({ action: `${prefixOf(pkg, file)}:${operation}`, file });
  };
  for (const [, op] of text.matchAll(/\bnew\s+(\w+)Command\s*\(/g)) {
    add(op!, names.get(`${op}Command`), `${op}Command`);
  }
  for (const [, op] of text.matchAll(/\bpaginate(\w+)\s*\(/g)) add(op!, names.get(`paginate${op}`), op!);
  const aggregated = [...names].filter(([name]) => AGGREGATED.has(name));
  if (aggregated.length > 1) throw new Error(`${file}: more than one aggregated AWS client; split it`);
  if (aggregated.length === 1) {
    const pkg = aggregated[0]![1];
    for (const [, method] of text.matchAll(OPERATION_VERB)) {
      add(method![0]!.toUpperCase() + method!.slice(1), pkg, method!);
    }
  }
  // The CDK's AwsCustomResource: { service: 'EKS' (or 'eks', '@aws-sdk/client-eks'), action:
  // 'DescribeNodegroup' (or 'describeNodegroup', 'DescribeNodegroupCommand'), ... }.
  for (const [, service, action] of text.matchAll(/service:\s*'([\w@/-]+)',\s*action:\s*'(\w+)'/g)) {
    const bare = service!.replace('@aws-sdk/client-', '').replaceAll('-', '').toLowerCase();
    const pkg = Object.keys(IAM_PREFIX).find(
      (p) => p.replace('@aws-sdk/client-', '').replaceAll('-', '') === bare,
    );
    const operation = action!.replace(/Command$/, '');
    add(operation[0]!.toUpperCase() + operation.slice(1), pkg, `${service}.${action}`);
  }
  return found;
}
