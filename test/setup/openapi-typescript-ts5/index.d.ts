export * from 'openapi-typescript'
export { default } from 'openapi-typescript'
