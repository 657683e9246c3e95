// The claimless partner's pages a payee opens from a claim link (no token: it is a link), and the
// escaping every page of the rails uses for what it shows.
import type { ServerResponse } from 'node:http';
import { RailError, readForm } from './http';
import type { Exchange } from './rail';

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function htmlPage(res: ServerResponse, status: number, title: string, body: string): void {
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page), 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
  res.end(page);
}

/** The page a payee opens from a claim link: the amount, and a form to claim it (posted to this same address). */
export async function claimPage({ rail, res, id }: Exchange): Promise<void> {
  if (!rail.profile.issuesClaimLink) throw new RailError(404, 'not_found', 'no such route');
  const payment = await rail.payments.claimable(id);
  const amount = `${escapeHtml(payment.amount)} ${escapeHtml(payment.currency)}`;
  if (payment.status !== 'pending') {
    htmlPage(res, 410, 'This link can no longer be claimed', `<p>The payment of ${amount} is ${escapeHtml(payment.status)}.</p>`);
    return;
  }
  htmlPage(res, 200, `You have been sent ${amount}`, `<p>${escapeHtml(rail.profile.displayName)} holds ${amount} for you.</p>
<form method="post"><button type="submit" name="decision" value="claim">Claim ${amount}</button></form>`);
}

export async function claimPayment({ rail, req, res, id }: Exchange): Promise<void> {
  if (!rail.profile.issuesClaimLink) throw new RailError(404, 'not_found', 'no such route');
  const form = await readForm(req);
  if (form.get('decision') !== 'claim') throw new RailError(400, 'invalid_request', 'decision must be claim');
  const payment = await rail.payments.claim(id);
  htmlPage(res, 200, 'Claimed', `<p>${escapeHtml(payment.amount)} ${escapeHtml(payment.currency)} are on their way to you.</p>`);
}
