// Drives the live flame graph of record --serve in headless Chromium: the page says it is live,
// reloads itself, and after a reload of its own shows the workload's functions; while its reader
// is zoomed in it does not reload, and once zoomed out again it does.
// Usage: node serve.test.mjs URL FUNCTION..., URL a recording's server (tests/e2e/serve-browser.sh)
// of a workload whose stacks hold the functions named (its page reloading every 5 s, the default).
import assert from 'node:assert/strict';
import { run, step } from './browser.mjs';

const [url, ...functions] = process.argv.slice(2);
const REFRESH_MS = 5000;

await run({ viewport: { width: 1280, height: 600 } }, async (page) => {
	page.setDefaultTimeout(30000);
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	const ready = () => page.waitForFunction(() => window.hotstackFlame !== undefined);
	const api = (fn, ...args) => page.evaluate(([f, a]) => window.hotstackFlame[f](...a), [fn, args]);
	// A mark in the document, which a reload takes away.
	const mark = () => page.evaluate(() => { window.hotstackMark = 1; });
	const marked = () => page.evaluate(() => window.hotstackMark === 1);

	await page.goto(url);
	await ready();
	assert.match(await page.locator('#subtitle').textContent(), /^Live: reloads every 5 s/);
	step('the page says it is live');

	// a reload of the page's own: the next load event, with no navigation asked for here
	await mark();
	const t0 = Date.now();
	await page.waitForEvent('load', { timeout: 4 * REFRESH_MS });
	await ready();
	assert.equal(await marked(), false);
	step(`reloaded itself after ${Date.now() - t0} ms`);
	for (const f of functions)
		assert.ok((await api('find', f)).length > 0, `no frame ${f} in the flame graph`);
	step('the flame graph shows ' + functions.join(', '));

	// zoomed in: no reload for more than two periods
	const ids = await api('find', functions[0]);
	await api('zoom', ids[0]);
	assert.notEqual(await api('zoomed'), 0);
	await mark();
	await page.waitForTimeout(2 * REFRESH_MS + 1000);
	assert.equal(await marked(), true, 'reloaded while zoomed');
	step('no reload while zoomed');
	// zoomed out: it reloads again
	const load = page.waitForEvent('load', { timeout: 4 * REFRESH_MS });
	await api('zoom', 0);
	await load;
	await ready();
	assert.equal(await marked(), false);
	step('reloads again once zoomed out');
	assert.deepEqual(errors, [], 'no script errors');
});
