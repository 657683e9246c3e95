// Amounts stay decimal strings, as the API sends them (STYLE.md: never a float): the one sum the
// dashboard does, an adjustment's amount (statement − ledger), is exact in integer minor units.
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** `a − b` for two decimal strings, with as many decimals as the longer of them. */
export function minus(a: string, b: string): string {
  const [left, right] = [DECIMAL.exec(a.trim()), DECIMAL.exec(b.trim())];
  if (!left || !right) throw new Error(`not a decimal amount: ${left ? b : a}`);
  const scale = Math.max(left[3]?.length ?? 0, right[3]?.length ?? 0);
  const units = (m: RegExpExecArray) => BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(scale, '0')}`);
  const difference = units(left) - units(right);
  const digits = (difference < 0n ? -difference : difference).toString().padStart(scale + 1, '0');
  const sign = difference < 0n ? '-' : '';
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
