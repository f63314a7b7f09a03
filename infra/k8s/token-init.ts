import { createHash } from 'node:crypto';

/** The Kubernetes Secret that holds boa's operator bearer token, under the key `token` (BOA_TOKEN). */
export const TOKEN_SECRET = { name: 'boa-token', key: 'token' } as const;

/** A small public image with Node (ECR Public's mirror of Docker's official image: no Docker Hub limits). */
export const TOKEN_INIT_IMAGE = 'public.ecr.aws/docker/library/node:20-alpine';

/**
 * Runs in the cluster once: creates the token Secret with 32 random bytes (base64url) unless it exists,
 * talking to the Kubernetes API with the Job's service-account token. The token is generated inside the
 * cluster, so it never appears in a CloudFormation template, a Lambda event or a log. An existing Secret
 * (one the operator made, or one from an earlier deploy) is left as it is.
 *
 * Settings come from the environment: SECRET_NAMESPACE, SECRET_NAME, SECRET_KEY, and for tests K8S_API and
 * SA_TOKEN_FILE (in a pod the API address and token are the standard in-cluster ones).
 */
export const TOKEN_INIT_SCRIPT = `
const fs = require('node:fs');
const crypto = require('node:crypto');
const env = process.env;
const api = env.K8S_API || 'https://' + env.KUBERNETES_SERVICE_HOST + ':' + env.KUBERNETES_SERVICE_PORT;
const tokenFile = env.SA_TOKEN_FILE || '/var/run/secrets/kubernetes.io/serviceaccount/token';
const name = env.SECRET_NAME;
const key = env.SECRET_KEY || 'token';
const base = api + '/api/v1/namespaces/' + env.SECRET_NAMESPACE + '/secrets';
async function main() {
  const headers = {
    authorization: 'Bearer ' + fs.readFileSync(tokenFile, 'utf8').trim(),
    'content-type': 'application/json',
  };
  const found = await fetch(base + '/' + name, { headers });
  if (found.status === 200) return console.log('secret ' + name + ' exists; left as it is');
  if (found.status !== 404) throw new Error('GET secret: HTTP ' + found.status + ' ' + (await found.text()));
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name, labels: { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'token' } },
    stringData: { [key]: crypto.randomBytes(32).toString('base64url') },
  };
  const made = await fetch(base, { method: 'POST', headers, body: JSON.stringify(secret) });
  if (made.status === 409) return console.log('secret ' + name + ' was created meanwhile; left as it is');
  if (made.status !== 201) throw new Error('POST secret: HTTP ' + made.status + ' ' + (await made.text()));
  console.log('secret ' + name + ' created');
}
main().catch((error) => {
  console.error(String(error && error.message ? error.message : error));
  process.exit(1);
});
`.trim();

export interface TokenInitOptions {
  readonly namespace: string;
  /** Node selector for the Job's pod (the system nodes). */
  readonly nodeSelector: Readonly<Record<string, string>>;
}

/**
 * The ServiceAccount, Role (get that Secret, create Secrets, in boa's namespace only), RoleBinding and Job that create
 * the token Secret. The Job's name carries a hash of its spec: a changed Job is a new Job, never an
 * in-place update of an immutable one, and finished Jobs are deleted after an hour.
 */
export function tokenInitManifests(options: TokenInitOptions): Record<string, unknown>[] {
  const { namespace } = options;
  const account = 'boa-token-init';
  const labels = { 'app.kubernetes.io/name': 'boa', 'app.kubernetes.io/component': 'token-init' };
  const podSpec = {
    serviceAccountName: account,
    restartPolicy: 'OnFailure',
    nodeSelector: { ...options.nodeSelector },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [
      {
        name: 'token-init',
        image: TOKEN_INIT_IMAGE,
        command: ['node', '-e', TOKEN_INIT_SCRIPT],
        env: [
          { name: 'SECRET_NAMESPACE', value: namespace },
          { name: 'SECRET_NAME', value: TOKEN_SECRET.name },
          { name: 'SECRET_KEY', value: TOKEN_SECRET.key },
          { name: 'NODE_EXTRA_CA_CERTS', value: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' },
        ],
        resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        },
      },
    ],
  };
  const hash = createHash('sha256').update(JSON.stringify(podSpec)).digest('hex').slice(0, 8);
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: account, namespace, labels },
      rules: [
        { apiGroups: [''], resources: ['secrets'], resourceNames: [TOKEN_SECRET.name], verbs: ['get'] },
        // Kubernetes cannot limit create to a name; the namespace holds no other Secret of boa's.
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: account, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `${account}-${hash}`, namespace, labels },
      spec: {
        backoffLimit: 10,
        ttlSecondsAfterFinished: 3600,
        template: { metadata: { labels }, spec: podSpec },
      },
    },
  ];
}
