// Every way the QR area refuses, by name. All of them are problems with the query a person can fix, so all
// answer validation_failed naming the parameter. The style rules (size, colours, contrast…) collect their
// issues in service.ts and are refused together through invalidQrQuery.
import { invalid, type ValidationIssue } from '../../platform/errors'

export const invalidQrQuery = (issues: ValidationIssue[]) => invalid('query', issues)

/** Parameters given more than once: which one would count is not obvious to the sender. */
export const repeatedParams = (names: string[]) => invalidQrQuery(names.map((path) => ({ path, message: 'must be given once' })))

/** The text to encode (`data`) is refused; `message` says why. */
export const badRenderData = (message: string) => invalidQrQuery([{ path: 'data', message }])

/** The text does not fit in a QR code at this error-correction level. */
export const textTooLong = (ecc: string) =>
  badRenderData(`the text is too long for a QR code at error correction ${ecc}${ecc === 'L' ? '' : '; a lower level (L) holds more'}`)

/** The QR library refused the text for another reason (`reason`: its message). */
export const textNotEncodable = (reason: string) => badRenderData(`cannot encode this text as a QR code: ${reason}`)

/** A PNG smaller than one pixel per module: `modules` is the code's width with its quiet zone. */
export const sizeTooSmall = (size: number, modules: number) =>
  invalidQrQuery([
    {
      path: 'size',
      message:
        `${size} is too small for this code: it is ${modules} modules wide with the margin, and each module needs at least one pixel; use size ` +
        `>= ${modules} or a smaller margin`,
    },
  ])
