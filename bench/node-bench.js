// The Node.js workload of bench/node-cost.sh: hot.js's call tree (tests/workloads/node/hot.js),
// warmed up for ROUNDS rounds, then in a loop for SECONDS. Prints the rounds per second after
// the warm-up and node's CPU seconds: "ROUNDS_PER_S CPU_S".
'use strict';
const { work, ticker } = require('../tests/workloads/node/hot.js');

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
}

main();
