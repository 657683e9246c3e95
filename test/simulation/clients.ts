// A client's operations, as a person's code would send them, each checked against the model as
// its answer arrives: a refusal for want of funds only when the model allows that the funds were
// short, a creation only when they may have been there, an illegal id refused with 400
// invalid_request naming its field, a legal form of an id acting on the same resource.
import { Money } from '../../ledger/money';
import { BANK_PAYEE } from '../support/mixed-load';
import { consent, browse } from '../support/partner-links';
import { idInForm, isLegal, type IdForm } from './ids';
import { isPartnerError } from './http';
import { PARTNER_OUTAGE_MS_MAX, PAYMENT_SCENARIOS, TRANSFER_SCENARIOS, type Misbehaviour, type Op } from './plan';
import { runWalletOp } from './wallet-ops';
import type { Member, World } from './world';
import { runAlertOp } from './alert-ops';
import { runBatchOp } from './batch-ops';
import { runReversalOp } from './reversal-ops';
import { payoutAt } from './rates';
import { delta, fundsCheck, illegalIdCheck, MAX_RATE, money, unexpected, write } from './writes';

/** A transfer (internal, chain or bank): the sender's debit, then (bank) a hold that settles or is released. */
async function transfer(world: World, member: Member, op: Extract<Op, { kind: 'internal' | 'chain' | 'bank' }>): Promise<void> {
  const to = world.members[op.to];
  const currency = op.kind === 'chain' ? 'USDC' : op.currency;
  const amount = money(op.cents);
  const base: Record<string, unknown> = { amount, currency };
  let payout = currency;
  if (op.kind === 'bank') {
    payout = op.payout;
    const viban = to.vibans.find((v) => v.currency === op.payout)!;
    base.recipient = { email: to.email, name: 'Member', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: op.payout } };
  } else {
    base.recipient_email = to.email;
  }
  if (op.order) base.metadata = { order: op.order };
  const scenario = op.kind === 'bank' ? op.scenario : null;
  const maxPayout = payout === currency ? new Money(amount) : new Money(amount).times(MAX_RATE);
  const label = `c${member.index} ${op.kind} ${amount} ${currency}${payout !== currency ? `->${payout}` : ''} to c${op.to}${scenario ? ` [${scenario}]` : ''}`;
  const sentAt = Date.now();
  await write(world, {
    member, label, path: '/v1/transfers', body: base, otherBody: { ...base, amount: money(op.cents + 1) },
    headers: scenario ? { 'Sandbox-Scenario': scenario } : {},
    possible: [delta(member.accountId, currency, new Money(amount).negated()), delta(to.accountId, payout, maxPayout)],
    allowedFinal: TRANSFER_SCENARIOS[scenario ?? 'none'],
    idField: (body) => body?.transfer_id,
    learn: (command, answer) => {
      fundsCheck(world, command, member, currency, new Money(amount), answer);
      if (answer.status !== 200 && answer.status !== 201) {
        // One cent buys nothing in a currency worth more: refused, naming amount, as a quote is.
        const tooSmall = payout !== currency && op.cents < 2 && answer.status === 400 && answer.body?.error === 'invalid_request' && answer.body?.details === 'amount';
        if (!tooSmall) unexpected(world, command, member, answer, ['insufficient_funds']);
        world.model.refuse(command);
        return;
      }
      const id: string = answer.body.transfer_id;
      command.resource = { type: 'transfer', id };
      world.findings.expect(JSON.stringify(answer.body.metadata) === JSON.stringify(op.order ? { order: op.order } : {}), 'a transfer answers the metadata it was made with',
        () => `${label}: metadata ${JSON.stringify(answer.body.metadata)}, made with ${op.order ?? 'none'}`, [member.index]);
      if (op.order && !world.ordered.some((o) => o.id === id)) world.ordered.push({ client: member.index, order: op.order, id });
      member.transfers.push(id);
      if (op.kind === 'internal' && !member.internals.some((t) => t.id === id)) {
        member.internals.push({ id, client: member.index, to: op.to, currency, amount: new Money(amount), reversals: [] });
      }
      world.model.answer(command, [delta(member.accountId, currency, new Money(amount).negated())], [delta(member.accountId, currency, amount), delta(to.accountId, payout, maxPayout)]);
      world.open.push({
        command, member, resolve: (t) => {
          if (t.status === 'completed') {
            const paid = new Money(t.payout?.amount ?? amount);
            world.findings.expect((payout === currency) === (t.fx === null), 'a transfer is priced exactly when it pays out in another currency',
              () => `${label}: fx ${JSON.stringify(t.fx)}`, [member.index]);
            if (t.fx) {
              // Priced somewhere between its sending and now: the published table bounds the price.
              world.rates.observe(`transfer ${id}`, member.index, currency, payout, t.fx, sentAt, Date.now());
              const want = payoutAt(amount, t.fx.rate);
              world.findings.expect(paid.isEqualTo(want), 'a cross-currency payout is the amount at its rate, rounded down',
                () => `${label}: paid ${paid.toFixed()} ${payout} at rate ${t.fx.rate}, expected ${want.toFixed()}`, [member.index]);
            }
            world.model.end(command, [delta(to.accountId, payout, paid)]);
            if (op.kind !== 'internal') world.partnerBook.set(id, { label, client: member.index, paid: { amount: paid, currency: payout } });
          } else {
            world.model.end(command, [delta(member.accountId, currency, amount)]);
            if (op.kind !== 'internal') world.partnerBook.set(id, { label, client: member.index, paid: null });
          }
        },
      });
    },
  }, op.misbehave);
}

