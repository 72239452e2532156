// A small CPU-bound script with a known call tree, profiled by make.sh.
function leaf(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; }
function parse() { return leaf(2e6); }
function merge() { return leaf(4e6); }
const work = (k) => (k & 1 ? parse() : merge());
let total = 0;
for (let k = 0; k < 40; k++) total += work(k);
console.log(total);
