// The dashboard: signed out, the sign-in and sign-up forms; signed in, the areas of the sandbox
// (the address's #fragment names the area, never a credential) and the account's live events.
import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { api, setApiToken } from './api';
import { followEvents, type DomainEvent } from './events';
import { ApiKeys } from './pages/api-keys';
import { BalanceAlerts } from './pages/balance-alerts';
import { Customers } from './pages/customers';
import { EventList } from './pages/event-list';
import { Finance } from './pages/finance';
import { Fx } from './pages/fx';
import { Holds } from './pages/holds';
import { Overview } from './pages/overview';
import { Payments } from './pages/payments';
import { RequestLogs } from './pages/request-logs';
import { SignIn, SignUp } from './pages/sign-in';
import { Transactions } from './pages/transactions';
import { Transfers } from './pages/transfers';
import { Wallets } from './pages/wallets';
import { Webhooks } from './pages/webhooks';
import { forgetSession, loadSession, saveSession, type Session } from './session';

type Area = { hash: string; label: string; page: (events: DomainEvent[]) => JSX.Element; developers?: true };
const AREAS: Area[] = [
  // The overview ends with the account's ledger records, filtered (a top-bar link of their own would not fit its one line).
  { hash: '#/overview', label: 'Overview', page: (events) => <><Overview events={events} /><Transactions /></> },
  { hash: '#/transfers', label: 'Transfers', page: (events) => <Transfers events={events} /> },
  { hash: '#/wallets', label: 'Wallets', page: (events) => <Wallets events={events} /> },
  { hash: '#/holds', label: 'Holds', page: (events) => <Holds events={events} /> },
  { hash: '#/alerts', label: 'Alerts', page: (events) => <BalanceAlerts events={events} /> },
  { hash: '#/fx', label: 'FX', page: () => <Fx /> },
  { hash: '#/customers', label: 'Customers', page: () => <Customers /> },
  { hash: '#/payments', label: 'Payments', page: (events) => <Payments events={events} /> },
  { hash: '#/developers', label: 'API keys', page: () => <ApiKeys />, developers: true },
  { hash: '#/developers/logs', label: 'Request logs', page: () => <RequestLogs />, developers: true },
  { hash: '#/developers/webhooks', label: 'Webhooks', page: (events) => <Webhooks events={events} />, developers: true },
  { hash: '#/developers/events', label: 'Events', page: (events) => <EventList events={events} />, developers: true },
  { hash: '#/finance', label: 'Finance', page: () => <Finance /> },
];
/** The top bar names Developers once; its own areas are listed on its pages. */
const TOP_AREAS = AREAS.filter((a) => !a.developers || a.hash === '#/developers');
const EVENTS_KEPT = 100;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/overview');
  useEffect(() => {
    const follow = () => setHash(location.hash || '#/overview');
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return hash;
}

export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [events, setEvents] = useState<DomainEvent[]>([]);
  const [live, setLive] = useState(false);
  const hash = useHash();
  // Signing out also leaves the area, so the next person to sign in starts at the overview.
  const signOut = () => { forgetSession(); setApiToken(null, () => undefined); setEvents([]); setSession(null); location.hash = '#/overview'; };
  setApiToken(session?.token ?? null, signOut);
  // The button also signs the session out on the server, so its token stops working everywhere
  // (its headers are taken before signOut forgets the token).
  const signOutEverywhere = () => { void api('DELETE', '/v1/auth/sessions/current').catch(() => undefined); signOut(); };

  useEffect(() => {
    if (!session) return undefined;
    const stop = new AbortController();
    void followEvents((event) => setEvents((all) => (all.some((e) => e.id === event.id) ? all : [event, ...all].slice(0, EVENTS_KEPT))), setLive, stop.signal);
    return () => stop.abort();
  }, [session?.token]);

  // On a new area the focus goes to its content, before the page is painted: done after painting,
  // it took the focus away from a field the person had already reached (a slow machine showed it).
  // Focus already inside the content stays where it is.
  useLayoutEffect(() => {
    const area = AREAS.find((a) => a.hash === hash)?.label ?? 'Overview';
    document.title = session ? `${area} · Sandbox dashboard` : 'Sign in · Sandbox dashboard';
    const main = document.getElementById('main');
    if (main && !main.contains(document.activeElement)) main.focus();
  }, [hash, session !== null]);

  if (!session) {
    const signedIn = (s: Session) => { saveSession(s); setSession(s); };
    return (
      <>
        <header class="bar"><p class="brand">Payments sandbox</p></header>
        <main id="main" tabIndex={-1} class="signed-out">
          <h1>Sandbox dashboard</h1>
          <SignIn onSignedIn={signedIn} />
          <SignUp onSignedIn={signedIn} />
        </main>
      </>
    );
  }
  const area = AREAS.find((a) => a.hash === hash) ?? AREAS[0];
  return (
    <>
      <header class="bar">
        <p class="brand">Payments sandbox</p>
        <nav aria-label="Areas">
          <ul>{TOP_AREAS.map((a) => (
            <li key={a.hash}><a href={a.hash} aria-current={a === area || (a.developers && area.developers) ? 'page' : undefined}>{a.developers ? 'Developers' : a.label}</a></li>
          ))}</ul>
        </nav>
        <p class="who"><span class="hint email" title={session.email}>{session.email}</span> <span class={live ? 'live on' : 'live'}>{live ? 'Live' : 'Reconnecting…'}</span></p>
        <button type="button" onClick={signOutEverywhere}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{area.label}</h1>
        {area.developers ? (
          <nav aria-label="Developers" class="subnav">
            <ul>{AREAS.filter((a) => a.developers).map((a) => <li key={a.hash}><a href={a.hash} aria-current={a === area ? 'page' : undefined}>{a.label}</a></li>)}</ul>
          </nav>
        ) : null}
        {area.page(events)}
      </main>
    </>
  );
}
