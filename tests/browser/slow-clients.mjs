// Slow clients of a server, for the test that they cannot starve a recording
// (tests/e2e/serve-browser.sh): READERS connections that ask for PATH and read the answer a few
// bytes a second, and SENDERS connections that send their request a byte at a time, all held
// for SECONDS. Prints one line of JSON: how many connected, how many readers had the start of
// an answer ("HTTP/1.1 200"), and the bytes read.
// Usage: node slow-clients.mjs PORT SECONDS [READERS [SENDERS [PATH]]]
import { connect } from 'node:net';

const [port, seconds, readers = 40, senders = 10, path = '/'] = process.argv.slice(2);
const stats = { connected: 0, answered: 0, bytes: 0, errors: 0 };
const sockets = [];
const timers = [];

function open(onConnect) {
	const s = connect({ host: '127.0.0.1', port: Number(port) }, () => {
		stats.connected++;
		onConnect(s);
	});
	s.on('error', () => stats.errors++);
	sockets.push(s);
	return s;
}

for (let i = 0; i < Number(readers); i++) {
	open((s) => {
		let head = '';
		// paused: nothing is read but what read() takes, so the server's sends back up
		s.pause();
		s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
		timers.push(setInterval(() => {
			const b = s.read(4);
			if (!b)
				return;
			stats.bytes += b.length;
			if (head.length < 12) {
				head += b.toString('latin1');
				if (head.length >= 12 && head.startsWith('HTTP/1.1 200'))
					stats.answered++;
			}
		}, 250));
	});
}
const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\n\r\n`;
for (let i = 0; i < Number(senders); i++) {
	open((s) => {
		let at = 0;
		timers.push(setInterval(() => {
			if (at < request.length)
				s.write(request[at++]);
		}, 300));
	});
}

setTimeout(() => {
	for (const t of timers)
		clearInterval(t);
	for (const s of sockets)
		s.destroy();
	console.log(JSON.stringify(stats));
	process.exit(0);
}, Number(seconds) * 1000);
