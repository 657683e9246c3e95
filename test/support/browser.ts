// Debian's Chromium driven by playwright-core, for the pages a person uses: launched with the
// flags this machine's closed network needs, axe-core's serious and critical violations of a
// page, screenshots, a dashboard window that watches its Content-Security-Policy, and signing in
// to the dashboard through its own form.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { TEST_PASSWORD } from './accounts';

/** No background connections, no sandbox as root. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

/**
 * Chromium with one page at 1280 × 900, what that page's console said broke its
 * Content-Security-Policy, and the icon requests answered with an error (a browser reports each).
 */
export interface DashboardWindow { browser: Browser; page: Page; cspViolations: string[]; iconErrors: string[] }

export async function openDashboardWindow(): Promise<DashboardWindow> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const cspViolations: string[] = [];
  page.on('console', (message) => { if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) cspViolations.push(message.text()); });
  const iconErrors: string[] = [];
  page.on('response', (response) => { if (/favicon|icon/i.test(new URL(response.url()).pathname) && response.status() >= 400) iconErrors.push(`${response.status()} ${response.url()}`); });
  return { browser, page, cspViolations, iconErrors };
}

/** A dashboard window with `email` signed in through the form, on the overview. */
export async function openSignedInDashboard(baseUrl: string, email: string): Promise<DashboardWindow> {
  const window = await openDashboardWindow();
  await signInToDashboard(window.page, baseUrl, email, TEST_PASSWORD);
  return window;
}

/** Closes the browser (if it was opened), then fails if the page broke a rule of its Content-Security-Policy. */
export async function closeDashboardWindow(window: DashboardWindow | undefined): Promise<void> {
  await window?.browser.close();
  assertNoCspViolation(window);
}

export function assertNoCspViolation(window: DashboardWindow | undefined): void {
  assert.deepEqual(window?.cspViolations ?? [], [], 'the page broke no rule of its Content-Security-Policy');
  assert.deepEqual(window?.iconErrors ?? [], [], 'the page asked for no icon it is answered an error for');
}

/**
 * Where screenshots go: DASHBOARD_SCREENSHOTS_DIR (the README's were taken so). Unset, none is
 * taken: a screenshot checks nothing, and the suite's fifteen cost 3 s of Chromium's CPU.
 */
const SHOTS = process.env.DASHBOARD_SCREENSHOTS_DIR;

/** The whole page as it is now, as `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** One part of the page (a card), as `<name>.png`. */
export async function screenshotOf(part: Locator, name: string): Promise<void> {
  if (SHOTS) await part.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

interface AxeViolation { id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the browser's debugging protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations)') as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** How far the page is wider than its window (0 or less: it fits), naming the outermost elements that stick out. */
export async function overflowOf(page: Page): Promise<{ overflow: number; sticking: string }> {
  return await page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const out = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > width + 0.5);
    const outermost = out.filter((e) => !out.includes(e.parentElement));
    return {
      overflow: document.documentElement.scrollWidth - width,
      sticking: outermost.slice(0, 3).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right) + 'px').join(', '),
    };
  })()`) as { overflow: number; sticking: string };
}

/**
 * No serious or critical accessibility violation on `page`, nothing wider than its window, and
 * with `tablesFitCards` every table inside its card.
 */
export async function expectPageAccessible(page: Page, what: string, { tablesFitCards = false } = {}): Promise<void> {
  assert.deepEqual(await accessibilityViolations(page), [], `${what}: no serious or critical accessibility violation`);
  const { overflow, sticking } = await overflowOf(page);
  assert.ok(overflow <= 0, `${what} is ${overflow} px wider than the window (${sticking})`);
  if (tablesFitCards) assert.deepEqual(await tablesOverflowingCards(page), [], `${what}: every table fits its card`);
}

/** Opens the dashboard and signs in with its form; resolves on the overview. */
export async function signInToDashboard(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  const form = page.getByRole('region', { name: 'Sign in' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Balances' }).waitFor();
}

/**
 * The tables of the page that do not fit their card: wider than the card's content box, or
 * cut off inside a box of their own (scrolled sideways); each named by its region's label.
 */
export async function tablesOverflowingCards(page: Page): Promise<string[]> {
  return await page.evaluate(`[...document.querySelectorAll('main table')].flatMap((table) => {
    const card = table.closest('.card');
    if (!card) return [];
    const style = getComputedStyle(card);
    const box = card.getBoundingClientRect();
    const left = box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
    const right = box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
    const own = table.getBoundingClientRect();
    const holder = table.parentElement;
    const over = Math.max(own.right - right, left - own.left, holder.scrollWidth - holder.clientWidth, table.scrollWidth - table.clientWidth);
    const name = table.closest('[aria-label]')?.getAttribute('aria-label') ?? card.querySelector('h2')?.textContent ?? 'a table';
    return over > 0.5 ? [name + ' by ' + Math.round(over) + ' px'] : [];
  })`) as string[];
}

/** What a person hears of the focused element: its aria-label, its label, or its text. */
export async function focusedName(page: Page): Promise<string> {
  return await page.evaluate(`(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return '';
    const label = e.getAttribute('aria-label') ?? (e.id ? document.querySelector('label[for="' + e.id + '"]')?.textContent : null) ?? e.closest('label')?.textContent ?? e.textContent;
    return (label ?? '').replace(/\\s+/g, ' ').trim();
  })()`) as string;
}

/** Presses Tab (Shift+Tab when `back`) until the focused element's name matches `name`, as a keyboard user moves. */
export async function tabTo(page: Page, name: RegExp, { back = false, limit = 80 } = {}): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    const focused = await focusedName(page);
    if (name.test(focused)) return;
    seen.push(focused);
  }
  throw new Error(`${name} is not reached by ${back ? 'Shift+Tab' : 'Tab'} in ${limit} presses; focus went through: ${seen.slice(0, 40).join(' | ')}`);
}
