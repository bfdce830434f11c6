// A Node.js program with a known call tree, for the V8 tests: recursion (fib), a method of a
// class (Square.area, through Shape), a closure passed to Array.prototype.map (in shapes), an
// async function awaited in a loop (ticker, on the event loop between rounds), a hot function
// that gets optimised (fib) and a cold one that stays interpreted (coldWalk, run once a round
// over a fresh function each time). Prints "ready" once warmed up, then runs for the seconds
// given (default 30). Required as a module (bench/node-bench.js), it runs nothing and exports
// its functions.
'use strict';

class Shape {
  area(k) { return 0; }
}
class Square extends Shape {
  area(k) { return square(k) * 1.0; }
}

function square(x) { return x * x; }

function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

function shapes(all, rounds) {
  let sum = 0;
  const byArea = (k) => all[k & 1].area(k);
  for (let i = 0; i < rounds; i++)
    sum += [i & 7, i & 3].map(byArea).length;
  return sum;
}

// a new function from new source each time: never called twice, never optimised
function coldWalk(round) {
  const f = eval(`(function coldLoop(n) {
    let s = 0;
    for (let i = 0; i < n; i++) s += (i * ${round}) % 7;
    return s;
  })`);
  return f(20000);
}

async function ticker(rounds) {
  let sum = 0;
  for (let i = 0; i < rounds; i++) {
    await null;
    sum += fib(18);
  }
  return sum;
}

let sink = 0;

function work(round) {
  const all = [new Square(), new Square()];
  sink += fib(22);
  sink += shapes(all, 20000);
  sink += coldWalk(round);
}

async function main() {
  const seconds = Number(process.argv[2] || 30);
  const warm = Number(process.argv[3] || 20);
  let round = 0;
  for (; round < warm; round++)
    work(round);
  console.log('ready');
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    work(round++);
    sink += await ticker(20);
  }
  return sink;
}

if (require.main === module)
  main().then((v) => { if (v === 42) console.log(v); });
else
  module.exports = { work, ticker, fib, shapes, Square };
