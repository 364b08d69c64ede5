// The line protocol between a Python test (testkit/clients/node.py) and one long-lived Node
// process driving one Kafka client: each stdin line is {"id", "op", "args"}; each answer is one
// stdout line {"id", "ok": true, "result"} or {"id", "ok": false, "error": {...}}. Calls run
// concurrently (a test may have several group members in one process). Bytes travel as base64,
// null stays null; Kafka's 64-bit numbers travel as decimal strings or JS numbers.
//
// Usage: node serve.mjs kafkajs|platformatic. The client's logs go to stderr, never stdout.

import readline from 'node:readline'

const clients = { kafkajs: './kafkajs.mjs', platformatic: './platformatic.mjs' }
const name = process.argv[2]
if (!clients[name]) {
  process.stderr.write(`usage: serve.mjs ${Object.keys(clients).join('|')}\n`)
  process.exit(2)
}
// Anything a library prints goes to stderr: stdout carries the protocol alone.
for (const level of ['log', 'info', 'warn', 'debug', 'trace']) {
  console[level] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n')
}
const { ops, closeAll } = await import(clients[name])

function describe (error) {
  if (error === null || typeof error !== 'object') return { name: 'Error', message: String(error) }
  const out = {
    name: error.constructor?.name ?? error.name,
    message: error.message,
    type: error.type ?? error.apiId ?? null, // KafkaJS: Kafka's error name; @platformatic: on ProtocolError
    code: error.code ?? null
  }
  const nested = error.errors ?? (error.cause ? [error.cause] : null)
  if (Array.isArray(nested) && nested.length) out.errors = nested.slice(0, 5).map(describe)
  if (error.response !== undefined) {
    try { out.response = JSON.parse(JSON.stringify(error.response, jsonable)) } catch { }
  }
  return out
}

export function jsonable (key, value) {
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Map) return Object.fromEntries(value)
  if (value instanceof Set) return [...value]
  if (Buffer.isBuffer(value)) return value.toString('base64')
  if (value && value.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data).toString('base64')
  return value
}

function answer (message) {
  process.stdout.write(JSON.stringify(message, jsonable) + '\n')
}

const lines = readline.createInterface({ input: process.stdin })
lines.on('line', async line => {
  let id = null
  try {
    const request = JSON.parse(line)
    id = request.id
    const op = ops[request.op]
    if (!op) throw new Error(`unknown op ${request.op}`)
    answer({ id, ok: true, result: (await op(request.args ?? {})) ?? null })
  } catch (error) {
    answer({ id, ok: false, error: describe(error) })
  }
})
// The test closed our stdin (or died): close every client still open, then exit.
lines.on('close', async () => {
  try { await Promise.race([closeAll(), new Promise(resolve => setTimeout(resolve, 5000))]) } finally { process.exit(0) }
})
process.on('unhandledRejection', error => process.stderr.write(`unhandled rejection: ${error?.stack ?? error}\n`))
answer({ id: 0, ok: true, result: { client: name, node: process.version } })
