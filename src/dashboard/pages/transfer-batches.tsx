// Transfer batches: a CSV file of transfers sent as one POST /v1/transfer-batches, all or none
// (atomic) or each alone, and each item's outcome in the file's order. A file the page cannot read
// is refused here, naming its line, and nothing is sent; a retry of the same upload goes under the
// same Idempotency-Key (RetryKeys), so the batch is made at most once.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, ledgerWrite, RetryKeys } from '../api';
import { FormError, Section, useSubmit } from '../forms';
import { FitTable, type FitRow } from '../lists';
import { parseTransferCsv, type TransferRow } from '../transfer-csv';

interface ItemOutcome { index: number; status: 'created' | 'refused' | 'not_created'; transfer_id: string | null; error: { error: string; message: string } | null }
interface TransferBatch { id: string; atomic: boolean; status: string; items: ItemOutcome[] }
/** The batch as answered, beside the rows sent and their lines in the file. */
interface Sent { batch: TransferBatch; rows: TransferRow[]; lines: number[] }

const STATUS_IN_WORDS: Record<string, string> = { completed: 'every transfer created', failed: 'no transfer created', partial: 'some transfers created' };

export function TransferBatches({ onCreated }: { onCreated: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [atomic, setAtomic] = useState(true);
  const [sent, setSent] = useState<Sent | null>(null);
  const keys = useRef(new RetryKeys());
  const told = useRef<HTMLParagraphElement>(null);
  const upload = useSubmit(() => null);
  useEffect(() => { if (sent) told.current?.focus(); }, [sent]);
  return (
    <>
      <Section title="Batch of transfers">
        <p class="hint">A CSV file with a header row naming recipient_email, amount, currency and note, then one transfer a line.</p>
        <form onSubmit={(e) => {
          e.preventDefault();
          void upload.submit(async () => {
            setSent(null);
            if (!file) throw new Error('choose a CSV file of transfers first');
            const parsed = parseTransferCsv(await file.text());
            if ('error' in parsed) throw new Error(`The file is refused, nothing was sent: ${parsed.error}`);
            try {
              const batch = await ledgerWrite<TransferBatch>(keys.current, '/v1/transfer-batches', { atomic, transfers: parsed.rows });
              setSent({ batch, rows: parsed.rows, lines: parsed.lines });
              onCreated();
            } catch (error) {
              throw inFileWords(error, parsed.lines);
            }
          });
        }}>
          <FormError message={upload.errors.form} />
          <div class="field">
            <label for="field-batch-file">CSV file of transfers</label>
            <input id="field-batch-file" name="batch-file" type="file" accept=".csv,text/csv" required
              onChange={(e) => { setSent(null); setFile((e.target as HTMLInputElement).files?.[0] ?? null); }} />
          </div>
          <p><label class="check"><input type="checkbox" name="batch-atomic" checked={atomic} onChange={(e) => setAtomic((e.target as HTMLInputElement).checked)} /> All or none: create every transfer or none of them (atomic)</label></p>
          <button type="submit" disabled={upload.busy}>Upload batch</button>
        </form>
        {sent ? (
          <p role="status" class="result" tabIndex={-1} ref={told}>
            Batch {sent.batch.atomic ? '(all or none)' : '(each alone)'}: <strong data-testid="batch-status">{sent.batch.status}</strong>, {STATUS_IN_WORDS[sent.batch.status] ?? sent.batch.status}.
          </p>
        ) : null}
      </Section>
      {sent ? <BatchItems sent={sent} /> : null}
    </>
  );
}

/** A batch refused whole names its item (transfers[3].amount): said as the line of the file. */
function inFileWords(error: unknown, lines: number[]): unknown {
  if (!(error instanceof ApiError)) return error;
  const item = /^transfers\[(\d+)\]/.exec(error.body.details ?? '');
  if (!item || lines[Number(item[1])] === undefined) return error;
  return new ApiError(error.status, { ...error.body, message: `line ${lines[Number(item[1])]}: ${error.body.message}` });
}

function BatchItems({ sent }: { sent: Sent }) {
  const rows: FitRow[] = sent.batch.items.map((item) => {
    const row = sent.rows[item.index];
    return {
      key: String(item.index), heading: true,
      cells: [
        String(sent.lines[item.index]), row.recipient_email, <span class="amount">{row.amount} {row.currency}</span>, item.status,
        item.transfer_id ? <code>{item.transfer_id}</code> : item.error ? <>{item.error.error}: {item.error.message}</> : <span class="hint">another transfer was refused</span>,
      ],
    };
  });
  return (
    <Section title="Batch outcome" wide>
      <p class="hint">Batch <code>{sent.batch.id}</code>, in the file's order.</p>
      <FitTable label="Batch items" columns={['Line', 'Recipient', 'Amount', 'Outcome', 'Transfer id or reason']} rows={rows} />
    </Section>
  );
}
