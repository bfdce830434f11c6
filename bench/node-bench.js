// The Node.js workload of bench/node-cost.sh: hot.js's call tree (tests/workloads/node/hot.js)
// without its function made anew each round (an app does not compile a function per request),
// warmed up for ROUNDS rounds, then in a loop for SECONDS. Prints the rounds per second after
// the warm-up and node's CPU seconds: "ROUNDS_PER_S CPU_S".
'use strict';
const { fib, shapes, Square, ticker } = require('../tests/workloads/node/hot.js');

let sink = 0;
function work() {
  const all = [new Square(), new Square()];
  sink += fib(22);
  sink += shapes(all, 20000);
}

async function main() {
  const seconds = Number(process.argv[2] || 5);
  const warm = Number(process.argv[3] || 20);
  let round = 0;
  for (; round < warm; round++)
    work(round);
  const start = process.hrtime.bigint(), end = start + BigInt(Math.round(seconds * 1e9));
  let n = 0, t;
  do {
    work(round++);
    await ticker(20);
    n++;
  } while ((t = process.hrtime.bigint()) < end);
  const rate = n / (Number(t - start) / 1e9);
  const cpu = process.cpuUsage();
  console.log(`${rate.toFixed(1)} ${((cpu.user + cpu.system) / 1e6).toFixed(3)}`);
  if (sink === 42)
    console.log(sink);
}

main();
