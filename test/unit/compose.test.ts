// docker-compose.yml cannot run here (no Docker engine); this checks that it parses, uses the
// stack versions of STACK.md, and runs every role of the service.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ALL_ROLES } from '../../src/config';

describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docker-compose.yml'), 'utf8'));
  const services: Record<string, any> = compose.services;

  it('declares the four stack components', () => {
    const images = Object.values(services).map((s) => s.image ?? '');
    for (const image of ['postgres:15', 'redis:7', 'apache/kafka:4.1.1', 'apicurio/apicurio-registry:3.3.3']) {
      assert.ok(images.includes(image), `${image} is missing`);
    }
  });

  it('runs every role of the service as its own service with a health check', () => {
    const roles = Object.values(services).map((s) => {
      const env = s.environment ?? {};
      return Array.isArray(env) ? env.find((e: string) => e.startsWith('ROLES='))?.slice(6) : env.ROLES;
    }).filter(Boolean);
    for (const role of ALL_ROLES) assert.ok(roles.includes(role), `role ${role} has no service`);
    for (const [name, service] of Object.entries(services)) assert.ok(service.healthcheck, `${name} has no health check`);
  });
});