async function faucet(world: World, member: Member, op: Extract<Op, { kind: 'faucet' }>): Promise<void> {
  const amount = money(op.cents);
  await write(world, {
    member, label: `c${member.index} faucet ${amount} ${op.currency}`, path: '/v1/sandbox/faucet', body: { currency: op.currency, amount }, otherBody: { currency: op.currency, amount: money(op.cents + 1) },
    possible: [delta(member.accountId, op.currency, amount)], idField: (body) => body?.id,
    learn: (command, answer) => {
      if (answer.status === 200 || answer.status === 201) world.model.answer(command, [delta(member.accountId, op.currency, amount)]);
      else { unexpected(world, command, member, answer, []); world.model.refuse(command); }
    },
  }, op.misbehave);
}

/** A conversion: a persisted quote, then its execution with the quote's id in the op's form. */
async function fx(world: World, member: Member, op: Extract<Op, { kind: 'fx' }>): Promise<void> {
  const { http, findings } = world;
  const amount = money(op.cents);
  findings.trace(member.index, `c${member.index} fx quote ${amount} ${op.from}->${op.to}`);
  const sentAt = Date.now();
  const quote = await http.decide(member.index, '/v1/fx/quote', { from_currency: op.from, to_currency: op.to, from_amount: amount }, member.keys.uuid(), { token: member.key });
  if (!quote || (quote.status !== 201 && quote.status !== 200)) { // 200: a replay of the same request
    // One cent buys nothing in a currency worth more (USD to GBP): refused, naming from_amount.
    const tooSmall = quote?.status === 400 && quote.body?.error === 'invalid_request' && quote.body?.details === 'from_amount' && op.cents < 2;
    if (quote && !tooSmall) findings.expect(quote.status === 422 && quote.body?.error === 'invalid_request', 'a quote for a valid pair is made', () => `quote ${amount} ${op.from}->${op.to}: ${quote.status} ${JSON.stringify(quote.body)}`, [member.index]);
    return;
  }
  const q = quote.body;
  member.quotes.push(q.id);
  world.rates.observe(`quote ${q.id}`, member.index, op.from, op.to, q, sentAt, Date.now());
  const want = payoutAt(q.from_amount, q.rate);
  findings.expect(want.isEqualTo(q.to_amount), 'a quote gives the amount at its rate, rounded down', () => `quote ${q.id}: ${q.from_amount} × ${q.rate} = ${q.to_amount}, expected ${want.toFixed()}`, [member.index]);
  if (op.execute === 'never') return;
  const execute = async (form: IdForm, misbehave: Misbehaviour, label: string) => write(world, {
    member, label, path: '/v1/fx/execute', body: { quote_id: idInForm(q.id, form) }, otherBody: { quote_id: member.quotes[0] === q.id ? member.keys.uuid() : member.quotes[0] },
    possible: [delta(member.accountId, op.from, new Money(q.from_amount).negated()), delta(member.accountId, op.to, q.to_amount)],
    idField: (body) => body?.entry_id,
    learn: (command, answer) => {
      fundsCheck(world, command, member, op.from, new Money(q.from_amount), answer);
      if (answer.status === 200 || answer.status === 201) {
        findings.expect(isLegal(form), 'an illegal id is 400 invalid_request naming its field', () => `${label}: executed with quote_id in form ${form}`, [member.index]);
        findings.expect(answer.body?.quote?.id === q.id, 'a legal form of an id acts on the same resource', () => `${label}: executed quote ${answer.body?.quote?.id}, sent ${q.id} in form ${form}`, [member.index]);
        world.model.answer(command, [delta(member.accountId, op.from, new Money(q.from_amount).negated()), delta(member.accountId, op.to, q.to_amount)]);
        return;
      }
      world.model.refuse(command);
      if (!isLegal(form)) { illegalIdCheck(world, member, label, 'quote_id', form, answer); return; }
      // Consumed already is allowed only when another execution of this quote may have done it.
      const others = world.model.commands.filter((c) => c !== command && c.label.startsWith(`c${member.index} fx execute ${q.id}`) && c.state !== 'refused');
      const allowed = ['insufficient_funds', 'quote_expired', ...(others.length > 0 ? ['quote_already_consumed'] : [])];
      unexpected(world, command, member, answer, allowed);
    },
  }, misbehave);
  const first = await execute(op.quoteForm, isLegal(op.quoteForm) ? op.misbehave : null, `c${member.index} fx execute ${q.id} ${q.from_amount} ${op.from}->${q.to_amount} ${op.to} (${op.quoteForm})`);
  // A client told its id was malformed sends it again, written properly.
  if (first && !isLegal(op.quoteForm)) await execute('lower', op.misbehave, `c${member.index} fx execute ${q.id} ${q.from_amount} ${op.from}->${q.to_amount} ${op.to} (lower, after ${op.quoteForm})`);
  if (op.execute === 'twice') await execute('lower', null, `c${member.index} fx execute ${q.id} again, new key`);
}

