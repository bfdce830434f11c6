// Interaction for hotstack's HTML flame graphs, compiled into html.c: the frames are drawn on a
// canvas from the arrays in #flamedata (depth-first order, root first), with the SVG's
// interaction: details and a tooltip on hover, click to zoom, regular-expression search. Only
// what is visible is drawn, and a frame narrower than a fraction of a pixel is skipped with
// everything above it, so a redraw costs what is on the screen, not the size of the profile.
(function () {
	'use strict';

	const byId = (id) => document.getElementById(id);
	const data = JSON.parse(byId('flamedata').textContent);
	const canvas = byId('flame'), ctx = canvas.getContext('2d');
	const tooltip = byId('tooltip'), details = byId('details'), matchedEl = byId('matched');
	const unzoomEl = byId('unzoom'), resetSearchEl = byId('resetsearch');
	const searchBox = byId('searchbox'), form = byId('searchform');
	const FRAME_H = 16, PAD = 10, FONT = '12px Verdana, "DejaVu Sans", sans-serif';
	const MATCH_FILL = 'rgb(230,0,230)', MIN_PX = 0.25;

	const depth = data.depth, nameOf = data.name, value = data.value, names = data.names;
	const n = depth.length, diff = data.diff, inverted = data.inverted;
	const parent = new Int32Array(n), end = new Int32Array(n);
	const off = new Float64Array(n), used = new Float64Array(n);
	let maxDepth = 0;
	{
		const last = [];
		for (let i = 0; i < n; i++) {
			const d = depth[i];
			const p = d > 0 ? last[d - 1] : -1;
			parent[i] = p;
			if (p >= 0) {
				off[i] = off[p] + used[p];
				used[p] += value[i];
			}
			last[d] = i;
			last.length = d + 1;
			end[i] = i;
			if (d > maxDepth)
				maxDepth = d;
		}
		for (let i = n - 1; i > 0; i--)
			if (parent[i] >= 0 && end[i] > end[parent[i]])
				end[parent[i]] = end[i];
	}
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
	const percent = (v, t) => ((t > 0 ? (100 * v) / t : 0).toFixed(2)) + '%';
	const kindNames = ['', 'kernel', 'JIT', '', 'Python'];
	function kindOf(i) {
		const k = data.kinds[nameOf[i]];
		return k >= 8 ? 'inlined' : kindNames[k];
	}
	function describe(i) {
		const kind = kindOf(i) ? ' [' + kindOf(i) + ']' : '';
		const was = diff ? ', was ' + percent(data.base[i], data.baseTotal) : '';
		// a Python frame's source file, as the SVG's titles name it
		const mod = data.modules ? data.modules[nameOf[i]] : '';
		return 'Function: ' + names[nameOf[i]] + (mod ? ' (' + mod + ')' : '') + kind + ' (' +
			amount(value[i], data.unit) + was + ', ' + percent(value[i], total) + ')';
	}
	const fillOf = (i) => (diff ? data.dcolors[data.color[i]] : data.colors[nameOf[i]]);

	// The legend: kinds of code, or the colours of change.
	{
		const legend = byId('legend');
		for (const [label, color] of data.legend || []) {
			const s = document.createElement('span'), sw = document.createElement('i');
			sw.style.background = color;
			s.append(sw, label);
			legend.append(s);
		}
	}

	let cssWidth = 0, zoomed = 0, hit = null, hover = -1;

	function resize() {
		cssWidth = Math.max(200, Math.min(data.width, document.documentElement.clientWidth - 20));
		const h = (maxDepth + 1) * FRAME_H + 2;
		const dpr = window.devicePixelRatio || 1;
		canvas.style.width = cssWidth + 'px';
		canvas.style.height = h + 'px';
		canvas.width = Math.round(cssWidth * dpr);
		canvas.height = Math.round(h * dpr);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	}

	const rowY = (d) => (inverted ? d : maxDepth - d) * FRAME_H;
	const scale = () => (cssWidth - 2 * PAD) / (value[zoomed] || 1);
	// Left edge and width of frame i under the current zoom, or null when it is not shown.
	function geometry(i) {
		if (i < 0 || i >= n)
			return null;
		if (i < zoomed || i > end[zoomed]) {
			// an ancestor of the zoomed frame spans the whole width
			for (let a = parent[zoomed]; a >= 0; a = parent[a])
				if (a === i)
					return { x: PAD, w: cssWidth - 2 * PAD };
			return null;
		}
		const s = scale();
		return { x: PAD + (off[i] - off[zoomed]) * s, w: value[i] * s };
	}

	// Labels: by an average glyph width first, then measured (only frames wide enough for a
	// label are, a few hundred at most) and shortened where the font turned out wider.
	let charWidth = 7;
	function label(s, w) {
		let chars = Math.floor((w - 6) / charWidth);
		if (chars < 3)
			return '';
		const cps = Array.from(s);
		let t = cps.length <= chars ? s : cps.slice(0, chars - 2).join('') + '..';
		while (chars >= 3 && ctx.measureText(t).width > w - 6) {
			chars--;
			t = cps.slice(0, chars - 2).join('') + '..';
		}
		return chars < 3 ? '' : t;
	}
	function box(i, x, w, dim) {
		const y = rowY(depth[i]);
		ctx.globalAlpha = dim ? 0.5 : 1;
		ctx.fillStyle = hit && hit[i] ? MATCH_FILL : fillOf(i);
		ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), FRAME_H - 1);
		if (i === hover) {
			ctx.strokeStyle = '#000';
			ctx.lineWidth = 0.5;
			ctx.strokeRect(x + 0.25, y + 0.25, Math.max(w - 1, 0.5), FRAME_H - 1.5);
		}
		const t = label(names[nameOf[i]], w);
		if (t) {
			ctx.fillStyle = '#000';
			ctx.fillText(t, x + 3, y + FRAME_H - 4.5);
		}
	}

	function draw() {
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.clearRect(0, 0, canvas.width, canvas.height);
		const dpr = window.devicePixelRatio || 1;
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.font = FONT;
		ctx.textBaseline = 'alphabetic';
		if (!n)
			return;
		for (let a = parent[zoomed]; a >= 0; a = parent[a])
			box(a, PAD, cssWidth - 2 * PAD, true);
		const s = scale(), o = off[zoomed];
		for (let i = zoomed; i <= end[zoomed];) {
			const w = value[i] * s;
			if (w < MIN_PX) {
				i = end[i] + 1; // nothing above it is wider
				continue;
			}
			box(i, PAD + (off[i] - o) * s, w, false);
			i++;
		}
		ctx.globalAlpha = 1;
	}

	// The frame under a point of the canvas (CSS pixels), or -1.
	function frameAt(x, y) {
		if (!n)
			return -1;
		const row = Math.floor(y / FRAME_H);
		const d = inverted ? row : maxDepth - row;
		if (d < 0 || d > maxDepth || x < PAD || x >= cssWidth - PAD)
			return -1;
		if (d < depth[zoomed]) {
			let a = zoomed;
			while (a >= 0 && depth[a] > d)
				a = parent[a];
			return a;
		}
		const s = scale(), o = off[zoomed];
		let cur = zoomed;
		while (depth[cur] < d) {
			let next = -1;
			for (let c = cur + 1; c <= end[cur]; c = end[c] + 1) {
				const left = PAD + (off[c] - o) * s;
				if (x >= left && x < left + value[c] * s) {
					next = c;
					break;
				}
			}
			if (next < 0)
				return -1;
			cur = next;
		}
		return value[cur] * s >= MIN_PX ? cur : -1;
	}

	function zoom(i) {
		if (i < 0 || i >= n)
			return;
		zoomed = i;
		unzoomEl.hidden = i === 0;
		draw();
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
		const nameHit = names.map((s) => re.test(s));
		hit = new Uint8Array(n);
		for (let i = 0; i < n; i++)
			hit[i] = nameHit[nameOf[i]] ? 1 : 0;
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
		searchBox.value = term;
		matchedEl.textContent = 'Matched: ' + percent(sum, total);
		resetSearchEl.hidden = false;
		draw();
	}
	function resetSearch() {
		hit = null;
		searchTerm = '';
		searchBox.value = '';
		matchedEl.textContent = '';
		resetSearchEl.hidden = true;
		draw();
	}

	function pointer(e) {
		const r = canvas.getBoundingClientRect();
		return frameAt(e.clientX - r.left, e.clientY - r.top);
	}
	canvas.addEventListener('mousemove', (e) => {
		const i = pointer(e);
		if (i !== hover) {
			hover = i;
			draw();
		}
		if (i < 0) {
			tooltip.hidden = true;
			details.textContent = '\u00a0';
			return;
		}
		details.textContent = describe(i);
		tooltip.textContent = describe(i).replace(/^Function: /, '');
		tooltip.hidden = false;
		const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
		let left = e.clientX + 12, top = e.clientY + 16;
		if (left + tw > window.innerWidth - 4)
			left = Math.max(4, e.clientX - tw - 12);
		if (top + th > window.innerHeight - 4)
			top = Math.max(4, e.clientY - th - 12);
		tooltip.style.left = left + 'px';
		tooltip.style.top = top + 'px';
	});
	canvas.addEventListener('mouseleave', () => {
		hover = -1;
		tooltip.hidden = true;
		details.textContent = '\u00a0';
		draw();
	});
	canvas.addEventListener('click', (e) => {
		const i = pointer(e);
		if (i >= 0)
			zoom(i);
	});
	unzoomEl.addEventListener('click', () => zoom(0));
	form.addEventListener('submit', (e) => {
		e.preventDefault();
		if (searchBox.value === '')
			resetSearch();
		else
			search(searchBox.value);
	});
	resetSearchEl.addEventListener('click', resetSearch);
	window.addEventListener('keydown', (e) => {
		if (((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') || e.key === 'F3') {
			e.preventDefault();
			searchBox.focus();
			searchBox.select();
		} else if (e.key === 'Escape') {
			resetSearch();
		}
	});
	window.addEventListener('resize', () => {
		resize();
		draw();
	});

	resize();
	ctx.font = FONT;
	charWidth = ctx.measureText('abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJ').width / 37 || 7;
	draw();
	// A graph taller than the window opens on its base and widest frames (the bar with the
	// title and the controls stays at the top of the window), not on the top of a tall tower.
	if (!inverted && document.documentElement.scrollHeight > window.innerHeight)
		window.scrollTo(0, document.documentElement.scrollHeight);

	// For scripts driving the page; the controls above are the interface for people.
	window.hotstackFlame = {
		zoom, search, resetSearch, describe,
		zoomed: () => zoomed,
		count: () => n,
		searchTerm: () => searchTerm,
		find(name) {
			const out = [];
			for (let i = 0; i < n; i++)
				if (names[nameOf[i]] === name)
					out.push(i);
			return out;
		},
		box(i) {
			const g = geometry(i);
			if (!g || g.w < MIN_PX)
				return null;
			const r = canvas.getBoundingClientRect();
			return { x: r.left + g.x, y: r.top + rowY(depth[i]), w: g.w, h: FRAME_H - 1 };
		},
	};
})();
