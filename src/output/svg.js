// Interaction for hotstack's SVG flame graphs, compiled into svg.c: details on hover, click to
// zoom, regular-expression search. The frames are a flat list in depth-first order, root first;
// the tree is rebuilt from that order and each frame's depth, so offsets stay exact integers.
// The element ids and classes this relies on are listed at the top of svg.c.
(function () {
	'use strict';

	const byId = (id) => document.getElementById(id);
	const framesEl = byId('frames');
	if (!framesEl)
		return;
	const num = (name) => Number(framesEl.getAttribute('data-' + name));
	const width = num('width'), pad = num('pad'), top = num('top'), frameHeight = num('frame-height');
	// maxDepth: the deepest row drawn when nothing is zoomed; deeper frames are cut (svg.c)
	const maxDepth = num('max-depth'), charWidth = num('font-size') * 0.59;
	const minRows = num('min-rows') || Infinity, hotShare = num('hot-share') || 0;
	const inverted = framesEl.getAttribute('data-inverted') === '1';
	const unit = framesEl.getAttribute('data-unit');
	const matchFill = framesEl.getAttribute('data-match-fill');
	const details = byId('details'), unzoomEl = byId('unzoom'), matchedEl = byId('matched');
	const searchEl = byId('search'), resetSearchEl = byId('resetsearch');

	const els = Array.from(framesEl.querySelectorAll('g.frame'));
	const n = els.length;
	const names = new Array(n), fills = new Array(n), rects = new Array(n), texts = new Array(n);
	const kinds = new Array(n), value = new Float64Array(n), off = new Float64Array(n);
	const parent = new Int32Array(n), end = new Int32Array(n), used = new Float64Array(n);
	const depthOf = new Int32Array(n);
	const index = new Map();
	const last = [];
	// "NAME (N UNIT, P%)": the name is everything before the last such suffix.
	const titleRe = /^([\s\S]*) \((-?\d+) [\s\S]*, [\d.]+%\)$/;

	for (let i = 0; i < n; i++) {
		const g = els[i];
		const m = titleRe.exec(g.querySelector('title').textContent) || [null, '', '0'];
		rects[i] = g.querySelector('rect');
		texts[i] = g.querySelector('text');
		names[i] = m[1];
		value[i] = Number(m[2]);
		fills[i] = rects[i].getAttribute('fill');
		kinds[i] = g.classList.contains('inline') ? 'inlined' :
			g.classList.contains('kernel') ? 'kernel' : g.classList.contains('jit') ? 'JIT' : '';
		const row = Math.round((Number(rects[i].getAttribute('y')) - top) / frameHeight);
		const depth = inverted ? row : maxDepth - row;
		depthOf[i] = depth;
		const p = depth > 0 ? last[depth - 1] : -1;
		parent[i] = p;
		if (p >= 0) {
			off[i] = off[p] + used[p];
			used[p] += value[i];
		}
		last[depth] = i;
		last.length = depth + 1;
		end[i] = i;
		index.set(g, i);
	}
	for (let i = n - 1; i > 0; i--)
		if (parent[i] >= 0 && end[i] > end[parent[i]])
			end[parent[i]] = end[i];
	const total = n ? value[0] : 0;
	// A value as the text report prints it: times (nanoseconds) in ns, us, ms or s, counts as they are.
	const amount = (v, unit) => {
		if (unit !== 'nanoseconds')
			return v + ' ' + unit;
		if (Math.abs(v) < 1000)
			return v + ' ns';
		const names = ['ns', 'us', 'ms', 's'];
		let x = v, u = 0;
		for (; u + 1 < names.length && Math.abs(x) >= 999.5; u++)
			x /= 1000;
		const m = Math.abs(x);
		return x.toFixed(m >= 99.95 ? 0 : m >= 9.995 ? 1 : 2) + ' ' + names[u];
	};
	const percent = (v) => (total > 0 ? (100 * v) / total : 0).toFixed(2) + '%';

	// Labels: first by an average glyph width, then measured all at once (one layout rather than
	// one per frame) and shortened where the font turned out wider.
	function label(i, chars) {
		const s = names[i];
		if (chars < 3)
			return '';
		const cps = Array.from(s);
		return cps.length <= chars ? s : cps.slice(0, chars - 2).join('') + '..';
	}
	// Most frames are too narrow for a label and have no <text>; one is made when needed.
	function setLabel(i, s, x) {
		let t = texts[i];
		if (!t) {
			if (!s)
				return;
			t = texts[i] = document.createElementNS('http://www.w3.org/2000/svg', 'text');
			t.setAttribute('y', (Number(rects[i].getAttribute('y')) + frameHeight - 4.5).toFixed(1));
			els[i].appendChild(t);
		}
		t.setAttribute('x', (x + 3).toFixed(2));
		if (t.textContent !== s)
			t.textContent = s;
	}
	function fitLabels(shown, xs, widths) {
		const check = [];
		for (const i of shown) {
			const s = label(i, Math.floor(widths[i] / charWidth));
			setLabel(i, s, xs[i]);
			if (s)
				check.push(i);
		}
		for (let pass = 0; pass < 2 && check.length; pass++) {
			const over = check.filter((i) => texts[i].getComputedTextLength() > widths[i] - 4);
			for (const i of over) {
				const have = Array.from(texts[i].textContent).length;
				const w = texts[i].getComputedTextLength();
				const chars = Math.min(have - 1, Math.floor((have * (widths[i] - 4)) / w));
				texts[i].textContent = label(i, chars);
			}
			check.length = 0;
			check.push(...over.filter((i) => texts[i].textContent));
		}
	}

	// What each frame is now, so that only the frames that change are touched.
	const SHOWN = 0, PARENT = 1, HIDDEN = 2;
	const state = new Uint8Array(n);
	for (let i = 0; i < n; i++)
		state[i] = els[i].classList.contains('hide') ? HIDDEN : SHOWN;
	function setState(i, st) {
		if (state[i] === st)
			return;
		const cl = els[i].classList;
		cl.toggle('hide', st === HIDDEN);
		cl.toggle('parent', st === PARENT);
		state[i] = st;
	}

	// The rows shown under frame z: those of its frames up to minRows rows, and deeper its hot
	// ones (hotShare of z or more), as svg.c cut the whole graph; never fewer than at first.
	function levels(z) {
		if (z === 0)
			return maxDepth;
		let lv = Math.max(maxDepth, depthOf[z] + minRows - 1);
		let deepest = depthOf[z];
		for (let i = z; i <= end[z]; i++) {
			deepest = Math.max(deepest, depthOf[i]);
			if (value[i] >= hotShare * value[z])
				lv = Math.max(lv, depthOf[i]);
		}
		return Math.min(lv, Math.max(deepest, maxDepth));
	}
	// The drawing grows by the rows shown beyond the first ones: the frames move down (the
	// root stays at the bottom), and with them the lines under the graph.
	const svgEl = document.documentElement;
	const grown = [details, matchedEl].filter((e) => e);
	const base = {
		height: Number(svgEl.getAttribute('height')),
		ys: grown.map((e) => Number(e.getAttribute('y'))),
		bg: svgEl.querySelector('rect'),
	};
	const note = details.textContent;
	function grow(rows) {
		const extra = rows * frameHeight, h = base.height + extra, w = svgEl.getAttribute('width');
		svgEl.setAttribute('height', h);
		svgEl.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
		if (base.bg)
			base.bg.setAttribute('height', h);
		if (!inverted)
			framesEl.setAttribute('transform', extra ? 'translate(0,' + extra + ')' : '');
		grown.forEach((e, k) => e.setAttribute('y', base.ys[k] + extra));
	}

	let zoomed = 0;
	function draw(z) {
		const lv = levels(z);
		const scale = (width - 2 * pad) / value[z];
		const shown = [], xs = new Float64Array(n), widths = new Float64Array(n);
		for (let i = 0; i < n; i++) {
			let x, w;
			if (depthOf[i] > lv) {
				setState(i, HIDDEN);
				continue;
			}
			if (i >= z && i <= end[z]) {
				x = pad + (off[i] - off[z]) * scale;
				w = value[i] * scale;
				setState(i, SHOWN);
			} else if (i < z && end[i] >= z) {
				x = pad;
				w = width - 2 * pad;
				setState(i, PARENT);
			} else {
				setState(i, HIDDEN);
				continue;
			}
			rects[i].setAttribute('x', x.toFixed(2));
			rects[i].setAttribute('width', w.toFixed(2));
			xs[i] = x;
			widths[i] = w;
			shown.push(i);
		}
		fitLabels(shown, xs, widths);
		for (const i of shown)
			els[i].classList.toggle('cut', depthOf[i] === lv && i < end[i]);
		grow(lv - maxDepth);
		zoomed = z;
		unzoomEl.classList.toggle('hide', z === 0);
	}

	function describe(i) {
		const kind = kinds[i] ? ' [' + kinds[i] + ']' : '';
		const cut = els[i].classList.contains('cut') ? ', its callees cut: click to see them' : '';
		return 'Function: ' + names[i] + kind + ' (' + amount(value[i], unit) + ', ' + percent(value[i]) + ')' + cut;
	}

	let searchTerm = '';
	function search(term) {
		let re;
		try {
			re = new RegExp(term);
		} catch (e) {
			matchedEl.textContent = 'Invalid regular expression';
			return;
		}
		const hit = new Uint8Array(n);
		for (let i = 0; i < n; i++) {
			hit[i] = re.test(names[i]) ? 1 : 0;
			rects[i].setAttribute('fill', hit[i] ? matchFill : fills[i]);
			els[i].classList.toggle('match', hit[i] === 1);
		}
		// A match inside a match is already covered by the outer one.
		let sum = 0;
		for (let i = 0; i < n;) {
			if (hit[i]) {
				sum += value[i];
				i = end[i] + 1;
			} else {
				i++;
			}
		}
		searchTerm = term;
		matchedEl.textContent = 'Matched: ' + percent(sum);
		resetSearchEl.classList.remove('hide');
	}
	function resetSearch() {
		for (let i = 0; i < n; i++) {
			rects[i].setAttribute('fill', fills[i]);
			els[i].classList.remove('match');
		}
		searchTerm = '';
		matchedEl.textContent = ' ';
		resetSearchEl.classList.add('hide');
	}
	function promptSearch() {
		const term = window.prompt('Search for (regular expression):', searchTerm);
		if (term === null)
			return;
		if (term === '')
			resetSearch();
		else
			search(term);
	}

	framesEl.addEventListener('click', (e) => {
		const g = e.target.closest('g.frame');
		if (g)
			draw(index.get(g));
	});
	framesEl.addEventListener('mouseover', (e) => {
		const g = e.target.closest('g.frame');
		if (g)
			details.textContent = describe(index.get(g));
	});
	framesEl.addEventListener('mouseout', () => {
		details.textContent = note;
	});
	unzoomEl.addEventListener('click', () => draw(0));
	searchEl.addEventListener('click', promptSearch);
	resetSearchEl.addEventListener('click', resetSearch);
	window.addEventListener('keydown', (e) => {
		if (((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') || e.key === 'F3') {
			e.preventDefault();
			promptSearch();
		} else if (e.key === 'Escape') {
			resetSearch();
		}
	});

	if (n)
		draw(0);
	// A graph taller than the window (one deep stack, such as Python's imports at start-up)
	// opens on its base and widest frames, with the details line under them, as a flame graph
	// is read from the bottom up, not on the empty top of its narrowest tower.
	if (!inverted && document.documentElement.getBoundingClientRect().height > window.innerHeight)
		window.scrollTo(0, document.documentElement.getBoundingClientRect().height);
	// For scripts driving the page; the controls above are the interface for people.
	window.hotstackFlame = { zoom: (i) => draw(i), search, resetSearch, zoomed: () => zoomed };
})();
