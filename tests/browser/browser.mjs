// What the browser tests share: headless Chromium through playwright-core, at $CHROMIUM
// (/usr/bin/chromium unless set), with a user data directory of its own under $TMPDIR, and a
// test run in it that exits 1 on a failure and 0 otherwise.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

// Prints a step passed: "ok - WHAT".
export const step = (what) => console.log('ok - ' + what);

// Starts Chromium with OPTIONS (playwright's, e.g. viewport) added to its own and runs
// TEST(page, context) in it, page the window it opens on. Then closes it, runs CLEANUP where
// given, removes the user data directory and exits: 1 where TEST threw (the error printed), else
// 0.
export async function run(options, test, cleanup) {
	const userDataDir = mkdtempSync(join(process.env.TMPDIR || tmpdir(), 'hotstack-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
		headless: true,
		...options,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	let failed = false;
	try {
		await test(context.pages()[0] ?? (await context.newPage()), context);
	} catch (e) {
		failed = true;
		console.error(e);
	} finally {
		await context.close();
		cleanup?.();
		rmSync(userDataDir, { recursive: true, force: true });
	}
	process.exit(failed ? 1 : 0);
}
