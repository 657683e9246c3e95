// The signed-in person's session: the token lives in this tab's sessionStorage only (never in a
// URL, a cookie or a log), and signing out forgets it.
export interface Session { token: string; expiresAt: string; email: string }

const KEY = 'dashboard.session';

export function loadSession(): Session | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return stored && Date.parse(stored.expiresAt) > Date.now() ? stored : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function forgetSession(): void {
  sessionStorage.removeItem(KEY);
}