/** A payment: funds added through openbank (credited once it completes), or euros sent through fiat (held, then paid or released). */
async function payment(world: World, member: Member, op: Extract<Op, { kind: 'add_funds' | 'send' }>): Promise<void> {
  const amount = money(op.cents);
  const inbound = op.kind === 'add_funds';
  const currency = inbound ? 'USD' : 'EUR';
  const body = (customer: string, a: string): Record<string, unknown> => (inbound
    ? { customer_id: customer, partner: 'openbank', amount: a, currency }
    : { customer_id: customer, partner: 'fiat', amount: a, currency, purpose: 'simulation', payee: BANK_PAYEE });
  const moved = delta(member.accountId, currency, inbound ? amount : new Money(amount).negated());
  const label = `c${member.index} ${op.kind} ${amount} ${currency}${op.scenario ? ` [${op.scenario}]` : ''} customer(${op.customerForm})`;
  const go = (form: IdForm, misbehave: Misbehaviour, what: string) => write(world, {
    member, label: what, path: inbound ? '/v1/payments/add-funds' : '/v1/payments/send', body: body(idInForm(member.customerId, form), amount),
    otherBody: body(idInForm(member.customerId, form), money(op.cents + 1)), headers: op.scenario ? { 'Sandbox-Scenario': op.scenario } : {},
    possible: [moved], allowedFinal: PAYMENT_SCENARIOS[op.scenario ?? 'none'], idField: (b) => (b?.error === 'partner_error' ? b.details : b?.id),
    learn: (command, answer) => {
      if (!inbound) fundsCheck(world, command, member, currency, new Money(amount), answer);
      // 502 partner_error: the payment named in details exists (held, if a payout) and ends as the dispatcher gets it through.
      const made = answer.status === 200 || answer.status === 201 || (isPartnerError(answer) && isLegal(form));
      if (!made) {
        world.model.refuse(command);
        if (!isLegal(form)) illegalIdCheck(world, member, what, 'customer_id', form, answer);
        else unexpected(world, command, member, answer, inbound ? [] : ['insufficient_funds']);
        return;
      }
      world.findings.expect(isLegal(form), 'an illegal id is 400 invalid_request naming its field', () => `${what}: made a payment with customer_id in form ${form}`, [member.index]);
      const id: string = isPartnerError(answer) ? answer.body.details : answer.body.id;
      world.findings.expect(answer.body?.customer_id === undefined || answer.body.customer_id === member.customerId, 'a legal form of an id acts on the same resource',
        () => `${what}: the payment's customer is ${answer.body?.customer_id}, sent ${member.customerId} in form ${form}`, [member.index]);
      command.resource = { type: 'payment', id };
      // No partner answer reached the service (a fault, 202 pending, 502): the settler submits
      // the payment again without the sandbox scenario (README), so it may simply complete.
      if (isPartnerError(answer) || answer.body?.external_id == null) command.allowedFinal = [...new Set([...command.allowedFinal, 'completed'])];
      member.payments.push(id);
      // A payout is held at once; a pay-in is credited only when it completes.
      if (inbound) world.model.answer(command, [], [moved]);
      else world.model.answer(command, [moved], [delta(member.accountId, currency, amount)]);
      world.open.push({
        command, member, resolve: (p) => {
          world.partnerBook.set(id, { label: what, client: member.index, paid: p.status === 'completed' ? { amount: new Money(amount), currency } : null });
          if (inbound) world.model.end(command, p.status === 'completed' ? [moved] : []);
          else world.model.end(command, p.status === 'completed' ? [] : [delta(member.accountId, currency, amount)]);
        },
      });
    },
  }, misbehave);
  const first = await go(op.customerForm, isLegal(op.customerForm) ? op.misbehave : null, label);
  if (first && !isLegal(op.customerForm)) await go('lower', op.misbehave, `${label} again (lower)`);
}

