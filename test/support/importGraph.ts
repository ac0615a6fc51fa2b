import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of the repository's TypeScript, for the layering test: every static `import` and
 * `export … from` (type-only ones included), `import x = require()`, dynamic `import()`, `require()` and
 * `import('…')` types, each with the line it is on, and relative specifiers resolved to files.
 */

export interface ImportEdge {
  /** Repository-relative path of the importing file, with forward slashes. */
  from: string;
  line: number;
  specifier: string;
  /** Repository-relative path of the imported file for a relative specifier that resolves; else null. */
  to: string | null;
}

export interface GlobalUse {
  file: string;
  line: number;
  name: string;
}

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.proto', 'test-results', 'playwright-report', '.shoal-tmp']);

/** Every .ts/.tsx file under `dirs` (repository-relative, forward slashes), build output and scratch left out. */
export function sourceFiles(root: string, dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) return SKIP_DIRS.has(name) ? [] : walk(full);
      return /\.tsx?$/.test(name) ? [toRepoPath(root, full)] : [];
    });
  return dirs.filter((d) => existsSync(join(root, d))).flatMap((d) => walk(join(root, d)));
}

const toRepoPath = (root: string, full: string) => relative(root, full).split(sep).join('/');

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** The module specifiers `text` imports, with their 1-based lines. */
export function importsOf(text: string, file = 'sample.ts'): { specifier: string; line: number }[] {
  const source = parse(file, text);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node, literal: ts.Node | undefined) => {
    if (literal && ts.isStringLiteralLike(literal)) found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression);
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) add(node, node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Uses of the Node globals `names` as values or types in `text` — not a property name (`x.process`,
 * `{ process: … }`), not a declaration of its own (`const process = …`, a parameter), not in a comment
 * or a string.
 */
export function globalsUsed(text: string, names: ReadonlySet<string>, file = 'sample.ts'): { name: string; line: number }[] {
  const source = parse(file, text);
  const found: { name: string; line: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && names.has(node.text) && !isNameOfSomethingElse(node)) {
      found.push({ name: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function isNameOfSomethingElse(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return true;
  if (ts.isQualifiedName(parent) && parent.right === node) return true;
  const named = parent as ts.Node & { name?: ts.Node };
  if (named.name === node) {
    return (
      ts.isPropertyAssignment(parent) ||
      ts.isPropertySignature(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isMethodSignature(parent) ||
      ts.isVariableDeclaration(parent) ||
      ts.isParameter(parent) ||
      ts.isFunctionDeclaration(parent) ||
      ts.isBindingElement(parent) ||
      ts.isImportSpecifier(parent) ||
      ts.isExportSpecifier(parent) ||
      ts.isEnumMember(parent) ||
      ts.isGetAccessor(parent) ||
      ts.isSetAccessor(parent)
    );
  }
  return ts.isBindingElement(parent) && parent.propertyName === node;
}

/** The file a relative specifier names: `./x.js` is `./x.ts` (or .tsx) in source, `./dir` its index. Null when none exists. */
export function resolveRelative(root: string, fromFile: string, specifier: string): string | null {
  const base = resolve(root, dirname(fromFile), specifier.replace(/\?.*$/, ''));
  const stem = base.replace(/\.(m|c)?js$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.d.ts`, join(base, 'index.ts'), join(base, 'index.tsx')];
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  return hit ? toRepoPath(root, hit) : null;
}

/** Every import of every file, relative ones resolved. */
export function importEdges(root: string, files: string[]): ImportEdge[] {
  return files.flatMap((from) =>
    importsOf(readFileSync(join(root, from), 'utf8'), from).map(({ specifier, line }) => ({
      from,
      line,
      specifier,
      to: specifier.startsWith('.') ? resolveRelative(root, from, specifier) : null,
    })),
  );
}

/**
 * The import cycles among the files (strongly connected components of more than one file, or a file
 * importing itself), each as its files and the edges that stay inside it. Type-only imports count.
 */
export function importCycles(edges: ImportEdge[]): { files: string[]; edges: ImportEdge[] }[] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (e.to) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  // Tarjan's algorithm, iterative so a deep chain of imports cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = next.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const to = targets[frame.i++];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components
    .map((files) => {
      const inside = new Set(files);
      return { files: files.sort(), edges: edges.filter((e) => inside.has(e.from) && e.to !== null && inside.has(e.to)) };
    })
    .filter((c) => c.files.length > 1 || c.edges.length > 0);
}
