/**
 * Finds the exports of entry points that have no doc comment, with the TypeScript compiler API: every symbol a
 * module exports, re-exports (`export { x } from`, `export *`) followed to the declaration, must carry a `/** … *\/`
 * comment with text (a lone `@example` or `@internal` is not a description).
 */
import ts from 'typescript';
import { relative } from 'node:path';

/** An exported symbol without a doc comment. */
export interface UndocumentedExport {
  /** The entry point's file, relative to `root`. */
  entry: string;
  /** The name it is exported under. */
  name: string;
  /** Where it is declared (`src/adserver/parse/parse.ts:42`), relative to `root`. */
  declaredAt: string;
}

/** One line per problem: `eidkit/adserver: parseAdCall (src/adserver/parse/parse.ts:42)`. */
export function formatUndocumented(list: UndocumentedExport[]): string {
  return list.map((u) => `${u.entry}: ${u.name} (${u.declaredAt})`).join('\n');
}

/** Every exported symbol of the entry files that has no doc comment on any of its declarations. */
export function undocumentedExports(
  entryFiles: string[],
  root: string,
  compilerOptions: ts.CompilerOptions,
): UndocumentedExport[] {
  const program = ts.createProgram(entryFiles, { ...compilerOptions, noEmit: true });
  const checker = program.getTypeChecker();
  const found: UndocumentedExport[] = [];
  for (const file of entryFiles) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`entry point ${file} is not part of the program`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    if (!moduleSymbol) continue; // a file without exports is not a module: nothing to document
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      // A doc comment on the re-export itself (`/** … *\/ export { x } from`) counts too.
      const declarations = [...(exported.declarations ?? []), ...(target.declarations ?? [])];
      if (declarations.some(hasDocComment)) continue;
      const at = target.declarations?.[0] ?? exported.declarations?.[0];
      found.push({
        entry: relative(root, file),
        name: exported.name,
        declaredAt: at ? location(at, root) : '(no declaration)',
      });
    }
  }
  return found;
}

function hasDocComment(declaration: ts.Declaration): boolean {
  // getJSDocCommentsAndTags climbs from `const x` to its `export const` statement, where the comment sits.
  return ts.getJSDocCommentsAndTags(declaration).some((doc) => {
    if (!ts.isJSDoc(doc)) return false;
    const text = typeof doc.comment === 'string' ? doc.comment : ts.getTextOfJSDocComment(doc.comment);
    return (text ?? '').trim().length > 0;
  });
}

function location(node: ts.Node, root: string): string {
  const source = node.getSourceFile();
  const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
  return `${relative(root, source.fileName)}:${line + 1}`;
}

/** The compiler options of a tsconfig.json, as the project builds with them. */
export function compilerOptionsOf(tsconfigPath: string): ts.CompilerOptions {
  const read = ts.readConfigFile(tsconfigPath, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, tsconfigPath.replace(/[/\\][^/\\]*$/, ''));
  return parsed.options;
}
