// Compiles one TypeScript file strictly (NodeNext, no emit) and returns its diagnostics as text: the tests that
// prove published types fit (iab-openrtb, node-redis) assert this is empty.
import ts from 'typescript';

/** The diagnostics of compiling `file` strictly, as messages; empty when it type-checks. */
export function typecheckFile(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}
