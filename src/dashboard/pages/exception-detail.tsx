// One reconciliation exception, whole: both sides (the ledger's movements, the statement's line),
// the candidates of an ambiguous one, its history, and how to resolve it: matched by hand (one of
// the candidates, or the other side named by its id), explained, or adjusted, whose amount
// (statement − ledger) is shown and confirmed before the ledger posts it. Fields a server may not
// send yet are read defensively: a missing list is an empty one.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { Field, FormError, useSubmit } from '../forms';
import { FitTable, When } from '../lists';
import { minus } from '../money';

export interface Movement { ledger_entry_id: string; reference: string | null; amount: string; value_date: string | null }
export interface Candidate { ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; amount: string; value_date: string | null }
export interface HistoryEntry { at: string; action: string; by: string | null; note: string | null }
export interface Exception {
  id: string; reconciliation_id: string | null; partner: string; category: string; transfer_id: string | null;
  ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; currency: string;
  ledger_amount: string | null; statement_amount: string | null; field: string | null; ledger_value: string | null; statement_value: string | null;
  reason: string; status: string; resolution: string | null; note: string | null; resolved_by: string | null; resolved_at: string | null;
  counterpart_exception_id: string | null; adjustment_entry_id: string | null; created_at: string;
  movements: Movement[]; candidates: Candidate[]; history: HistoryEntry[];
}

type Resolution = 'matched' | 'explained' | 'adjusted';
const RESOLUTIONS: Array<{ value: Resolution; label: string; submit: string }> = [
  { value: 'matched', label: 'Match by hand (pair it with its other side)', submit: 'Match' },
  { value: 'explained', label: 'Explain (a note; no money moves)', submit: 'Explain' },
  { value: 'adjusted', label: 'Adjust (the ledger posts the difference)', submit: 'Review the adjustment' },
];

/** What an adjustment posts: the statement's net less the ledger's amount, a missing side counting as none. */
export const adjustmentOf = (e: Exception): string => minus(e.statement_amount ?? '0', e.ledger_amount ?? '0');

/** The id a manual match names: the side this exception lacks (a line for a lone movement, an entry for a lone line). */
const otherSide = (e: Exception): 'statement_line_id' | 'ledger_entry_id' => (e.statement_line_id === null ? 'statement_line_id' : 'ledger_entry_id');
const words = (side: 'statement_line_id' | 'ledger_entry_id') => (side === 'statement_line_id' ? 'Statement line id of the other side' : 'Ledger entry id of the other side');
const describe = (c: Candidate, currency: string) =>
  `${c.ledger_entry_id ? `ledger entry ${c.ledger_entry_id}` : `statement line ${c.statement_line_id}`}: ${c.reference ?? 'no reference'}, ${c.amount} ${currency}${c.value_date ? `, value date ${c.value_date}` : ''}`;

export function ExceptionDetail({ id, master, onResolved, onClose }: { id: string; master: string; onResolved: () => void; onClose: () => void }) {
  const [exception, setException] = useState<Exception | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const load = useSubmit(() => null);
  const heading = useRef<HTMLHeadingElement>(null);
  const told = useRef<HTMLParagraphElement>(null);
  const reload = () => load.submit(async () => setException(await api<Exception>('GET', `/v1/reconciliation-exceptions/${id}`, undefined, { credential: master })));
  useEffect(() => { void reload(); }, [id]);
  // Opened: the reader is taken to it. Resolved: to what happened.
  useEffect(() => { if (exception) heading.current?.focus(); }, [exception?.id]);
  useEffect(() => { if (outcome) told.current?.focus(); }, [outcome]);
  const resolved = (answer: Exception, what: string) => { setException(answer); setOutcome(what); onResolved(); };
  // Resolved meanwhile (by someone else, or by a later run): the reader sees why, and the exception as it now is.
  const stale = (why: string) => { setOutcome(why); void reload(); onResolved(); };
  const title = exception ? `Exception: ${exception.category} ${exception.reference ?? exception.statement_line_id ?? exception.id}` : 'Exception';
  return (
    <section aria-labelledby="exception-heading" class="card wide exception">
      <h2 id="exception-heading" tabIndex={-1} ref={heading}>{title}</h2>
      <FormError message={load.errors.form} />
      {outcome ? <p role="status" class="result" tabIndex={-1} ref={told}>{outcome}</p> : null}
      {exception === null ? (load.errors.form ? null : <p>Loading…</p>) : (
        <>
          <Facts exception={exception} />
          <Sides exception={exception} />
          <History exception={exception} />
          {exception.status === 'open' ? <ResolveForm exception={exception} master={master} onResolved={resolved} onStale={stale} /> : null}
          {exception.status === 'resolving' ? (
            <p class="hint">An adjustment is on its way through the ledger: nothing else may resolve this exception until it is posted.
              {' '}<button type="button" class="link" disabled={load.busy} onClick={() => void reload()}>Read it again</button></p>
          ) : null}
        </>
      )}
      <p><button type="button" class="link" onClick={onClose}>Back to the queue</button></p>
    </section>
  );
}

