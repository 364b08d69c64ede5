// KafkaJS 2.2.4, driven by testkit/clients/node.py through serve.mjs.
//
// KafkaJS ships gzip only; snappy and lz4 are the codec packages its README points to
// (kafkajs-snappy, @2l/kafkajs-lz4), registered the way KafkaJS documents. zstd is a codec of the
// same shape over Node's own zlib zstd (Node >= 22.15): the one KafkaJS names, @kafkajs/zstd, is a
// native addon (cppzst) that needs a compiler and Node's headers to install.
//
// KafkaJS has no assign(): every read is a group member (subscribe, then seek).

import fs from 'node:fs'
import zlib from 'node:zlib'
import { promisify } from 'node:util'
import kafkajs from 'kafkajs'
import SnappyCodec from 'kafkajs-snappy'
import LZ4Codec from '@2l/kafkajs-lz4'
import { b64, bytes, drop, everyKept, keep, kept, Reading, revive, sleep, until } from './util.mjs'

const { Kafka, CompressionTypes, CompressionCodecs, logLevel, AclResourceTypes, AclOperationTypes,
  AclPermissionTypes, ResourcePatternTypes, ConfigResourceTypes } = kafkajs

const zstdCompress = promisify(zlib.zstdCompress)
const zstdDecompress = promisify(zlib.zstdDecompress)
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
CompressionCodecs[CompressionTypes.LZ4] = new LZ4Codec().codec
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  compress: encoder => zstdCompress(encoder.buffer),
  decompress: buffer => zstdDecompress(buffer)
})

const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD
}

