/**
 * Prints the longest functions of exobar's product code, so the size of the composition
 * roots and factories can be measured again after a change (the design reviews' "longest
 * function" figure). Walks every non-test `.ts`/`.tsx` file under electron/, shared/ and
 * renderer/src/ with the TypeScript compiler's own parser (no type checking: fast) and
 * counts the lines of each function, method, arrow and accessor body, from its first line
 * to its last. Class bodies are listed apart (`--classes`), as they hold many functions.
 *
 *   node --import tsx scripts/function-lengths.ts [--top N] [--min LINES] [--classes]
 *
 * Exit code 0 always: it measures, the reader judges.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOTS = ['electron', 'shared', 'renderer/src'];
const SKIP_DIRS = new Set(['node_modules', 'out', 'dist', '.venv', '__pycache__']);

export interface FunctionLength {
  name: string;
  file: string;
  line: number;
  lines: number;
  kind: 'function' | 'class';
}

function productFiles(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    if (SKIP_DIRS.has(entry)) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) productFiles(path, into);
    else if (/\.tsx?$/.test(entry) && !/\.(test|spec)\.tsx?$/.test(entry) && !entry.endsWith('.d.ts')) into.push(path);
  }
  return into;
}

/** A readable name for a function node: its own, its variable's, its property's, or its class and method. */
function nameOf(node: ts.Node): string {
  const own = (node as { name?: ts.Node }).name;
  const text = own && (ts.isIdentifier(own) || ts.isStringLiteral(own) || ts.isPrivateIdentifier(own)) ? own.text : null;
  const parent = node.parent;
  if ((ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node) || ts.isConstructorDeclaration(node)) && ts.isClassLike(parent)) {
    return `${parent.name?.text ?? '(class)'}.${text ?? 'constructor'}`;
  }
  if (text) return text;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && (ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name))) return parent.name.text;
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText().slice(0, 40)})`;
  return '(anonymous)';
}

/** Every function and class of `file` with its length in lines. */
export function measureFile(file: string, root = process.cwd()): FunctionLength[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: FunctionLength[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    const isFunction = ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined;
    const isClass = ts.isClassDeclaration(node) || ts.isClassExpression(node);
    if (isFunction || isClass) {
      const start = lineOf(node.getStart(source));
      const end = lineOf(node.getEnd());
      found.push({
        name: isClass ? `class ${(node as ts.ClassLikeDeclaration).name?.text ?? '(anonymous)'}` : nameOf(node),
        file: relative(root, file),
        line: start,
        lines: end - start + 1,
        kind: isClass ? 'class' : 'function',
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function (and class) of the product code, longest first. */
export function measureTree(root = process.cwd()): FunctionLength[] {
  const files = ROOTS.flatMap((dir) => productFiles(join(root, dir)));
  return files.flatMap((file) => measureFile(file, root)).sort((a, b) => b.lines - a.lines);
}

function main(argv: string[]): void {
  const flag = (name: string, fallback: number) => {
    const at = argv.indexOf(name);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const top = flag('--top', 20);
  const min = flag('--min', 0);
  const classes = argv.includes('--classes');
  const all = measureTree().filter((f) => (classes ? f.kind === 'class' : f.kind === 'function') && f.lines >= min);
  const shown = min > 0 ? all : all.slice(0, top);
  for (const f of shown) console.log(`${String(f.lines).padStart(5)}  ${f.name}  ${f.file}:${f.line}`);
  console.log(`(${all.length} ${classes ? 'classes' : 'functions'}${min > 0 ? ` of at least ${min} lines` : ''}; longest ${all[0]?.lines ?? 0} lines)`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) main(process.argv.slice(2));
