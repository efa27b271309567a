import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { PERMISSIONS } from '../src/schemas/permissions.ts';
import { client, startTestService, type TestService } from './helpers.ts';

const run = promisify(execFile);
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

it('org create prints one JSON line with an admin key that works against the running service', async () => {
  const { stdout } = await run('npm', ['run', 'cli', '--', 'org', 'create', 'Acme Widgets'], {
    env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, cwd: process.cwd(),
  });
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const org = JSON.parse(lines[0]!);
  expect(Object.keys(org).sort()).toEqual(['name', 'org_id', 'token']);
  expect(org.name).toBe('Acme Widgets');
  expect(org.token).toMatch(/^sk_/);
  const api = client(svc.url, org.token);
  expect((await api.post('/api/v1/rest/agents', { name: 'Via CLI' })).status).toBe(201);
  // The admin key holds every permission there is.
  expect([...(await api.get('/api/v1/rest/api-keys')).body.data[0].permissions].sort()).toEqual([...PERMISSIONS].sort());
});

it('refuses a wrong command with usage on stderr and exit code 2', async () => {
  const err = await run('node', ['--import', 'tsx', 'src/cli.ts', 'org', 'delete', 'x'], {
    env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
  }).catch((e: { code: number; stderr: string; stdout: string }) => e);
  expect((err as { code: number }).code).toBe(2);
  expect((err as { stderr: string }).stderr).toMatch(/usage: npm run cli -- org create NAME/);
  expect((err as { stdout: string }).stdout).toBe('');
});
