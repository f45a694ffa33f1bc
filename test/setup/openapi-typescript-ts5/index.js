// Re-exports openapi-typescript. It sits in this package's node_modules next to typescript 5.9.3, which its
// `import ts from 'typescript'` resolves to (TypeScript 7, the project's, has no compiler API in JavaScript).
export * from 'openapi-typescript'
export { default } from 'openapi-typescript'
