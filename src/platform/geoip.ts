// The IP database: the country database of ip-location-db (npm @ip-location-db/geo-whois-asn-country-mmdb,
// CC0-1.0, built from RIR data of the NRO under CC BY 4.0; see README.md), read with mmdb-lib.
// `with { type: 'file' }` makes `bun build --compile` copy the .mmdb into the executable (the import then
// yields a /$bunfs/… path that node:fs reads); under `bun run` and `bun test` it is the file's path in
// node_modules. The package has no "exports" map, so the file resolves by its path inside the package.
// LNK_GEOIP_DB names another .mmdb instead (GeoLite2 Country or City, DB-IP Lite, ip-location-db's city
// databases…); a city-level one also yields the city.
// @ts-expect-error TS2307: a .mmdb file imported as a file asset has no type declaration (it is a path string)
import embeddedGeoDb from '@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb' with { type: 'file' }
import { Reader, type Response } from 'mmdb-lib'
import { readFileSync } from 'node:fs'

/** Path of the IP-to-country database embedded in lnk. */
export const EMBEDDED_GEOIP_DB: string = embeddedGeoDb

/**
 * Reads and opens an .mmdb file; throws an Error whose message says what is wrong (for one config line).
 */
export function openGeoDb(path: string, options: ConstructorParameters<typeof Reader>[1] = {}): Reader<Response> {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new Error(
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not an .mmdb file' : `cannot be read (${code ?? (err as Error).message})`,
    )
  }
  try {
    return new Reader(bytes, options)
  } catch (err) {
    throw new Error(`is not a MaxMind DB (.mmdb) file (${(err as Error).message.split('\n')[0]})`)
  }
}
