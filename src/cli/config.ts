// Where payctl keeps what `payctl login` gave it: one JSON file in the user's config directory,
// created readable by its owner alone (mode 0600), a profile per name. A password is never kept:
// an email and password buy a session token, which is kept until it expires.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

export interface Profile {
  baseUrl: string;
  /** An API key (sk_, rk_ or pk_), when logged in with one. */
  apiKey?: string;
  /** A session, when logged in with an email and password. */
  session?: { token: string; expiresAt: string; email: string };
}

interface ConfigFile { profiles: Record<string, Profile> }

/** $XDG_CONFIG_HOME/payctl/config.json, or ~/.config/payctl/config.json. */
export function configPath(env = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'payctl', 'config.json');
}

function read(file: string): ConfigFile {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ConfigFile>;
    return { profiles: parsed.profiles ?? {} };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw new Error(`${file} is not a payctl config file (${(error as Error).message}); remove it and log in again`);
  }
}

export function loadProfile(name: string, env = process.env): Profile | undefined {
  return read(configPath(env)).profiles[name];
}

/** Saves a profile; the file is created 0600 (never readable by others, not even for a moment). */
export function saveProfile(name: string, profile: Profile, env = process.env): string {
  const file = configPath(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const config = read(file);
  config.profiles[name] = profile;
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
  return file;
}
