// Opens a tall flame graph (SVG or HTML) in headless Chromium in a 1200x700 window and checks
// what a person sees first: the base frame "all" inside the window, though the graph is taller.
// Usage: node flame-view.test.mjs GRAPH.svg|GRAPH.html (run by tests/e2e/flame-open.sh).
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run } from './browser.mjs';

const file = resolve(process.argv[2]);
await run({ viewport: { width: 1200, height: 700 } }, async (page) => {
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(pathToFileURL(file).href);
	await page.waitForFunction(() => window.hotstackFlame !== undefined);
	const seen = await page.evaluate(() => {
		const tall = document.documentElement.getBoundingClientRect().height;
		let box;
		if (window.hotstackFlame.box) {
			box = window.hotstackFlame.box(0); // the HTML view: frame 0 is "all"
		} else {
			const r = document.querySelector('g.frame rect').getBoundingClientRect();
			box = { y: r.top, h: r.height };
		}
		const title = document.getElementById('title').getBoundingClientRect();
		return { tall, inner: window.innerHeight, y: box.y, h: box.h, titleTop: title.top };
	});
	assert.ok(seen.tall > seen.inner * 1.5, `the graph is tall (${seen.tall} px in a ${seen.inner} px window)`);
	assert.ok(seen.y >= 0 && seen.y + seen.h <= seen.inner, `"all" in the first view (at ${seen.y})`);
	console.log(`ok - "all" at ${Math.round(seen.y)} px of ${seen.inner}, graph ${Math.round(seen.tall)} px tall`);
	if (file.endsWith('.html')) {
		assert.ok(seen.titleTop >= 0 && seen.titleTop < seen.inner, 'the title bar stays in view');
		console.log('ok - the title bar in view');
	}
	assert.deepEqual(errors, []);
});
