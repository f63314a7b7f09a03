import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-tmp.ts'],
    // Two cores: keep parallelism modest so property tests and CLI tests do not starve each other.
    maxWorkers: 2,
    testTimeout: 60_000,
    // Hooks stop services, browsers and process groups: on a loaded machine (CI at half speed) one
    // took past vitest's default 10 s (dashboard-log.test.ts's afterEach). One that hangs still fails.
    hookTimeout: 60_000,
    // expect.poll's own default is 1 s, which a loaded CI machine ran out of (28 sites found and each
    // given 20-30 s): the default for new ones. A poll returns as soon as its condition holds.
    expect: { poll: { timeout: 20_000 } },
    env: {
      // The AWS SDK warns once per process that releases after January 2027 need Node 22. Tests run
      // on Node 20 on purpose (the oldest Node in `engines`); the deploy image runs Node 22, where the
      // SDK says nothing. The SDK's own switch for this warning:
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
