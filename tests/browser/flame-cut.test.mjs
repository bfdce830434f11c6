// Opens a flame graph whose deep stack holds little (drawn from the folded text that
// tests/e2e/flame-open.sh writes: a hot shallow part and a cold 60-deep tower) in headless
// Chromium: the graph opens short with the tower cut at a dashed frame, its deep frames
// hidden; a click on the dashed frame shows the whole tower, the drawing grown to hold it and
// its root still inside; Reset Zoom cuts it again.
// Usage: node flame-cut.test.mjs GRAPH.svg
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run } from './browser.mjs';

const file = resolve(process.argv[2]);
await run({ viewport: { width: 1200, height: 800 } }, async (page) => {
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(pathToFileURL(file).href);
	await page.waitForFunction(() => window.hotstackFlame !== undefined);
	const look = () =>
		page.evaluate(() => {
			const svg = document.documentElement;
			const frame = (name) =>
				Array.from(document.querySelectorAll('g.frame')).find((g) =>
					g.querySelector('title').textContent.startsWith(name + ' ('));
			const box = (name) => {
				const g = frame(name);
				const r = g.querySelector('rect').getBoundingClientRect();
				return { hidden: getComputedStyle(g).display === 'none', top: r.top, bottom: r.bottom };
			};
			return {
				height: svg.getBoundingClientRect().height,
				cut: Array.from(document.querySelectorAll('g.frame.cut')).map((g) => g.querySelector('title').textContent),
				deep: box('imp59'),
				hot: box('hot'),
				main: box('main'),
				details: document.getElementById('details').textContent,
			};
		});
	let s = await look();
	assert.ok(s.height < 800, `the graph opens short: ${s.height} px`);
	assert.ok(s.deep.hidden, 'the deep cold frame is cut');
	assert.ok(!s.hot.hidden && s.hot.bottom <= 800, 'the hot frame is in the first screen');
	assert.equal(s.cut.length, 1, `one dashed frame: ${s.cut}`);
	assert.match(s.details, /rows are cut/);
	console.log(`ok - opens ${Math.round(s.height)} px tall, cut at ${s.cut[0]}`);

	await page.locator('g.frame.cut rect').click();
	s = await look();
	assert.ok(!s.deep.hidden, 'a click on the dashed frame shows the tower');
	assert.ok(s.height > 60 * 16, `the drawing grew to hold it: ${s.height} px`);
	assert.ok(s.deep.top >= 0 && s.main.bottom <= s.height, 'the tower is inside the drawing');
	assert.ok(s.deep.top < s.main.top, 'the tower grows up from its root');
	console.log(`ok - zoomed: ${Math.round(s.height)} px tall, the 60th frame at ${Math.round(s.deep.top)} px`);

	await page.locator('#unzoom').click();
	s = await look();
	assert.ok(s.deep.hidden && s.height < 800, 'Reset Zoom cuts the tower again');
	console.log('ok - reset cuts it again');
	assert.deepEqual(errors, []);
});
