// Who resolved an exception names the credential (issue 39): the master key, an API key by its id,
// a dashboard session by its user; and one meaning of `to` on every route: a calendar date
// includes its UTC day, an instant is exact.
import assert from 'node:assert/strict';
import { resolutionFingerprint } from '../../src/reconciliation/exceptions';
import { instantOf, windowEndOf } from '../../src/http/dates';
import { credentialName } from '../../src/reconciliation/exception-routes';

describe('reconciliation exceptions: resolved_by, request identity, windows', () => {
  it('names the credential that resolved, never kind:kind', () => {
    assert.equal(credentialName({ kind: 'master', credentialId: 'master', accountId: null }), 'master_key');
    assert.equal(credentialName({ kind: 'secret', credentialId: 'key_123', accountId: 'acc_1' }), 'key:key_123');
    assert.equal(credentialName({ kind: 'restricted', credentialId: 'key_456', accountId: 'acc_1' }), 'key:key_456');
    assert.equal(credentialName({ kind: 'session', credentialId: 'session:acc_9', accountId: 'acc_9' }), 'session:acc_9');
  });

  it('tells two resolve requests apart by their body, not by who sent them', () => {
    const asked = { resolution: 'adjusted', note: 'fee is ours' } as const;
    assert.equal(resolutionFingerprint(asked), resolutionFingerprint({ ...asked }));
    assert.notEqual(resolutionFingerprint(asked), resolutionFingerprint({ ...asked, note: 'other' }));
    assert.notEqual(resolutionFingerprint({ resolution: 'matched', note: 'n', statementLineId: 'a' }), resolutionFingerprint({ resolution: 'matched', note: 'n', ledgerEntryId: 'a' }));
  });

  it('ends a window after the whole day a calendar date in to names, and exactly at an instant', () => {
    assert.equal(windowEndOf('2026-11-25', 'to').toISOString(), '2026-11-26T00:00:00.000Z');
    assert.equal(windowEndOf('2026-11-25T10:15:00Z', 'to').toISOString(), '2026-11-25T10:15:00.000Z');
    assert.equal(instantOf('2026-11-25', 'from').toISOString(), '2026-11-25T00:00:00.000Z');
    assert.throws(() => windowEndOf('2026-02-30', 'to'), /not a calendar date/);
  });
});
