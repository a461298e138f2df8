import type { Config } from 'jest';

const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2024' },
    module: { type: 'es6' },
  },
] as const;

const config: Config = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc as unknown as [string, Record<string, unknown>] },
  testMatch: [
    '<rootDir>/apps/*/src/**/*.test.ts',
    '<rootDir>/packages/*/src/**/*.test.ts',
    '<rootDir>/test/**/*.test.ts',
  ],
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/after-file.ts'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30_000,
};

export default config;
