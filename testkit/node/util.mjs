// What both client drivers share: bytes, handles, deadlines.

export const bytes = text => (text === null || text === undefined ? null : Buffer.from(text, 'base64'))
export const b64 = buffer => (buffer === null || buffer === undefined ? null : Buffer.from(buffer).toString('base64'))
export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// Objects a test keeps between calls (producers, group members), by number.
const handles = new Map()
let nextHandle = 1

export function keep (object) {
  const handle = nextHandle++
  handles.set(handle, object)
  return handle
}

export function kept (handle) {
  const object = handles.get(handle)
  if (!object) throw new Error(`no handle ${handle}`)
  return object
}

export function drop (handle) {
  const object = handles.get(handle)
  handles.delete(handle)
  return object
}

export function everyKept () {
  const all = [...handles.values()]
  handles.clear()
  return all
}

// Resolves once check() is truthy (polled every 20 ms) or when timeoutMs passed.
export async function until (check, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (!check() && Date.now() < deadline) await sleep(20)
  return check()
}

// Values of a read that stops as testkit.clients.base.Reading does: once `until` (base64) is seen,
// or `count` values came, after timeoutMs, or quietMs after the last new value once one came.
export class Reading {
  constructor ({ until = null, count = null, quietMs = null, timeoutMs = 20000 }) {
    Object.assign(this, { until, count, quietMs, deadline: Date.now() + timeoutMs, seen: 0, quietUntil: null })
    this.values = []
  }

  goesOn () {
    const { values } = this
    if ((this.until !== null && values.includes(this.until)) || (this.count !== null && values.length >= this.count)) return false
    const now = Date.now()
    if (this.quietMs !== null && values.length > this.seen) {
      this.seen = values.length
      this.quietUntil = now + this.quietMs
    }
    return now < this.deadline && (this.quietUntil === null || now < this.quietUntil)
  }

  async wait () {
    while (this.goesOn()) await sleep(20)
    return this.values
  }
}

// JSON has no 64-bit integers: {"$bigint": "123"} in a call's arguments becomes 123n.
export function revive (value) {
  if (Array.isArray(value)) return value.map(revive)
  if (value && typeof value === 'object') {
    if (Object.keys(value).length === 1 && typeof value.$bigint === 'string') return BigInt(value.$bigint)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revive(v)]))
  }
  return value
}
