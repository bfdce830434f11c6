// Opens hotstack's speedscope JSON in the speedscope app (the `speedscope` npm package, served
// from a local HTTP server with #profileURL=) in headless Chromium, and reads what it shows:
// one profile per thread with its total weight, the functions of each in the Sandwich view with
// their totals, a search that narrows them.
// Usage: node speedscope.test.mjs SMALL.speedscope.json [THREADS.speedscope.json], SMALL
// converted from tests/fixtures/flame-small.folded, THREADS recorded from tests/workloads/threads
// (run by tests/e2e/speedscope-browser.sh).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, step } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const app = join(here, 'node_modules', 'speedscope', 'dist', 'release');
const small = resolve(process.argv[2]);
const threads = process.argv[3] ? resolve(process.argv[3]) : null;
const types = {
	'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
	'.woff2': 'font/woff2', '.png': 'image/png', '.ico': 'image/x-icon', '.wasm': 'application/wasm',
};

// The app's files, and the profiles under /profiles/.
const profiles = { 'small.json': small, 'threads.json': threads };
const server = createServer((req, res) => {
	const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
	const file = path.startsWith('/profiles/') ? profiles[path.slice(10)] : join(app, path);
	if (!file || !file.startsWith(path.startsWith('/profiles/') ? '/' : app) || !existsSync(file)) {
		res.writeHead(404);
		res.end();
		return;
	}
	res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
	res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

// The Sandwich view's rows: {name: [total, self]}.
async function sandwich(page) {
	const text = await page.evaluate(() => document.body.innerText);
	const rows = {};
	// counts, or times as speedscope formats them ("1.20ms"), in nanoseconds
	const re = /([\d.]+)(ns|µs|ms|s|min|h)? \([^)]*\)\s+([\d.]+)(ns|µs|ms|s|min|h)? \([^)]*\)\s+(\S+)/g;
	const scale = { ns: 1, µs: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 };
	for (let m; (m = re.exec(text));)
		rows[m[5]] = [Number(m[1]) * (m[2] ? scale[m[2]] : 1), Number(m[3]) * (m[4] ? scale[m[4]] : 1)];
	return rows;
}

// The Sandwich view's rows once DONE(rows) holds, or as they are after 15 s. The table is drawn
// a frame or more after its header, later still on a busy machine.
async function sandwichWhen(page, done) {
	const end = Date.now() + 15000;
	for (;;) {
		const rows = await sandwich(page);
		if (done(rows) || Date.now() > end)
			return rows;
		await page.waitForTimeout(100);
	}
}

// The profile selector's rows: [[name, total weight]], once it shows N of them, or as it is
// after 15 s.
async function profileList(page, current, n) {
	await page.getByText(current, { exact: false }).first().click();
	// a count, or a time as speedscope formats one ("154.31ms"), in nanoseconds
	const re = /^(\d+)\t(.+)\t([\d.]+)(ns|µs|ms|s|min|h)?$/gm;
	const scale = { ns: 1, µs: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 };
	const end = Date.now() + 15000;
	for (;;) {
		const text = await page.evaluate(() => document.body.innerText);
		const rows = [];
		for (let m; (m = re.exec(text));)
			rows.push([m[2], Number(m[3]) * (m[4] ? scale[m[4]] : 1)]);
		if (rows.length >= n || Date.now() > end)
			return rows;
		await page.waitForTimeout(100);
	}
}

// Ctrl+F, then the text typed once the search box has the focus: typed before, on a busy
// machine, its letters would go to the flame graph (where some are shortcuts)
async function search(page, text) {
	await page.keyboard.press('Control+f');
	await page.waitForFunction(() => document.activeElement && document.activeElement.tagName === 'INPUT');
	await page.keyboard.type(text);
}

async function open(page, name) {
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profiles/' + name)}`);
	await page.getByText('Sandwich').waitFor();
	return errors;
}

await run({}, async (page, context) => {
	page.setDefaultTimeout(15000);
	const errors = await open(page, 'small.json');
	// two threads ("app" and "worker" in the folded input), app first
	await page.getByText('app (1/2)').waitFor();
	step('speedscope loads the profile, one profile per thread');

	await page.getByText('Sandwich').click();
	await page.getByText('Symbol Name').waitFor();
	let rows = await sandwichWhen(page, (r) => 'main' in r);
	assert.deepEqual(rows, {
		draw: [50, 50], lex: [30, 28], draw_text: [20, 20], render: [80, 10], read: [10, 10],
		init: [5, 5], next_token: [2, 2], parse: [40, 0], main: [125, 0],
	});
	step('Sandwich view: the functions of app with their totals and self weights');

	await search(page, 'draw');
	await page.waitForFunction(() => !document.body.innerText.includes('next_token'));
	rows = await sandwich(page);
	assert.deepEqual(rows, { draw: [50, 50], draw_text: [20, 20] });
	await page.keyboard.press('Escape');
	await page.waitForFunction(() => document.body.innerText.includes('next_token'));
	step('search narrows the functions to the matches');

	assert.deepEqual(await profileList(page, 'app (1/2)', 2), [['app', 125], ['worker', 75]]);
	await page.getByText('worker', { exact: true }).click();
	await page.getByText('worker (2/2)').waitFor();
	rows = await sandwichWhen(page, (r) => 'thread_start' in r);
	assert.deepEqual(rows, { sys_write: [50, 50], lex: [25, 25], parse: [25, 0], work: [75, 0], thread_start: [75, 0] });
	step('the second thread: its own functions and weights');
	assert.deepEqual(errors, [], 'no script errors');

	if (threads) {
		const want = JSON.parse(readFileSync(threads, 'utf8'));
		// a new page: only the hash would change, and speedscope loads a profile once
		await page.close();
		const page2 = await context.newPage();
		page2.setDefaultTimeout(15000);
		const errs = await open(page2, 'threads.json');
		const first = want.profiles[want.activeProfileIndex].name;
		const n = want.profiles.length;
		await page2.getByText(`${first} (${want.activeProfileIndex + 1}/${n})`).waitFor();
		const list = await profileList(page2, first, n);
		// weighed in nanoseconds (hotstack writes CPU time), shown rounded to 3 or 4 digits
		assert.equal(want.profiles[0].unit, 'nanoseconds');
		assert.deepEqual(list.map(([name]) => name), want.profiles.map((p) => p.name));
		want.profiles.forEach((p, i) => {
			const total = p.weights.reduce((a, b) => a + b, 0);
			assert.ok(Math.abs(list[i][1] - total) <= total * 0.01, `${p.name}: ${list[i][1]} shown, ${total} written`);
		});
		const spinners = list.filter(([name]) => /^spin-\d \(\d+\/\d+\)$/.test(name));
		assert.ok(spinners.length >= 2, 'a profile per spinning thread: ' + JSON.stringify(list));
		await page2.getByText(spinners[0][0], { exact: true }).click();
		await page2.getByText('Sandwich').click();
		await page2.getByText('Symbol Name').waitFor();
		const fn = 'spin_thread_' + spinners[0][0].slice(5, 6);
		rows = await sandwichWhen(page2, (r) => fn in r);
		assert.ok(rows[fn] && rows[fn][0] > 0, fn + ' in the Sandwich view of its thread: ' + JSON.stringify(rows));
		assert.deepEqual(errs, [], 'no script errors');
		step(`a recording of ${spinners.length} threads: one profile each, with its spinner`);
	}
}, () => server.close());