/** A read by id in the op's form: a legal form finds the same resource, an illegal one is 400 naming `id`. */
async function lookup(world: World, member: Member, path: string, id: string, form: IdForm, idField: (body: any) => unknown): Promise<void> {
  const label = `c${member.index} GET ${path}/{${form}} ${id}`;
  world.findings.trace(member.index, label);
  const answer = await world.http.read(member.index, `${path}/${encodeURIComponent(idInForm(id, form))}`, { token: member.key, deadlineMs: 10_000 });
  if (typeof answer === 'string') return;
  world.findings.trace(member.index, `  <- ${answer.status} ${answer.body?.error ?? ''}`);
  if (answer.status >= 500) return; // a restarting service; checked as an answer already
  if (isLegal(form)) {
    world.findings.expect(answer.status === 200 && idField(answer.body) === id, 'a legal form of an id acts on the same resource',
      () => `${label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`, [member.index]);
  } else {
    illegalIdCheck(world, member, label, 'id', form, answer);
  }
}

/** A new customer linked with a partner through its consent page: no money, but the route must work under faults. */
async function link(world: World, member: Member, partner: string): Promise<void> {
  const { http, findings } = world;
  findings.trace(member.index, `c${member.index} link a new customer with ${partner}`);
  const customer = await http.decide(member.index, '/v1/customers', { email: `sim-${member.keys.uuid()}@example.com`, business_name: 'Simulated Customer', country_code: 'DE' }, member.keys.uuid(), { token: member.key });
  if (!customer || !findings.expect(customer.status === 201 || customer.status === 200, 'a customer is made', () => `${customer.status} ${JSON.stringify(customer.body)}`, [member.index])) return;
  const created = await http.decide(member.index, `/v1/customers/${customer.body.id}/partner-links`, { partner }, member.keys.uuid(), { token: member.key });
  if (!created || !findings.expect(created.status === 201 || created.status === 200, 'a partner link is made', () => `${created.status} ${JSON.stringify(created.body)}`, [member.index])) return;
  try {
    const callback = await consent(created.body.authorize_url, 'approve');
    const consentedAt = Date.now();
    let landed = await browse(callback);
    // A person reloads a page that says the partner is not answering (503 with Retry-After), for as
    // long as a partner may be down.
    while (landed.status === 503 && Date.now() - consentedAt < PARTNER_OUTAGE_MS_MAX + 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      landed = await browse(callback);
    }
    // A partner away for longer than its code lives (a minute) refuses the code when it is back:
    // the link fails, and the person starts again. Nothing else may fail a consented link.
    const codeOutlived = landed.status === 400 && Date.now() - consentedAt > 55_000 && /refused the authorization code/.test(landed.html);
    findings.expect(landed.status === 200 || codeOutlived, 'a consented partner link lands on the callback', () => `${landed.status} ${landed.html.slice(0, 200)}`, [member.index]);
  } catch (error) {
    findings.trace(member.index, `  consent failed: ${(error as Error).message.slice(0, 120)}`); // the rails or the API restarting
  }
}

