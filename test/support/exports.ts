// Pins the public surface of a package entry point: its run-time values, and its values and types as TypeScript sees
// them. Each entry point's exports test lists both on purpose; a change to either list is a change to the API.
import { expect } from 'vitest';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The names an entry point exports in its types (values and types together), as its users' TypeScript sees them. */
export function typedExports(entry: URL): string[] {
  const file = fileURLToPath(entry);
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return checker.getExportsOfModule(module).map((s) => s.name);
}

/** Expects the entry point to export exactly `values` at run time and exactly `values` and `types` in its types. */
export async function expectExports(entry: URL, values: readonly string[], types: readonly string[]): Promise<void> {
  const exported = Object.keys((await import(fileURLToPath(entry))) as object).sort();
  expect(exported).toEqual([...values].sort());
  expect(typedExports(entry).sort()).toEqual([...values, ...types].sort());
}
