// Drives a hotstack SVG flame graph in headless Chromium: hover details, click to zoom, reset,
// regular-expression search from the Search control and from Ctrl-F, reset search.
// Usage: node flame.test.mjs GRAPH.svg, where GRAPH.svg was drawn from
// tests/fixtures/flame-small.folded (run by tests/e2e/flame-browser.sh).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run, step } from './browser.mjs';

const svgPath = resolve(process.argv[2] ?? 'flame.svg');
const MATCH_FILL = 'rgb(230,0,230)';
const FULL = 1180; // the default 1200 pixels less 10 of padding each side

await run({}, async (page) => {
	page.setDefaultTimeout(10000);
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(pathToFileURL(svgPath).href);
	await page.waitForFunction(() => window.hotstackFlame !== undefined);

	// The frame whose title is "NAME (N samples, P%)" with that count (names repeat).
	const frame = (name, count) =>
		page.locator('g.frame').filter({
			has: page.locator('title', { hasText: new RegExp('^' + name + ' \\(' + (count ?? '\\d+') + ' samples, ') }),
		});
	const rect = async (loc) => {
		assert.equal(await loc.count(), 1, 'exactly one such frame');
		return loc.locator('rect').evaluate((r) => ({
			x: Number(r.getAttribute('x')),
			width: Number(r.getAttribute('width')),
			fill: r.getAttribute('fill'),
		}));
	};
	const classes = async (loc) => (await loc.getAttribute('class')).split(/\s+/);
	// Every label fits in its box.
	const labelsFit = () =>
		page.evaluate(() => {
			const bad = [];
			for (const g of document.querySelectorAll('g.frame:not(.hide)')) {
				const t = g.querySelector('text'), r = g.querySelector('rect');
				if (t && t.textContent && t.getComputedTextLength() > Number(r.getAttribute('width')))
					bad.push(t.textContent);
			}
			return bad;
		});

	// Drawn as written.
	assert.equal((await rect(frame('all'))).width, FULL);
	assert.equal((await rect(frame('render'))).width, FULL * 80 / 200);
	assert.ok((await classes(frame('sys_write'))).includes('kernel'), 'sys_write_[k] is a kernel frame');
	assert.deepEqual(await labelsFit(), []);
	assert.ok(await page.locator('#unzoom').evaluate((e) => e.classList.contains('hide')));
	step('initial layout');

	await frame('draw', 50).locator('rect').hover();
	assert.equal(await page.locator('#details').textContent(), 'Function: draw (50 samples, 25.00%)');
	await frame('sys_write').locator('rect').hover();
	assert.match(await page.locator('#details').textContent(), /^Function: sys_write \[kernel\] \(50 samples, 25\.00%\)$/);
	step('details on hover');

	// Zoom into render: full width, its children scaled, ancestors dimmed, the rest hidden.
	await frame('render').locator('rect').click();
	let r = await rect(frame('render'));
	assert.equal(r.x, 10);
	assert.equal(r.width, FULL);
	assert.equal((await rect(frame('draw', 50))).width, FULL * 50 / 80);
	assert.equal((await rect(frame('draw_text'))).width, FULL * 20 / 80);
	assert.ok(await frame('parse', 40).isHidden(), 'sibling parse hidden');
	assert.ok((await classes(frame('parse', 40))).includes('hide'));
	assert.ok(await frame('init').isHidden(), 'sibling init hidden');
	assert.ok(await frame('worker').isHidden(), 'other thread hidden');
	for (const name of ['main', 'app', 'all']) {
		assert.ok(await frame(name).isVisible(), name + ' visible');
		assert.ok((await classes(frame(name))).includes('parent'), name + ' dimmed');
		assert.equal((await rect(frame(name))).width, FULL);
	}
	assert.ok(await page.locator('#unzoom').isVisible());
	assert.deepEqual(await labelsFit(), []);
	step('click zooms into a frame');

	// Clicking a dimmed ancestor zooms out to it.
	await frame('main').locator('rect').click();
	assert.equal((await rect(frame('render'))).width, FULL * 80 / 125);
	assert.ok(await frame('parse', 40).isVisible());
	assert.ok(await frame('worker').isHidden());
	step('click on an ancestor zooms out to it');

	await page.locator('#unzoom').click();
	r = await rect(frame('render'));
	assert.equal(r.width, FULL * 80 / 200);
	assert.equal(r.x, 10 + FULL * 45 / 200);
	for (const name of ['parse', 'worker', 'init', 'main']) {
		const loc = frame(name).first();
		assert.ok(await loc.isVisible(), name + ' visible again');
		assert.ok(!(await classes(loc)).includes('parent'));
	}
	assert.ok(await page.locator('#unzoom').isHidden());
	step('Reset Zoom');

	// A frame too narrow for a label gets one when a zoom makes room.
	const label = (loc) => loc.evaluate((g) => g.querySelector('text')?.textContent ?? null);
	assert.ok(!(await label(frame('next_token'))), 'no label at 12 pixels');
	await frame('lex', 30).locator('rect').click();
	const w = (await rect(frame('next_token'))).width;
	assert.ok(Math.abs(w - FULL * 2 / 30) < 0.01, 'next_token is ' + w + ' wide');
	assert.equal(await label(frame('next_token')), 'next_token');
	assert.deepEqual(await labelsFit(), []);
	await page.locator('#unzoom').click();
	assert.ok(!(await label(frame('next_token'))), 'no label again');
	step('zooming in labels frames that had no room');

	// Search: parse and lex, where each lex is inside a parse: 40 + 25 of 200, not 120.
	const matches = () =>
		page.locator('g.frame.match > title').evaluateAll((ts) => ts.map((t) => t.textContent).sort());
	page.once('dialog', (d) => d.accept('^(parse|lex)$'));
	await page.locator('#search').click();
	assert.deepEqual(await matches(), [
		'lex (25 samples, 12.50%)', 'lex (30 samples, 15.00%)',
		'parse (25 samples, 12.50%)', 'parse (40 samples, 20.00%)',
	]);
	for (const [name, count] of [['parse', 40], ['parse', 25], ['lex', 30], ['lex', 25]])
		assert.equal((await rect(frame(name, count))).fill, MATCH_FILL);
	assert.notEqual((await rect(frame('read'))).fill, MATCH_FILL);
	assert.notEqual((await rect(frame('main'))).fill, MATCH_FILL);
	assert.equal(await page.locator('#matched').textContent(), 'Matched: 32.50%');
	assert.ok(await page.locator('#resetsearch').isVisible());
	step('Search highlights matches and counts nested ones once');

	const readFill = (await rect(frame('read'))).fill;
	page.once('dialog', (d) => d.accept('^draw'));
	await page.keyboard.press('Control+f');
	assert.deepEqual(await matches(), ['draw (50 samples, 25.00%)', 'draw_text (20 samples, 10.00%)']);
	assert.notEqual((await rect(frame('parse', 40))).fill, MATCH_FILL);
	assert.equal(await page.locator('#matched').textContent(), 'Matched: 35.00%');
	step('Ctrl-F searches');

	await page.locator('#resetsearch').click();
	assert.deepEqual(await matches(), []);
	assert.notEqual((await rect(frame('draw', 50))).fill, MATCH_FILL);
	assert.equal((await rect(frame('read'))).fill, readFill);
	assert.equal((await page.locator('#matched').textContent()).trim(), '');
	assert.ok(await page.locator('#resetsearch').isHidden());
	step('Reset Search');

	assert.deepEqual(errors, [], 'no script errors');
});