const logCreator = () => ({ namespace, level, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`[kafkajs ${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

function kafka ({ brokers, auth = null, clientId = 'trafka-compat-kafkajs', retries = 5 }) {
  const config = {
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    logCreator,
    connectionTimeout: 5000,
    requestTimeout: 15000,
    retry: { retries, initialRetryTime: 100, maxRetryTime: 2000 }
  }
  if (auth) {
    if (auth.protocol === 'SSL' || auth.protocol === 'SASL_SSL') {
      config.ssl = { ca: [fs.readFileSync(auth.ca)], rejectUnauthorized: true }
      if (auth.cert) Object.assign(config.ssl, { cert: fs.readFileSync(auth.cert), key: fs.readFileSync(auth.key) })
    }
    if (auth.mechanism === 'OAUTHBEARER') {
      config.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: auth.token }) }
    } else if (auth.mechanism) {
      config.sasl = { mechanism: auth.mechanism.toLowerCase(), username: auth.user, password: auth.password }
    }
  }
  return new Kafka(config)
}

function outMessage (partition, m) {
  const headers = []
  for (const [k, v] of Object.entries(m.headers ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) headers.push([k, b64(one)])
  }
  return {
    partition,
    offset: m.offset,
    key: b64(m.key),
    value: b64(m.value),
    headers,
    timestamp: m.timestamp,
    timestampType: m.batchContext?.timestampType === 1 ? 'LogAppendTime' : 'CreateTime'
  }
}

function inMessage (m, partition) {
  const out = { key: bytes(m.key), value: bytes(m.value), partition }
  if (m.headers?.length) out.headers = Object.fromEntries(m.headers.map(([k, v]) => [k, bytes(v)]))
  if (m.timestamp !== null && m.timestamp !== undefined) out.timestamp = String(m.timestamp)
  return out
}

// One producer: msgs sent `chunk` at a time (one request, one batch per call of send), in order.
async function produce ({ brokers, auth, topic, msgs, codec = 'none', partition = 0, idempotent = false,
  chunk = 500, acks = -1 }) {
  const producer = kafka({ brokers, auth }).producer(idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {})
  await producer.connect()
  try {
    const offsets = []
    for (let i = 0; i < msgs.length; i += chunk) {
      const part = msgs.slice(i, i + chunk)
      const [meta] = await producer.send({
        topic, acks, compression: CODECS[codec], messages: part.map(m => inMessage(m, partition))
      })
      for (let j = 0; j < part.length; j++) offsets.push(meta ? Number(meta.baseOffset) + j : null) // acks=0: no answer
    }
    return offsets
  } finally {
    await producer.disconnect()
  }
}

// A group member of its own (a fresh group id) that seeks `partition` to `offset` and collects
// what eachBatch hands it until `count` records came or timeoutMs passed.
async function consume ({ brokers, auth, topic, count, partition = 0, offset = 0, isolation = 'read_uncommitted',
  timeoutMs = 20000 }) {
  const consumer = kafka({ brokers, auth }).consumer({
    groupId: `trafka-read-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`,
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200
  })
  const got = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (batch.partition !== partition) return
        for (const m of batch.messages) if (got.length < count) got.push(outMessage(batch.partition, m))
      }
    })
    consumer.seek({ topic, partition, offset: String(offset) })
    await until(() => got.length >= count, timeoutMs)
    return got
  } finally {
    await consumer.disconnect()
  }
}

// A member of `group` that reads `count` records from its committed offsets (earliest without),
// commits what it read and leaves.
async function groupConsume ({ brokers, auth, topic, group, count, timeoutMs = 20000 }) {
  const consumer = kafka({ brokers, auth }).consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000,
    maxWaitTimeInMs: 200 })
  const got = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) if (got.length < count) got.push(outMessage(batch.partition, m))
      }
    })
    await until(() => got.length >= count, timeoutMs)
    const next = new Map()
    for (const g of got) next.set(g.partition, BigInt(g.offset) + 1n)
    await consumer.commitOffsets([...next].map(([p, o]) => ({ topic, partition: p, offset: o.toString() })))
    return got
  } finally {
    await consumer.disconnect()
  }
}

// Values (base64) of partition 0 of `topic` at an isolation level, stopped as Reading says.
async function readValues ({ brokers, auth, topic, isolation, until: last = null, count = null, quietMs = null,
  timeoutMs = 20000 }) {
  const consumer = kafka({ brokers, auth }).consumer({
    groupId: `trafka-read-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`,
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200
  })
  const reading = new Reading({ until: last, count, quietMs, timeoutMs })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => { for (const m of batch.messages) reading.values.push(b64(m.value)) }
    })
    return await reading.wait()
  } finally {
    await consumer.disconnect()
  }
}

// Transactional producer: a handle, then one call per step.
async function txnOpen ({ brokers, auth, transactionalId, timeoutMs = 60000 }) {
  const producer = kafka({ brokers, auth }).producer({
    transactionalId, idempotent: true, maxInFlightRequests: 1, transactionTimeout: timeoutMs
  })
  return keep({ kind: 'txn', producer, transaction: null, pending: [] })
}

async function txn ({ handle, action, topic, value, partition = 0, offset, group }) {
  const t = kept(handle)
  switch (action) {
    case 'init': // KafkaJS's connect() of a transactional producer sends InitProducerId
      await t.producer.connect()
      return null
    case 'begin':
      t.transaction = await t.producer.transaction()
      return null
    case 'send':
      // In order: each send() is a Produce request of its own, and two in flight may pass each other.
      t.pending.push(t.last = (t.last ?? Promise.resolve()).catch(() => {}).then(() => t.transaction.send({ topic, messages: [{ value: bytes(value), partition }] })))
      return null
    case 'flush': {
      const pending = t.pending.splice(0)
      await Promise.all(pending)
      return null
    }
    case 'commit':
    case 'abort': {
      const pending = t.pending.splice(0)
      await Promise.all(pending)
      const transaction = t.transaction
      t.transaction = null
      await (action === 'commit' ? transaction.commit() : transaction.abort())
      return null
    }
    case 'sendOffsets':
      await t.transaction.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition, offset: String(offset) }] }] })
      return null
    default:
      throw new Error(`unknown transaction action ${action}`)
  }
}

// A group member polled in the background, as an application runs it: values it read, its
// assignment, and (with autoCommit) its commits every commitIntervalMs.
async function memberOpen ({ brokers, auth, topic, group, sessionTimeout = 6000, heartbeatInterval = 1000,
  autoCommit = true, commitIntervalMs = 200 }) {
  const consumer = kafka({ brokers, auth }).consumer({ groupId: group, sessionTimeout, heartbeatInterval,
    maxWaitTimeInMs: 200, rebalanceTimeout: 10000 })
  const member = { kind: 'member', consumer, values: [], assignment: [], generations: 0, errors: [], restarts: [] }
  consumer.on(consumer.events.GROUP_JOIN, event => {
    member.assignment = event.payload.memberAssignment[topic] ?? []
    member.generations++
  })
  // A crash KafkaJS restarts the consumer after (restartOnFailure, on retriable errors: a broker
  // gone, say) is a restart; one it does not restart after is an error.
  consumer.on(consumer.events.CRASH, event => {
    (event.payload.restart ? member.restarts : member.errors).push(String(event.payload.error))
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit,
    autoCommitInterval: commitIntervalMs,
    eachMessage: async ({ message }) => { member.values.push(b64(message.value)) }
  })
  return keep(member)
}

function memberState ({ handle }) {
  const m = kept(handle)
  return { values: m.values, assignment: [...m.assignment].sort((a, b) => a - b), generations: m.generations,
    errors: m.errors, restarts: m.restarts }
}

async function close ({ handle }) {
  const object = drop(handle)
  if (!object) return null
  if (object.kind === 'txn') await object.producer.disconnect()
  else await object.consumer.disconnect()
  return null
}

async function closeAll () {
  await Promise.allSettled(everyKept().map(o => (o.kind === 'txn' ? o.producer : o.consumer).disconnect()))
}

// Admin: one client per call, the method named as in KafkaJS's admin API (args an object, or a
// list of positional arguments); results as KafkaJS gives them (made JSON by serve.mjs).
const RESOURCE = { topic: ConfigResourceTypes.TOPIC, broker: ConfigResourceTypes.BROKER }

async function admin ({ brokers, auth, method, args: raw = {} }) {
  const args = revive(raw)
  const client = kafka({ brokers, auth }).admin()
  await client.connect()
  try {
    switch (method) {
      case 'describeConfigs':
        return await client.describeConfigs({
          includeSynonyms: false,
          resources: args.resources.map(r => ({ type: RESOURCE[r.type], name: r.name, configNames: r.configNames }))
        })
      case 'alterConfigs':
        return await client.alterConfigs({
          validateOnly: false,
          resources: args.resources.map(r => ({ type: RESOURCE[r.type], name: r.name, configEntries: r.configEntries }))
        })
      case 'createAcls':
      case 'describeAcls':
      case 'deleteAcls': {
        const acl = a => ({
          resourceType: AclResourceTypes[a.resourceType],
          resourceName: a.resourceName,
          resourcePatternType: ResourcePatternTypes[a.patternType ?? 'LITERAL'],
          principal: a.principal,
          host: a.host ?? '*',
          operation: AclOperationTypes[a.operation],
          permissionType: AclPermissionTypes[a.permissionType ?? 'ALLOW']
        })
        if (method === 'createAcls') return await client.createAcls({ acl: args.acls.map(acl) })
        if (method === 'describeAcls') return await client.describeAcls(acl(args.filter))
        return await client.deleteAcls({ filters: args.filters.map(acl) })
      }
      case 'deleteTopicRecords':
        // KafkaJS looks the partitions' leaders up in metadata the admin client already holds
        // (KafkaJSTopicMetadataNotLoaded otherwise): load it first, as its users do.
        await client.fetchTopicMetadata({ topics: [args.topic] })
        return await client.deleteTopicRecords(args)
      default:
        if (typeof client[method] !== 'function') throw new Error(`KafkaJS admin has no ${method}`)
        return await (Array.isArray(args) ? client[method](...args) : client[method](args))
    }
  } finally {
    await client.disconnect()
  }
}

export const ops = { produce, consume, groupConsume, readValues, txnOpen, txn, memberOpen, memberState, close, admin }
export { closeAll, sleep }
