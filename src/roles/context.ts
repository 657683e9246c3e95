// What roles of one process share (DESIGN.md section 3): each role's starter may read it, and
// the mock rails fill it in before the roles that call them start (src/roles/index.ts).
import type { MockRails } from '../mock-rails/server';
import type { NotificationHub } from '../notifications/hub';

export interface ProcessContext {
  /** The process's one hub: the notifier role feeds it, the API's event streams read it. */
  hub: NotificationHub;
  /** This process's own mock rails, when it runs them (they may have taken a free port). */
  rails: MockRails | undefined;
  /** What the role now starting is waiting for, named in the warning of a start that takes long. */
  step: string;
}
