#!/usr/bin/env node
// Differential test data for nodetopo's CEL evaluator: generates random core-CEL expressions
// (int/uint/double/bool/string arithmetic, comparisons, logic with errors, conditionals,
// lists, maps, indexing, `in`, size, conversions, string functions, macros), evaluates each
// with the npm reference evaluator @bufbuild/cel, and writes JSON lines in the conformance
// runner's format (expected value or error). The C++ runner then evaluates the same
// expressions and must agree. Deterministic: the seed is an argument.
//
// usage: differential.js SEED COUNT
'use strict';
const path = require('path');
const { run, isCelError, isCelList, isCelMap, isCelUint } = require(path.join(__dirname, 'node_modules/@bufbuild/cel'));
const { strings } = require(path.join(__dirname, 'node_modules/@bufbuild/cel/dist/cjs/ext/index.js'));

let seed = Number(process.argv[2] || 1) >>> 0;
const count = Number(process.argv[3] || 500);
function rnd() {  // xorshift32
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];
const ints = ['0', '1', '-1', '2', '3', '7', '-5', '42', '9223372036854775807', '-9223372036854775808', '100'];
const uints = ['0u', '1u', '2u', '18446744073709551615u', '10u'];
const doubles = ['0.0', '1.5', '-2.25', '3.0', '1e10', '0.1'];
const strs = ['""', '"a"', '"abc"', '"héllo"', '"A-B"', '"xyz"'];

function intE(d) {
  if (d <= 0) return pick(ints);
  switch (Math.floor(rnd() * 8)) {
    case 0: return `(${intE(d - 1)} ${pick(['+', '-', '*', '/', '%'])} ${intE(d - 1)})`;
    case 1: return `-(${intE(d - 1)})`;
    case 2: return `(${boolE(d - 1)} ? ${intE(d - 1)} : ${intE(d - 1)})`;
    case 3: return `size(${strE(d - 1)})`;
    case 4: return `${listE(d - 1)}.size()`;
    case 5: return `int(${pick([uintE(d - 1), dblE(d - 1), '"12"', '"-3"', '"x"'])})`;
    case 6: return `${listE(d - 1)}[${intE(d - 1)}]`;
    default: return pick(ints);
  }
}
function uintE(d) {
  if (d <= 0) return pick(uints);
  switch (Math.floor(rnd() * 4)) {
    case 0: return `(${uintE(d - 1)} ${pick(['+', '-', '*', '/', '%'])} ${uintE(d - 1)})`;
    case 1: return `uint(${pick([intE(d - 1), '"7"', '1.5'])})`;
    default: return pick(uints);
  }
}
function dblE(d) {
  if (d <= 0) return pick(doubles);
  switch (Math.floor(rnd() * 4)) {
    case 0: return `(${dblE(d - 1)} ${pick(['+', '-', '*', '/'])} ${dblE(d - 1)})`;
    case 1: return `double(${pick([intE(d - 1), uintE(d - 1), '"2.5"'])})`;
    default: return pick(doubles);
  }
}
function strE(d) {
  if (d <= 0) return pick(strs);
  switch (Math.floor(rnd() * 6)) {
    case 0: return `(${strE(d - 1)} + ${strE(d - 1)})`;
    case 1: return `string(${pick([intE(d - 1), uintE(d - 1), 'true'])})`;
    case 2: return `(${boolE(d - 1)} ? ${strE(d - 1)} : ${strE(d - 1)})`;
    case 3: return `${strE(d - 1)}.${pick(['lowerAscii()', 'upperAscii()', 'trim()'])}`;
    // Not an empty old string: the reference inserts differently from Go's strings.Replace,
    // which cel-go (and Kubernetes) use.
    case 4: return `${strE(d - 1)}.replace(${pick(strs.slice(1))}, ${pick(strs)})`;
    default: return pick(strs);
  }
}
function listE(d) {
  if (d <= 0) return pick(['[]', '[1, 2, 3]', '["a", "b"]', '[1, "x", true]']);
  switch (Math.floor(rnd() * 5)) {
    case 0: return `[${intE(d - 1)}, ${intE(d - 1)}]`;
    case 1: return `(${listE(d - 1)} + ${listE(d - 1)})`;
    case 2: return `${listE(d - 1)}.map(x, ${pick(['x', '[x]', 'x == 1'])})`;
    case 3: return `${listE(d - 1)}.filter(x, ${pick(['x == 1', 'true', 'x != "a"'])})`;
    default: return pick(['[1, 2, 3]', '[3, 1, 2, 1]']);
  }
}
function mapE(d) {
  return pick(['{"a": 1, "b": 2}', '{1: "one", 2u: "two"}', '{}', `{"k": ${intE(d - 1)}}`]);
}
function boolE(d) {
  if (d <= 0) return pick(['true', 'false']);
  switch (Math.floor(rnd() * 14)) {
    case 0: return `(${boolE(d - 1)} ${pick(['&&', '||'])} ${boolE(d - 1)})`;
    case 1: return `!${boolE(d - 1)}`;
    case 2: return `(${intE(d - 1)} ${pick(['<', '<=', '>', '>=', '==', '!='])} ${pick([intE(d - 1), uintE(d - 1), dblE(d - 1)])})`;
    case 3: return `(${strE(d - 1)} ${pick(['<', '==', '!=', '>='])} ${strE(d - 1)})`;
    case 4: return `(${intE(d - 1)} in ${listE(d - 1)})`;
    case 5: return `(${pick(['"a"', '1', '2u', '"z"'])} in ${mapE(d - 1)})`;
    case 6: return `${listE(d - 1)}.${pick(['all', 'exists', 'exists_one'])}(x, ${pick(['x == 1', 'x > 1', 'x != 2', '1 / (x - 1) > 0'])})`;
    case 7: return `${strE(d - 1)}.${pick(['startsWith', 'endsWith', 'contains'])}(${strE(d - 1)})`;
    case 8: return `${strE(d - 1)}.matches(${pick(['"^a"', '"b+"', '"[0-9]"', '"."'])})`;
    case 9: return `(${dblE(d - 1)} ${pick(['<', '==', '>'])} ${dblE(d - 1)})`;
    case 10: return `(${listE(d - 1)} == ${listE(d - 1)})`;
    case 11: return `has(${mapE(d - 1)}.a)`;
    case 12: return `(${mapE(d - 1)}[${pick(['"a"', '1', '"k"'])}] == 1)`;
    default: return `(${boolE(d - 1)} ? ${boolE(d - 1)} : ${boolE(d - 1)})`;
  }
}

