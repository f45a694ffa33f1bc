'use strict'
// How the app talks to lnk: the server's URL from the connection, the key as a bearer token, and lnk's error
// envelope turned into an error Zapier shows the user with lnk's own code and message.

/** `https://lnk.example.com/`, `…/v1` and `…/v1/` all name the same server. */
const apiBase = (bundle) => {
  const raw = String((bundle.authData && bundle.authData.baseUrl) || '').trim()
  return `${raw.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`
}

const addApiKey = (request, z, bundle) => {
  request.headers = request.headers || {}
  if (bundle.authData && bundle.authData.apiKey) request.headers.Authorization = `Bearer ${bundle.authData.apiKey}`
  request.headers.Accept = 'application/json'
  return request
}

const raiseApiError = (response, z) => {
  if (response.status < 400) return response
  let error = null
  try {
    error = JSON.parse(response.content).error
  } catch (_) {
    // Not lnk's envelope (a proxy's page, say): the status alone is all there is to report.
  }
  const code = (error && error.code) || `http_${response.status}`
  const message = (error && error.message) || `lnk answered ${response.status}`
  if (response.status === 401) throw new z.errors.ExpiredAuthError(`${message} (${code})`)
  throw new z.errors.Error(`${message} (${code})`, code, response.status)
}

/** The `data` of lnk's `{success, data}` envelope. */
const dataOf = (response) => response.data.data

module.exports = { apiBase, addApiKey, raiseApiError, dataOf }
