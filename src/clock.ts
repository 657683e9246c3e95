// "Now" for the rules that depend on time (STYLE.md, "Time and tests"): they read it here, never
// from Date.now() behind its back. An account on a test clock (DESIGN.md section 5i) is to read
// its clock's time instead of the wall's, which is why the account is named and the answer is a
// promise (a clock's time lives in Postgres); until test clocks exist every account reads the wall.

/** The time now for `accountId`'s rules (a schedule's run_at, its due runs); without one, the wall's. */
export async function now(_accountId?: string): Promise<Date> {
  return new Date();
}
