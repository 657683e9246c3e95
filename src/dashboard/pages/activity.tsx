// The account's live activity: its events as they arrive, newest first, each as its type and
// amount, and in words where the type alone says too little (a balance alert's crossing, a
// scheduled transfer's run).
import type { DomainEvent } from '../events';
import { Section } from '../forms';

/** A balance.threshold_crossed event in words: the balance before → after, and the threshold it crossed. */
export function crossingInWords(event: DomainEvent): string | null {
  const { balance_before: before, balance_after: after, threshold, direction, currency, wallet_id: wallet } = event.data;
  if (event.type !== 'balance.threshold_crossed' || typeof before !== 'string' || typeof after !== 'string' || typeof threshold !== 'string') return null;
  const where = typeof wallet === 'string' && wallet !== 'main' ? `wallet ${wallet}` : 'main balance';
  return `${currency ?? ''} ${where} went ${direction === 'above' ? 'above' : 'below'} ${threshold}: ${before} → ${after}`.trim();
}

/** A scheduled_transfer.run event in words: which run, of what, and how the ledger decided it. */
export function scheduledRunInWords(event: DomainEvent): string | null {
  const { occurrence, error } = event.data;
  if (event.type !== 'scheduled_transfer.run' || typeof occurrence !== 'number') return null;
  const code = (error as { error?: unknown } | null)?.error;
  return `run ${occurrence} of ${event.data.amount ?? ''} ${event.data.currency ?? ''}: ${event.data.status}${typeof code === 'string' ? ` (${code})` : ''}`;
}

export function Activity({ events }: { events: DomainEvent[] }) {
  return (
    <Section title="Activity">
      {/* Focusable: once it holds more than its height it scrolls, and the keyboard must reach it. */}
      <div role="log" aria-live="polite" aria-label="Activity" class="activity" tabIndex={0}>
        <ol>
        {events.length === 0 ? <li class="hint">Events appear here as they happen.</li> : events.map((event) => {
          const words = crossingInWords(event) ?? scheduledRunInWords(event);
          return (
            <li key={event.id}>
              <span class="event-type">{event.type}</span>{' '}
              {words ? <span class="words">{words}</span> : event.data.amount ? <span class="amount">{event.data.amount} {event.data.currency}</span> : null}{' '}
              <time dateTime={event.created_at}>{new Date(event.created_at).toLocaleTimeString()}</time>
            </li>
          );
        })}
        </ol>
      </div>
    </Section>
  );
}
