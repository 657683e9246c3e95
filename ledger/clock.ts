// The wall's time for the ledger, which imports nothing of src/ (src/clock.ts is the service's):
// a round's own time, and the default of the rules that take `now`. An account on a test clock is
// decided at its clock's time, read with the round's facts (store/reads.ts roundFacts).

/** The wall's time now. */
export function wallNow(): Date {
  return new Date();
}

/** The wall's time in epoch milliseconds (timers, latencies). */
export function wallNowMs(): number {
  return Date.now();
}