function Facts({ exception: e }: { exception: Exception }) {
  return (
    <dl class="facts">
      <dt>Partner</dt><dd>{e.partner}</dd>
      <dt>Kind</dt><dd>{e.category}{e.field ? ` (on ${e.field}: ledger ${e.ledger_value ?? '—'}, statement ${e.statement_value ?? '—'})` : ''}</dd>
      <dt>Status</dt><dd data-testid="exception-status">{e.status}{e.resolution ? `: ${e.resolution}` : ''}</dd>
      <dt>Reference</dt><dd><code>{e.reference ?? '—'}</code></dd>
      <dt>Ledger</dt><dd class="amount">{e.ledger_amount ?? '—'} {e.currency}</dd>
      <dt>Statement</dt><dd class="amount">{e.statement_amount ?? '—'} {e.currency}</dd>
      <dt>Why</dt><dd>{e.reason}</dd>
      <dt>Raised</dt><dd><When at={e.created_at} /></dd>
      {e.note ? <><dt>Note</dt><dd>{e.note}</dd></> : null}
      {e.resolved_by ? <><dt>Resolved by</dt><dd><code>{e.resolved_by}</code> <When at={e.resolved_at} /></dd></> : null}
      {e.adjustment_entry_id ? <><dt>Adjusting entry</dt><dd><code>{e.adjustment_entry_id}</code></dd></> : null}
    </dl>
  );
}

function Sides({ exception: e }: { exception: Exception }) {
  const { movements, candidates } = e;
  const valueDate = (side: 'ledger' | 'statement') => (e.field === 'value_date' ? (side === 'ledger' ? e.ledger_value : e.statement_value) : null);
  return (
    <>
      <h3>Movements in the ledger</h3>
      {movements.length === 0 ? <p class="hint">{e.ledger_entry_id ? <>Ledger entry <code>{e.ledger_entry_id}</code>.</> : 'None on the ledger side.'}</p> : (
        <FitTable label="Movements in the ledger" columns={['Ledger entry', 'Reference', 'Amount', 'Value date']} rows={movements.map((m) => ({
          key: m.ledger_entry_id, cells: [<code>{m.ledger_entry_id}</code>, <code>{m.reference ?? '—'}</code>, <span class="amount">{m.amount} {e.currency}</span>, m.value_date ?? '—'],
        }))} />
      )}
      <h3>Statement lines</h3>
      {e.statement_line_id === null ? <p class="hint">None on the statement side.</p> : (
        <FitTable label="Statement lines" columns={['Line', 'Reference', 'Net amount', 'Value date']} rows={[{
          key: e.statement_line_id, cells: [<code>{e.statement_line_id}</code>, <code>{e.reference ?? '—'}</code>, <span class="amount">{e.statement_amount ?? '—'} {e.currency}</span>, valueDate('statement') ?? '—'],
        }]} />
      )}
      {candidates.length === 0 ? null : (
        <>
          <h3>Candidates</h3>
          <p class="hint">Each of these fits the other side; nothing was matched. Match it by hand with the right one.</p>
          <FitTable label="Candidates" columns={['Side', 'Reference', 'Amount', 'Value date']} rows={candidates.map((c) => ({
            key: c.ledger_entry_id ?? c.statement_line_id ?? c.reference ?? c.amount,
            cells: [<code>{c.ledger_entry_id ? `entry ${c.ledger_entry_id}` : `line ${c.statement_line_id}`}</code>, <code>{c.reference ?? '—'}</code>, <span class="amount">{c.amount} {e.currency}</span>, c.value_date ?? '—'],
          }))} />
        </>
      )}
    </>
  );
}

function History({ exception: e }: { exception: Exception }) {
  const { history } = e;
  return (
    <>
      <h3>History</h3>
      <ol class="history" aria-label="Exception history">
        {history.map((h, i) => <li key={i}><strong>{h.action}</strong> <When at={h.at} />{h.by ? <> by <code>{h.by}</code></> : null}{h.note ? `: ${h.note}` : ''}</li>)}
      </ol>
    </>
  );
}