export async function runOp(world: World, member: Member, op: Op): Promise<void> {
  world.stats.ops++;
  switch (op.kind) {
    case 'faucet': return faucet(world, member, op);
    case 'internal': case 'chain': case 'bank': return transfer(world, member, op);
    case 'fx': return fx(world, member, op);
    case 'add_funds': case 'send': return payment(world, member, op);
    case 'public_quote': {
      const amount = money(op.cents);
      const sentAt = Date.now();
      const answer = await world.http.send(member.index, 'POST', '/v1/fx/quotes', { from_currency: op.from, to_currency: op.to, from_amount: amount });
      if (typeof answer !== 'string' && answer.status === 200) {
        world.rates.observe(`public quote ${amount} ${op.from}->${op.to}`, member.index, op.from, op.to, answer.body, sentAt, Date.now());
        const want = payoutAt(amount, answer.body.rate);
        world.findings.expect(want.isEqualTo(answer.body.to_amount), 'a quote gives the amount at its rate, rounded down', () => `public quote ${amount} ${op.from}->${op.to}: ${JSON.stringify(answer.body)}`, [member.index]);
      }
      return;
    }
    case 'link': return link(world, member, op.partner);
    case 'batch': return runBatchOp(world, member, op);
    case 'alert_create': case 'alert_flood': case 'alert_delete': return runAlertOp(world, member, op);
    case 'reverse': return runReversalOp(world, member, op);
    case 'wallet_create': case 'wallet_transfer': case 'hold': case 'capture': case 'void': case 'capture_void_race': case 'captures_race': return runWalletOp(world, member, op);
    case 'webhook_read': return lookup(world, member, '/v1/webhooks', member.webhookId, op.form, (b) => b?.id);
    case 'lookup': {
      const list = op.what === 'transfer' ? member.transfers : op.what === 'payment' ? member.payments : member.quotes;
      if (list.length === 0) return;
      const id = list[Math.floor(op.pick * list.length)];
      const path = op.what === 'transfer' ? '/v1/transfers' : op.what === 'payment' ? '/v1/payments' : '/v1/fx/quotes';
      return lookup(world, member, path, id, op.form, (b) => (op.what === 'transfer' ? b?.transfer_id : b?.id));
    }
  }
}
