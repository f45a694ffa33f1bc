/** Escapes LIKE's wildcards (and the escape character itself) for a pattern written with `escape '\'`. */
export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)
