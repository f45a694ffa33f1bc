export * from './identity'
export * from './platform'
export * from './links'
export * from './conversions'
