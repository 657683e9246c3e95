// The README's "Scheduled transfers" walk-through works as written: after the first session's steps
// (without its event stream), its shell block runs against the test's service and each step
// answers what the README says: a weekly schedule made, its first run made two seconds later (the
// test service's week lasts seven seconds, so the next is still to come), and the rest cancelled.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { runReadmeWalkthrough } from '../support/readme-script';

describe('the README\'s scheduled transfers', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const [made, read, cancelled]: any[] = await runReadmeWalkthrough(testService().baseUrl, '## Scheduled transfers', ['me', 'schedule']);
    assert.deepEqual([made.status, made.transfer.amount, made.repeat, made.runs], ['scheduled', '5.00', { every: 'week', count: 3 }, []]);
    assert.deepEqual([read.id, read.status, read.runs.map((r: { occurrence: number }) => r.occurrence)], [made.id, 'scheduled', [1]], 'the first run, and only it');
    assert.ok(['pending', 'created'].includes(read.runs[0].status), JSON.stringify(read.runs[0]));
    assert.equal(Date.parse(read.next_run_at) - Date.parse(read.run_at), 7_000, 'a week after run_at (the test service\'s week)');
    assert.deepEqual([cancelled.status, cancelled.next_run_at, cancelled.runs.length], ['cancelled', null, 1]);
  });
});
