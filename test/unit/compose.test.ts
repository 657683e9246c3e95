// docker-compose.yml cannot run here (no Docker engine); this checks that it parses, uses the
// stack versions of STACK.md, and runs every role of the service.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ALL_ROLES } from '../../src/config';
import { SECRET_NAMES } from '../../src/secrets';

describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docker-compose.yml'), 'utf8'));
  const services: Record<string, any> = compose.services;

  it('declares the four stack components', () => {
    const images = Object.values(services).map((s) => s.image ?? '');
    for (const image of ['postgres:15', 'redis:7', 'apache/kafka:4.1.1', 'apicurio/apicurio-registry:3.3.3']) {
      assert.ok(images.includes(image), `${image} is missing`);
    }
  });

  const rolesOf = (service: any): string[] => {
    const env = service.environment ?? {};
    const roles: string | undefined = Array.isArray(env) ? env.find((e: string) => e.startsWith('ROLES='))?.slice(6) : env.ROLES;
    return roles ? roles.split(',').map((r) => r.trim()) : [];
  };

  it('runs every role of the service, each in a service with a health check', () => {
    const roleServices = Object.entries(services).filter(([, s]) => rolesOf(s).length > 0);
    const roles = roleServices.flatMap(([, s]) => rolesOf(s));
    for (const role of ALL_ROLES) assert.ok(roles.includes(role), `role ${role} has no service`);
    for (const [name, service] of roleServices) assert.ok(service.healthcheck, `${name} has no health check`);
  });

  it('gives each stack component a health check the roles wait for', () => {
    for (const [name, service] of Object.entries(services)) {
      if (rolesOf(service).length > 0 || service.restart === 'no') continue; // roles, and one-shot set-up jobs
      assert.ok(service.healthcheck, `${name} has no health check`);
    }
  });

  it('gives every role its secrets from the kept volume, none written in the file', () => {
    for (const [name, service] of Object.entries(services).filter(([, s]) => rolesOf(s).length > 0)) {
      assert.deepEqual(service.entrypoint, ['bash', 'scripts/container-start.sh'], `${name} does not start through scripts/container-start.sh`);
      assert.ok((service.volumes ?? []).includes('secrets:/run/payments-secrets'), `${name} does not mount the secrets volume`);
      for (const secret of SECRET_NAMES) assert.equal(service.environment?.[secret], undefined, `${name} sets ${secret} in the file`);
    }
    assert.ok('secrets' in compose.volumes);
  });
});
