// Drives hotstack's HTML (canvas) flame graph of a profile of 100,000 distinct stacks in headless
// Chromium: it loads in seconds, and hover (tooltip and details), click to zoom (and out through
// an ancestor), Reset Zoom, search from the search box and from Ctrl-F, and Esc all work and
// answer quickly.
// Usage: node flame-html.test.mjs GRAPH.html, GRAPH.html drawn from the folded stacks
// tests/e2e/flame-html-browser.sh generates: "big;main;group_{i%100};sub_{i%1000};leaf_i 1+i%5"
// for i < 100000, and "big;main;hot;spin 300000".
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run, step } from './browser.mjs';

const htmlPath = resolve(process.argv[2] ?? 'flame.html');
const TOTAL = 600000, FULL = 1180; // 1200 pixels less 10 of padding each side
const MATCH = [230, 0, 230];

await run({ viewport: { width: 1280, height: 400 } }, async (page) => {
	page.setDefaultTimeout(20000);
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	const t0 = Date.now();
	await page.goto(pathToFileURL(htmlPath).href);
	await page.waitForFunction(() => window.hotstackFlame !== undefined);
	const loadMs = Date.now() - t0;
	const count = await page.evaluate(() => window.hotstackFlame.count());
	// all, big, main, 100 groups, 1000 subs, 100000 leaves, hot, spin: nothing merged
	assert.equal(count, 3 + 100 + 1000 + 100000 + 2);
	assert.ok(loadMs < 15000, `loaded in ${loadMs} ms`);
	step(`${count} frames loaded and drawn in ${loadMs} ms`);

	const api = (fn, ...args) => page.evaluate(([f, a]) => window.hotstackFlame[f](...a), [fn, args]);
	const only = async (name) => {
		const ids = await api('find', name);
		assert.equal(ids.length, 1, 'one frame ' + name);
		return ids[0];
	};
	const box = async (name) => api('box', await only(name));
	const center = (b) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 });
	// The canvas pixel at a page point.
	const pixel = (p) =>
		page.evaluate(({ x, y }) => {
			const c = document.getElementById('flame'), r = c.getBoundingClientRect(), s = c.width / r.width;
			return Array.from(c.getContext('2d').getImageData(Math.floor((x - r.left) * s), Math.floor((y - r.top) * s), 1, 1).data.slice(0, 3));
		}, p);
	const hex = (rgb) => '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
	const fillOf = (name) =>
		page.evaluate((n) => {
			const d = JSON.parse(document.getElementById('flamedata').textContent);
			return d.colors[d.names.indexOf(n)];
		}, name);

	// Drawn as written: hot is half of the width, in its colour.
	let hot = await box('hot');
	assert.ok(Math.abs(hot.w - FULL / 2) < 0.01, 'hot is ' + hot.w + ' wide');
	assert.equal(hex(await pixel(center(hot))), await fillOf('hot'));
	assert.ok(Math.abs((await box('main')).w - FULL) < 0.01);
	step('initial layout');

	await page.mouse.move(center(hot).x, center(hot).y);
	await page.locator('#tooltip').waitFor({ state: 'visible' });
	assert.equal(await page.locator('#tooltip').textContent(), 'hot (300000 samples, 50.00%)');
	assert.equal(await page.locator('#details').textContent(), 'Function: hot (300000 samples, 50.00%)');
	const g7 = await box('group_7');
	await page.mouse.move(center(g7).x, center(g7).y);
	assert.equal(await page.locator('#tooltip').textContent(), 'group_7 (3000 samples, 0.50%)');
	await page.mouse.move(5, 5);
	await page.locator('#tooltip').waitFor({ state: 'hidden' });
	step('tooltip and details on hover');

	// Click zooms: hot and spin span the width, ancestors stay, the rest is gone.
	const t1 = Date.now();
	await page.mouse.click(center(hot).x, center(hot).y);
	assert.equal(await api('zoomed'), await only('hot'));
	assert.ok(Math.abs((await box('spin')).w - FULL) < 0.01);
	assert.ok(Math.abs((await box('main')).w - FULL) < 0.01, 'the ancestors span the width');
	assert.equal(await box('group_7'), null, 'a sibling of hot is not shown');
	assert.ok(await page.locator('#unzoom').isVisible());
	const zoomMs = Date.now() - t1;
	// the label of a frame that now has room
	const spinLabel = await page.evaluate(() => {
		const i = window.hotstackFlame.find('spin')[0];
		return window.hotstackFlame.box(i).w > 100;
	});
	assert.ok(spinLabel);
	step(`click zooms (${zoomMs} ms with the checks)`);

	// Clicking an ancestor zooms out to it.
	const main = await box('main');
	await page.mouse.click(center(main).x, center(main).y);
	assert.equal(await api('zoomed'), await only('main'));
	hot = await box('hot');
	assert.ok(Math.abs(hot.w - FULL / 2) < 0.01);
	assert.ok((await box('group_7')) !== null);
	step('click on an ancestor zooms out to it');

	// Zoom into a small frame: its leaves get room.
	await api('zoom', await only('sub_7'));
	const leaf = await box('leaf_7');
	assert.ok(leaf && leaf.w > FULL / 200, 'leaf_7 is ' + (leaf && leaf.w) + ' wide under sub_7');
	await page.locator('#unzoom').click();
	assert.equal(await api('zoomed'), 0);
	assert.ok(await page.locator('#unzoom').isHidden());
	step('Reset Zoom');

	// Search from the box: hot and group_7, 300000 + 3000 of 600000.
	await page.locator('#searchbox').fill('^(hot|group_7)$');
	await page.locator('#searchbox').press('Enter');
	assert.equal(await page.locator('#matched').textContent(), 'Matched: 50.50%');
	assert.deepEqual(await pixel(center(await box('hot'))), MATCH);
	assert.notDeepEqual(await pixel(center(await box('spin'))), MATCH);
	assert.ok(await page.locator('#resetsearch').isVisible());
	step('search highlights the matches and sums them');

	// A match inside a match counts once; Ctrl-F focuses the box.
	await page.keyboard.press('Control+f');
	assert.equal(await page.evaluate(() => document.activeElement.id), 'searchbox');
	await page.keyboard.type('^(group_7|sub_7|leaf_7)$');
	const t2 = Date.now();
	await page.keyboard.press('Enter');
	await page.waitForFunction(() => document.getElementById('matched').textContent === 'Matched: 0.50%');
	const searchMs = Date.now() - t2;
	assert.notDeepEqual(await pixel(center(await box('hot'))), MATCH);
	step(`Ctrl-F searches; nested matches count once (${searchMs} ms)`);

	await page.locator('#flame').click({ position: { x: 2, y: 2 } });
	await page.keyboard.press('Escape');
	assert.equal(await page.locator('#matched').textContent(), '');
	assert.ok(await page.locator('#resetsearch').isHidden());
	assert.equal(hex(await pixel(center(await box('hot')))), await fillOf('hot'));
	step('Esc resets the search');

	// Responsive: a redraw of the whole graph, a search over every name.
	const times = await page.evaluate(() => {
		const f = window.hotstackFlame, t = [];
		let s = performance.now();
		for (let k = 0; k < 5; k++)
			f.zoom(k % 2 ? 0 : 2);
		t.push((performance.now() - s) / 5);
		s = performance.now();
		f.search('leaf_1');
		t.push(performance.now() - s);
		f.resetSearch();
		return t;
	});
	assert.ok(times[0] < 500 && times[1] < 1000, `redraw ${times[0]} ms, search ${times[1]} ms`);
	step(`redraw ${times[0].toFixed(1)} ms, search ${times[1].toFixed(1)} ms`);
	assert.deepEqual(errors, [], 'no script errors');
});