function encode(v) {
  if (typeof v === 'bigint') {
    // The reference does not report overflow of --9223372036854775808; CEL says error.
    if (v > 9223372036854775807n || v < -9223372036854775808n) throw new RangeError('int out of range');
    return { int: v.toString() };
  }
  if (isCelUint(v)) return { uint: v.value.toString() };
  if (typeof v === 'number') return { double: Number.isNaN(v) ? 'NaN' : v === Infinity ? 'Infinity' : v === -Infinity ? '-Infinity' : String(v) };
  if (typeof v === 'string') return { string: v };
  if (typeof v === 'boolean') return { bool: v };
  if (v === null) return { null: true };
  if (v instanceof Uint8Array) return { bytes: Buffer.from(v).toString('base64') };
  if (isCelList(v)) { const out = []; for (const e of v) out.push(encode(e)); return { list: out }; }
  if (isCelMap(v)) { const out = []; for (const [k, e] of v) out.push([encode(k), encode(e)]); return { map: out }; }
  throw new Error('cannot encode ' + typeof v);
}

const gens = [boolE, intE, strE, listE, dblE, uintE];
for (let i = 0; i < count; ++i) {
  const expr = pick(gens)(1 + Math.floor(rnd() * 3));
  const line = { suite: 'differential', section: 'seed' + process.argv[2], name: String(i), expr, bindings: {} };
  let r;
  try {
    r = run(expr, {}, { funcs: strings });
  } catch (e) {
    r = { kind: 'threw', message: String(e && e.message) };
  }
  if (r && r.kind === 'threw') {
    line.skip = 'reference evaluator threw';
  } else if (/-\(-\(/.test(expr)) {
    // The reference folds -(-(x)) to x; cel-go evaluates both negations (int64 overflow, type).
    line.skip = 'reference folds nested negations';
  } else if (isCelError(r) && /overflow during divide/.test(r.message) && /18446744073709551615u/.test(expr)) {
    // cel-go divides uints without overflow; the reference reports one.
    line.skip = 'reference reports overflow dividing a uint';
  } else if (typeof r === 'number' && Number.isNaN(r) && /double\(/.test(expr)) {
    // cel-go's double("x") is an error (strconv.ParseFloat); the reference returns NaN.
    line.skip = 'reference converts a non-numeric string to NaN';
  } else if (isCelError(r)) {
    line.error = r.message || 'error';
  } else {
    try {
      line.value = encode(r);
    } catch (e) {
      line.skip = e instanceof RangeError ? 'reference evaluator misses an int64 overflow' : 'unencodable reference value';
    }
  }
  process.stdout.write(JSON.stringify(line) + '\n');
}
