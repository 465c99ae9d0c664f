// Preload for running @modelcontextprotocol/conformance on Node 20.
//
//   node --import ./conformance/globsync.mjs conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js ...
//
// The suite's bundle does `import { globSync } from "fs"`, which exists from
// Node 22 on; on Node 20 the import fails before any command runs. This file
// supplies fs.globSync when it is missing:
//
//   - on the main thread it puts a small globSync on the CommonJS fs object and
//     registers itself as a module-customization hook;
//   - as a hook (Node runs hooks on their own thread) it answers imports of "fs"
//     and "node:fs" with a tiny module that re-exports every fs export plus
//     globSync, because the export list of a built-in module cannot grow.
//
// On a Node that has fs.globSync it does nothing.
//
// The matcher is deliberately small: patterns are split on "/" into segments;
// "**" matches any number of directories (zero included), "*" any run of
// characters but "/", "?" one character, "[...]" a character class; every
// other character is literal. Options: cwd (string or file: URL) and exclude
// (a function of the relative path). It follows the suite's one use,
// globSync("**/checks.json", { cwd }), and returns paths relative to cwd.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const SHIM = `data:text/javascript,${encodeURIComponent(
  [
    "import fs from 'node:fs';",
    "export * from 'node:fs';",
    'export default fs;',
    'export const globSync = fs.globSync;',
  ].join('\n'),
)}`;

// segmentRegExp turns one path segment of a pattern ("*.json") into a RegExp.
function segmentRegExp(seg) {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = seg.slice(i + 1, end);
      if (body[0] === '!') body = '^' + body.slice(1);
      re += '[' + body.replace(/\\/g, '\\\\') + ']';
      i = end;
    } else {
      re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
    }
  }
  return new RegExp('^' + re + '$');
}

function compile(pattern) {
  return pattern
    .split('/')
    .filter((s, i) => s !== '' || i === 0)
    .filter((s) => s !== '.')
    .map((s) => (s === '**' ? '**' : segmentRegExp(s)));
}

function listDir(dir) {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

// walk matches the compiled segments from index i against the directory
// root/rel, adding matches (relative paths) to out.
function walk(root, rel, segs, i, out, exclude) {
  if (i === segs.length) {
    if (rel !== '') out.add(rel);
    return;
  }
  const seg = segs[i];
  const dir = rel === '' ? root : path.join(root, rel);
  if (seg === '**') {
    walk(root, rel, segs, i + 1, out, exclude); // zero directories
    for (const ent of listDir(dir)) {
      if (!ent.isDirectory() || ent.name.startsWith('.')) continue;
      const next = rel === '' ? ent.name : path.join(rel, ent.name);
      if (exclude && exclude(next)) continue;
      walk(root, next, segs, i, out, exclude); // one more directory
    }
    return;
  }
  for (const ent of listDir(dir)) {
    if (!seg.test(ent.name)) continue;
    const next = rel === '' ? ent.name : path.join(rel, ent.name);
    if (exclude && exclude(next)) continue;
    if (i + 1 < segs.length && !ent.isDirectory()) continue;
    walk(root, next, segs, i + 1, out, exclude);
  }
}

export function globSync(pattern, options = {}) {
  let cwd = options.cwd ?? process.cwd();
  if (cwd instanceof URL || String(cwd).startsWith('file:')) cwd = fileURLToPath(cwd);
  const exclude = typeof options.exclude === 'function' ? options.exclude : null;
  const out = new Set();
  for (const p of Array.isArray(pattern) ? pattern : [pattern]) {
    walk(String(cwd), '', compile(String(p)), 0, out, exclude);
  }
  return [...out];
}

// Hooks (used on the hooks thread only).
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && !String(context.parentURL).startsWith('data:')) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}

if (isMainThread && typeof fs.globSync !== 'function') {
  fs.globSync = globSync;
  const { register } = await import('node:module');
  register(import.meta.url);
}
