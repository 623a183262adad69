// dependency-cruiser: no import cycles (type-only ones included), and convention 2 of docs/development.md — a folder of src/ is
// imported from another folder only through its index.ts.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'An import cycle (type-only imports count: they tie the modules together just the same).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'folder-through-index',
      severity: 'error',
      comment: 'Convention 2 (docs/development.md): import another folder of src/ only through its index.ts.',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'] },
    },
    {
      name: 'top-level-through-index',
      severity: 'error',
      comment:
        "Convention 2 (docs/development.md): cli.ts and the other top-level modules import a folder only through its index.ts. One exception: cli.ts imports each command's own module, lazily, when that command runs (start-up time).",
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/[^/]+/index\\.ts$', '^src/commands/[^/]+\\.ts$'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
