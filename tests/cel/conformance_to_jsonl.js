#!/usr/bin/env node
// Converts the cel-spec conformance suite shipped in the npm package @bufbuild/cel-spec into
// JSON lines for tests/cel/conformance_runner: one line per test with the expression, its
// bindings and the expected value or error, in a plain value encoding that survives JSON (NaN,
// 64-bit integers). Tests outside the subset nodetopo's CEL implements are written with a `skip`
// reason, so that the runner can count them by reason (docs/fit.md lists the counts).
//
// usage: conformance_to_jsonl.js SUITE...   (top-level suite names, e.g. basic lists logic)
'use strict';
const path = require('path');
const { tests } = require(path.join(__dirname, 'node_modules/@bufbuild/cel-spec/dist/cjs/testdata/conformance.js'));

// Whole suites outside the subset, with the reason.
const suiteSkips = {
  timestamps: 'timestamps and durations',
  optionals: 'optional values (a.?b, optional.of)',
  proto2: 'protobuf messages',
  proto2_ext: 'protobuf messages',
  proto3: 'protobuf messages',
  wrappers: 'protobuf messages',
  enums: 'protobuf messages',
  dynamic: 'protobuf messages',
  block_ext: 'cel.block extension',
  math_ext: 'math extension',
  encoders_ext: 'base64 extension',
  type_deductions: 'static type checking',
  namespace: 'containers (namespace resolution)',
  unknowns: 'unknown values',
  macros2: 'two-variable comprehensions extension',
};

// Individual tests that need a feature outside the subset, by name prefix within a suite.
const testSkips = [
  // [suite, section or '*', test name or '*', reason]
  ['string_ext', 'format', '*', 'string.format()'],
  ['string_ext', 'format_errors', '*', 'string.format()'],
  ['string_ext', 'value_errors', '*', 'static type checking'],
  ['string_ext', 'type_errors', '*', 'static type checking'],
];

class Unsupported extends Error {}

function value(v) {
  if ('int64Value' in v) return { int: String(v.int64Value) };
  if ('uint64Value' in v) return { uint: String(v.uint64Value) };
  if ('doubleValue' in v) return { double: String(v.doubleValue) };
  if ('stringValue' in v) return { string: v.stringValue };
  if ('bytesValue' in v) return { bytes: v.bytesValue };
  if ('boolValue' in v) return { bool: v.boolValue };
  if ('nullValue' in v) return { null: true };
  if ('listValue' in v) return { list: (v.listValue.values || []).map(value) };
  if ('mapValue' in v) return { map: (v.mapValue.entries || []).map((e) => [value(e.key), value(e.value)]) };
  if ('typeValue' in v) {
    const known = ['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type'];
    if (!known.includes(v.typeValue)) throw new Unsupported('protobuf messages');
    return { type: v.typeValue };
  }
  if ('objectValue' in v || 'enumValue' in v) throw new Unsupported('protobuf messages');
  throw new Unsupported('value kind ' + Object.keys(v).join(','));
}

function reasonFor(suite, section, t) {
  if (suiteSkips[suite]) return suiteSkips[suite];
  for (const [s, sec, name, reason] of testSkips) {
    if (s === suite && (sec === '*' || sec === section) && (name === '*' || name === t.name)) return reason;
  }
  if (t.checkOnly) return 'static type checking';
  if (t.container) return 'containers (namespace resolution)';
  if (/\b(timestamp|duration)\s*\(/.test(t.expr) || /google\.protobuf\.(Timestamp|Duration)/.test(t.expr)) return 'timestamps and durations';
  if (/TestAllTypes|NestedTestAllTypes|google\.protobuf|\bproto\./.test(t.expr)) return 'protobuf messages';
  if (/\.\?|\[\?|\{\?|optional\./.test(t.expr)) return 'optional values (a.?b, optional.of)';
  if (/\bmath\./.test(t.expr)) return 'math extension';
  return null;
}

const wanted = new Set(process.argv.slice(2));
for (const top of tests.suites) {
  if (wanted.size && !wanted.has(top.name)) continue;
  const walk = (s, section) => {
    for (const sub of s.suites || []) walk(sub, sub.name);
    for (const { original: t } of s.tests || []) {
      const line = { suite: top.name, section, name: t.name, expr: t.expr };
      let reason = reasonFor(top.name, section, t);
      if (!reason) {
        try {
          line.bindings = {};
          for (const [k, b] of Object.entries(t.bindings || {})) {
            if (!b.value) throw new Unsupported('unknown values');
            line.bindings[k] = value(b.value);
          }
          if (t.evalError) line.error = (t.evalError.errors || []).map((e) => e.message).join('; ') || 'error';
          else if (t.typedResult) line.value = value(t.typedResult.result);
          else if (t.value) line.value = value(t.value);
          else line.value = { bool: true };  // cel-spec: no result given means true
        } catch (e) {
          if (!(e instanceof Unsupported)) throw e;
          reason = e.message;
        }
      }
      if (reason) {
        delete line.bindings;
        delete line.value;
        delete line.error;
        line.skip = reason;
      }
      process.stdout.write(JSON.stringify(line) + '\n');
    }
  };
  walk(top, top.name);
}
