// The balance of one currency over the last 30 days, drawn from the account's statement (the
// balance after each movement), redrawn when a balance event arrives.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Section, Select } from '../forms';

interface Statement { opening_balance: string; closing_balance: string; from: string; to: string; lines: Array<{ posted_at: string; balance_after: string }> }
const DAYS = 30;
const WIDTH = 600;
const HEIGHT = 160;

/**
 * Where a decimal string sits on the chart. Only here does an amount become a float: a pixel
 * position needs no more than three significant digits, and no amount is computed from it.
 */
const plotValue = (decimal: string) => Number(decimal);

export function BalanceChart({ currencies, refreshOn }: { currencies: string[]; refreshOn: number }) {
  const [currency, setCurrency] = useState(currencies[0] ?? 'USD');
  const [statement, setStatement] = useState<Statement | null>(null);
  useEffect(() => {
    const to = new Date();
    const from = new Date(to.getTime() - DAYS * 86_400_000);
    const query = new URLSearchParams({ currency, from: from.toISOString(), to: to.toISOString() });
    void api<Statement>('GET', `/v1/accounts/me/statement?${query}`).then(setStatement, () => setStatement(null));
  }, [currency, refreshOn]);
  return (
    <Section title="Balance over 30 days">
      <Select label="Chart currency" name="chart-currency" value={currency} options={currencies.length > 0 ? currencies : ['USD']} onInput={setCurrency} />
      {statement ? <Chart statement={statement} currency={currency} /> : <p>Loading…</p>}
    </Section>
  );
}

function Chart({ statement, currency }: { statement: Statement; currency: string }) {
  const start = Date.parse(statement.from);
  const span = Date.parse(statement.to) - start;
  // A step line: the balance holds until the next movement, and to the end of the period.
  const points = [{ at: start, value: plotValue(statement.opening_balance) }];
  for (const line of statement.lines) {
    points.push({ at: Date.parse(line.posted_at), value: points[points.length - 1].value }, { at: Date.parse(line.posted_at), value: plotValue(line.balance_after) });
  }
  points.push({ at: start + span, value: points[points.length - 1].value });
  const top = Math.max(...points.map((p) => p.value), 1);
  const x = (at: number) => ((at - start) / span) * WIDTH;
  const y = (value: number) => HEIGHT - (value / top) * (HEIGHT - 10);
  const summary = `${currency} balance over the last ${DAYS} days: ${statement.opening_balance} at the start, ${statement.closing_balance} now, after ${statement.lines.length} ${statement.lines.length === 1 ? 'movement' : 'movements'}`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary} preserveAspectRatio="none">
        <line x1="0" y1={HEIGHT} x2={WIDTH} y2={HEIGHT} class="axis" />
        <polyline points={points.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')} class="series" />
      </svg>
      <figcaption class="hint">{summary}.</figcaption>
    </figure>
  );
}
