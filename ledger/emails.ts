// One form of an email address for every comparison the service makes: the account a sign-in
// finds, the buckets that limit and lock sign-in, the recipient a transfer names, a customer's
// uniqueness. Each once lower-cased in its own way (JavaScript here, Postgres's lower() there), and
// the two disagree outside ASCII: JavaScript makes "İ" an "i" and a combining dot, Postgres under a
// UTF-8 collation a plain "i", so an address spelled with it signed into an account whose lockout
// bucket it did not share. The form is NFKC (compatibility characters, such as full-width letters,
// become what they stand for) lower-cased, computed here and only here. Stored addresses are ASCII
// (the email format of every route that stores one, and a check in the database), on which
// Postgres's lower() and this agree, so SQL compares `lower(email)` with this form of what was sent.

/** The address as every comparison sees it: NFKC, lower-cased, NFKC again (lower-casing can decompose). */
export function canonicalEmail(email: string): string {
  return email.normalize('NFKC').toLowerCase().normalize('NFKC');
}
