// Scheduled transfers: the Send form's optional schedule (when the first run falls due, in the
// person's own time, and how often it repeats), and the account's schedules with their next run,
// each run's outcome (its transfer, or the ledger's refusal in its words) and a Cancel button.
import { useRef, useState } from 'preact/hooks';
import { api, RetryKeys } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select } from '../forms';
import { FitTable, usePaged, When, type FitRow } from '../lists';

interface Run { occurrence: number; scheduled_for: string; run_at: string; transfer_id: string | null; status: 'pending' | 'created' | 'refused'; error: { error: string; message: string } | null }
export interface ScheduledTransfer {
  id: string; status: 'scheduled' | 'completed' | 'cancelled'; run_at: string; next_run_at: string | null;
  transfer: { amount: string; currency: string; recipient_email?: string };
  repeat: { every: string; count: number } | null; runs: Run[];
}

/** What the Send form asks of a schedule: nothing (send now), or when and how often. */
export interface ScheduleChoice { runAt: string; every: string; count: string }
export const NO_SCHEDULE: ScheduleChoice = { runAt: '', every: '', count: '' };
export const isScheduled = (choice: ScheduleChoice) => choice.runAt !== '' || choice.every !== '';

const REPEATS = [{ value: '', label: 'Once' }, { value: 'day', label: 'Every day' }, { value: 'week', label: 'Every week' }, { value: 'month', label: 'Every month' }];
const EVERY: Record<string, string> = { day: 'day', week: 'week', month: 'month' };

/** The API's field names as the schedule's fields: the form shows its error next to the field. */
export const scheduleFieldOf = (details: string | null): string | null => ({ run_at: 'run-at', 'repeat.every': 'every', 'repeat.count': 'count' })[details ?? ''] ?? null;

/** The schedule's part of the Send form: its fields are optional, and empty they send at once. */
export function ScheduleFields({ choice, onChange, errors }: { choice: ScheduleChoice; onChange: (choice: ScheduleChoice) => void; errors: Record<string, string> }) {
  const set = (name: keyof ScheduleChoice) => (value: string) => onChange({ ...choice, [name]: value });
  return (
    <fieldset class="choice">
      <legend>Schedule (optional)</legend>
      <Field label="First run at (your time; empty: now)" name="run-at" type="datetime-local" step="1" required={false} value={choice.runAt} onInput={set('runAt')} error={errors['run-at']} />
      <Select label="Repeat" name="every" value={choice.every} options={REPEATS} onInput={set('every')} />
      {choice.every ? <Field label="Runs in all (1 to 120)" name="count" type="number" value={choice.count} onInput={set('count')} error={errors.count} /> : null}
    </fieldset>
  );
}

/**
 * Schedules `transfer` as `choice` says, under a key kept for this request, so pressing the button
 * again after a lost answer asks for the same schedule and never makes two.
 */
export async function schedule(keys: RetryKeys, transfer: Record<string, string>, choice: ScheduleChoice): Promise<ScheduledTransfer> {
  // A datetime-local value is the person's own time: Date reads it so, and the API gets the instant.
  const runAt = choice.runAt ? new Date(choice.runAt).toISOString() : new Date().toISOString();
  const body = { transfer, run_at: runAt, ...(choice.every ? { repeat: { every: choice.every, count: Number(choice.count) } } : {}) };
  const signature = JSON.stringify([transfer, choice]);
  try {
    const made = await api<ScheduledTransfer>('POST', '/v1/scheduled-transfers', body, { idempotencyKey: keys.keyFor(signature) });
    keys.settled(signature);
    return made;
  } catch (error) {
    keys.settled(signature, error);
    throw error;
  }
}

const describe = (s: ScheduledTransfer) => `${s.transfer.amount} ${s.transfer.currency} to ${s.transfer.recipient_email ?? 'bank details'}`;
const repeatOf = (s: ScheduledTransfer) => (s.repeat ? `every ${EVERY[s.repeat.every] ?? s.repeat.every}, ${s.repeat.count} runs` : 'once');

function RunOutcomes({ runs }: { runs: Run[] }) {
  if (runs.length === 0) return <span class="hint">none yet</span>;
  return (
    <ol class="runs">
      {runs.map((run) => (
        <li key={run.occurrence}>
          Run {run.occurrence}, <When at={run.run_at} />: <strong>{run.status}</strong>
          {run.error ? <> ({run.error.error}: {run.error.message})</> : null}
        </li>
      ))}
    </ol>
  );
}

/** The account's schedules, newest first; read again when a run is announced, one is made or cancelled. */
export function ScheduledList({ events, made }: { events: DomainEvent[]; made: string }) {
  const [cancelled, setCancelled] = useState(0);
  const [refusal, setRefusal] = useState<string | null>(null);
  const keys = useRef(new RetryKeys());
  const runs = events.filter((e) => e.resource_type === 'scheduled_transfer').length;
  const { page, error, pager } = usePaged<ScheduledTransfer>('/v1/scheduled-transfers', {}, `${made}-${runs}-${cancelled}`);
  const cancel = async (s: ScheduledTransfer) => {
    setRefusal(null);
    const path = `/v1/scheduled-transfers/${s.id}/cancel`;
    try {
      await api('POST', path, undefined, { idempotencyKey: keys.current.keyFor(path) });
      keys.current.settled(path);
    } catch (failure) {
      keys.current.settled(path, failure);
      setRefusal((failure as Error).message);
    }
    setCancelled((n) => n + 1);
  };
  const rows: FitRow[] = (page?.data ?? []).map((s) => ({
    key: s.id,
    cells: [
      <span class="amount">{s.transfer.amount} {s.transfer.currency}</span>, s.transfer.recipient_email ?? 'bank details', repeatOf(s),
      s.next_run_at ? <When at={s.next_run_at} /> : <span class="hint">—</span>, s.status, <RunOutcomes runs={s.runs} />,
      s.status === 'scheduled'
        ? <button type="button" class="link" aria-label={`Cancel the scheduled transfer of ${describe(s)}`} onClick={() => { void cancel(s); }}>Cancel</button>
        : <span class="hint">—</span>,
    ],
  }));
  return (
    <Section title="Scheduled" wide>
      <FormError message={error ?? refusal} />
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No scheduled transfers yet.</p> : (
        <FitTable label="Scheduled transfers" columns={['Amount', 'Recipient', 'Repeat', 'Next run', 'Status', 'Runs', { hidden: 'Actions' }]} rows={rows} />
      )}
      {pager}
    </Section>
  );
}