function ResolveForm({ exception: e, master, onResolved, onStale }: { exception: Exception; master: string; onResolved: (answer: Exception, what: string) => void; onStale: (why: string) => void }) {
  const { candidates } = e;
  const side = otherSide(e);
  const [how, setHow] = useState<Resolution>(candidates.length > 0 ? 'matched' : 'explained');
  const [note, setNote] = useState('');
  const [candidate, setCandidate] = useState('');
  const [other, setOther] = useState('');
  const [confirming, setConfirming] = useState(false);
  const keys = useRef(new Map<string, string>());
  const confirmHeading = useRef<HTMLHeadingElement>(null);
  const review = useRef<HTMLButtonElement>(null);
  const send = useSubmit((details) => (details === 'note' ? 'note' : details === side && candidates.length === 0 ? 'other' : null));
  const amount = adjustmentOf(e);
  // The button pressed gives way to the confirmation: the focus goes to it before the page is drawn.
  useLayoutEffect(() => { if (confirming) confirmHeading.current?.focus(); }, [confirming]);

  const body = (): Record<string, string> => {
    if (how !== 'matched') return { resolution: how, note };
    const chosen = candidates[Number.parseInt(candidate, 10)];
    if (candidates.length > 0 && !chosen) return { resolution: how, note };
    const named: Record<string, string> = chosen
      ? (chosen.ledger_entry_id ? { ledger_entry_id: chosen.ledger_entry_id } : { statement_line_id: chosen.statement_line_id ?? '' })
      : { [side]: other.trim() };
    return { resolution: how, note, ...named };
  };
  const resolve = () => send.submit(async () => {
    const request = body();
    // The same request keeps its Idempotency-Key, so a retry after a lost or late answer (an
    // adjustment the ledger has not posted yet) asks again rather than resolving twice.
    const signature = JSON.stringify(request);
    if (!keys.current.has(signature)) keys.current.set(signature, crypto.randomUUID());
    let answer: Exception;
    try {
      answer = await api<Exception>('POST', `/v1/reconciliation-exceptions/${e.id}/resolve`, request, { credential: master, idempotencyKey: keys.current.get(signature) });
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) onStale(error.body.message);
      throw error;
    }
    onResolved(answer, answer.resolution === 'adjusted'
      ? `Resolved as adjusted: the ledger posted ${amount} ${e.currency}${answer.adjustment_entry_id ? ` (entry ${answer.adjustment_entry_id})` : ''}.`
      : answer.status === 'resolving' ? 'The adjustment is on its way through the ledger.' : `Resolved as ${answer.resolution ?? how}.`);
  });
  const choose = (value: Resolution) => { setHow(value); setConfirming(false); };
  const noteError = send.errors.fields.note;
  return (
    <form aria-labelledby="resolve-heading" onSubmit={(event) => {
      event.preventDefault();
      if (how === 'adjusted' && !confirming) setConfirming(true);
      else void resolve();
    }}>
      <h3 id="resolve-heading">Resolve it</h3>
      <FormError message={send.errors.form ?? (candidates.length > 0 ? send.errors.fields.other ?? null : null)} />
      <fieldset class="choice">
        <legend>How</legend>
        {RESOLUTIONS.map((r) => (
          <label class="check" key={r.value}>
            <input type="radio" name="exception-resolution" value={r.value} checked={how === r.value} onChange={() => choose(r.value)} /> {r.label}
          </label>
        ))}
      </fieldset>
      {how === 'matched' && candidates.length > 0 ? (
        <fieldset class="choice">
          <legend>The other side, among the candidates</legend>
          {candidates.map((c, i) => (
            <label class="check" key={i}>
              <input type="radio" name="exception-candidate" value={String(i)} required checked={candidate === String(i)} onChange={() => setCandidate(String(i))} /> {describe(c, e.currency)}
            </label>
          ))}
        </fieldset>
      ) : null}
      {how === 'matched' && candidates.length === 0 ? (
        <Field label={words(side)} name="exception-other-side" value={other} onInput={setOther} error={send.errors.fields.other} autoComplete="off" />
      ) : null}
      <div class="field">
        <label for="field-exception-note">Note (why; kept with the exception)</label>
        <textarea id="field-exception-note" name="exception-note" required value={note} readOnly={confirming}
          aria-invalid={noteError ? 'true' : undefined} aria-describedby={noteError ? 'field-exception-note-error' : undefined}
          onInput={(event) => setNote((event.target as HTMLTextAreaElement).value)} />
        {noteError ? <p id="field-exception-note-error" class="field-error">{noteError}</p> : null}
      </div>
      {how === 'adjusted' ? (
        <p>Amount to be posted (statement {e.statement_amount ?? '0'} − ledger {e.ledger_amount ?? '0'}): <strong class="amount" data-testid="adjustment-amount">{amount} {e.currency}</strong></p>
      ) : null}
      {confirming ? (
        <div class="confirm" role="group" aria-labelledby="confirm-heading">
          <h3 id="confirm-heading" tabIndex={-1} ref={confirmHeading}>Confirm the adjustment</h3>
          <p>The ledger posts <strong class="amount">{amount} {e.currency}</strong> between {e.partner}'s settlement account and reconciliation suspense, once. It cannot be undone from here.</p>
          <div class="toolbar">
            <button type="submit" disabled={send.busy}>Confirm the adjustment of {amount} {e.currency}</button>
            <button type="button" class="secondary" onClick={() => { setConfirming(false); setTimeout(() => review.current?.focus(), 0); }}>Back</button>
          </div>
        </div>
      ) : (
        <button type="submit" ref={review} disabled={send.busy}>{RESOLUTIONS.find((r) => r.value === how)!.submit}</button>
      )}
    </form>
  );
}
