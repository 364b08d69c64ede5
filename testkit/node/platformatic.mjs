// @platformatic/kafka 2.12.1, driven by testkit/clients/node.py through serve.mjs.
//
// Every codec is built in (gzip and zstd through node:zlib, snappy and lz4 in WebAssembly).
// "consume" (assign + seek + poll) is the client's Consumer.fetch: Fetch requests from an offset
// to the partition's leader, no group; its records come decoded by the client, batch by batch,
// and the driver takes the timestamp type from the batch's attributes (LogAppendTime: the batch's
// max timestamp, as Kafka's consumers do), because the client's MessagesStream reports
// firstTimestamp + delta whatever the type. Group reads use the MessagesStream.

import fs from 'node:fs'
import {
  Admin, Consumer, FetchIsolationLevels, Producer
} from '@platformatic/kafka'
import { b64, bytes, drop, everyKept, keep, kept, Reading, revive, sleep, until } from './util.mjs'

const IS_CONTROL = 0x20
const LOG_APPEND_TIME = 0x08

function base ({ brokers, auth = null, clientId = 'trafka-compat-platformatic', retries = 5 }) {
  const options = { clientId, bootstrapBrokers: brokers, retries, retryDelay: 200, timeout: 15000 }
  if (auth) {
    if (auth.protocol === 'SSL' || auth.protocol === 'SASL_SSL') {
      options.tls = { ca: fs.readFileSync(auth.ca) }
      if (auth.cert) Object.assign(options.tls, { cert: fs.readFileSync(auth.cert), key: fs.readFileSync(auth.key) })
    }
    if (auth.mechanism === 'OAUTHBEARER') options.sasl = { mechanism: 'OAUTHBEARER', token: auth.token }
    else if (auth.mechanism) options.sasl = { mechanism: auth.mechanism, username: auth.user, password: auth.password }
  }
  return options
}

const isolationOf = isolation => (isolation === 'read_committed' ? FetchIsolationLevels.READ_COMMITTED : FetchIsolationLevels.READ_UNCOMMITTED)
const groupName = () => `trafka-read-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`

function inMessage (topic, partition, m) {
  const out = { topic, partition, key: bytes(m.key) ?? undefined, value: bytes(m.value) ?? undefined }
  if (m.headers?.length) out.headers = new Map(m.headers.map(([k, v]) => [Buffer.from(k), bytes(v)]))
  if (m.timestamp !== null && m.timestamp !== undefined) out.timestamp = BigInt(m.timestamp)
  return out
}

function streamMessage (m) {
  return {
    partition: m.partition,
    offset: m.offset.toString(),
    key: b64(m.key),
    value: b64(m.value),
    headers: m.headerEntries.map(([k, v]) => [k.toString(), b64(v)]),
    timestamp: m.timestamp.toString(),
    timestampType: null // the stream does not say
  }
}

// One producer; msgs sent `chunk` at a time (one Produce request, one batch per call of send).
async function produce ({ brokers, auth, topic, msgs, codec = 'none', partition = 0, idempotent = false,
  chunk = 500, acks = -1 }) {
  const producer = new Producer({ ...base({ brokers, auth }), idempotent, compression: codec, acks, autocreateTopics: true })
  try {
    const offsets = []
    for (let i = 0; i < msgs.length; i += chunk) {
      const part = msgs.slice(i, i + chunk)
      const result = await producer.send({ messages: part.map(m => inMessage(topic, partition, m)) })
      const [first] = result.offsets ?? []
      for (let j = 0; j < part.length; j++) offsets.push(first === undefined ? null : Number(first.offset) + j)
    }
    return offsets
  } finally {
    await producer.close()
  }
}

// Fetch from `offset` on `partition`'s leader until `count` records came or timeoutMs passed.
async function consume ({ brokers, auth, topic, count, partition = 0, offset = 0, isolation = 'read_uncommitted',
  timeoutMs = 20000 }) {
  const consumer = new Consumer({ ...base({ brokers, auth }), groupId: groupName() })
  const got = []
  try {
    const metadata = await consumer.metadata({ topics: [topic] })
    const info = metadata.topics.get(topic)
    let next = BigInt(offset)
    const deadline = Date.now() + timeoutMs
    while (got.length < count && Date.now() < deadline) {
      const response = await consumer.fetch({
        node: info.partitions[partition].leader,
        maxWaitTime: 200,
        minBytes: 1,
        maxBytes: 8 << 20,
        isolationLevel: isolationOf(isolation),
        topics: [{
          topicId: info.id,
          partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, partitionMaxBytes: 4 << 20 }]
        }]
      })
      const answer = response.responses[0].partitions[0]
      if (answer.errorCode !== 0) throw new Error(`Fetch of ${topic}-${partition} at ${next}: error code ${answer.errorCode}`)
      for (const batch of answer.records ?? []) {
        const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
        if (!(batch.attributes & IS_CONTROL)) {
          const appended = (batch.attributes & LOG_APPEND_TIME) !== 0
          for (const r of batch.records) {
            const at = batch.firstOffset + BigInt(r.offsetDelta)
            if (at < next || got.length >= count) continue
            got.push({
              partition,
              offset: at.toString(),
              key: b64(r.key),
              value: b64(r.value),
              headers: r.headers.map(([k, v]) => [k.toString(), b64(v)]),
              timestamp: (appended ? batch.maxTimestamp : batch.firstTimestamp + r.timestampDelta).toString(),
              timestampType: appended ? 'LogAppendTime' : 'CreateTime'
            })
          }
        }
        if (end > next) next = end
      }
    }
    return got
  } finally {
    await consumer.close()
  }
}

// A member of `group` reading `count` records through the MessagesStream from its committed
// offsets (earliest without), committing what it read, then leaving.
async function groupConsume ({ brokers, auth, topic, group, count, timeoutMs = 20000 }) {
  const consumer = new Consumer({ ...base({ brokers, auth }), groupId: group, sessionTimeout: 6000, heartbeatInterval: 1000 })
  const got = []
  const last = new Map()
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false, maxWaitTime: 200 })
    stream.on('data', m => {
      if (got.length < count) {
        got.push(streamMessage(m))
        last.set(m.partition, m)
      }
    })
    await until(() => got.length >= count, timeoutMs)
    for (const m of last.values()) await m.commit()
    await stream.close()
    return got
  } finally {
    await consumer.close()
  }
}

async function readValues ({ brokers, auth, topic, isolation, until: last = null, count = null, quietMs = null,
  timeoutMs = 20000 }) {
  const consumer = new Consumer({ ...base({ brokers, auth }), groupId: groupName() })
  const reading = new Reading({ until: last, count, quietMs, timeoutMs })
  try {
    const stream = await consumer.consume({
      topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 200, isolationLevel: isolationOf(isolation)
    })
    stream.on('data', m => reading.values.push(b64(m.value)))
    const values = await reading.wait()
    await stream.close()
    return values
  } finally {
    await consumer.close()
  }
}

// Transactional producer. A consumer of the offsets' group, made on demand, gives
// Transaction.addConsumer/addOffset the group's metadata they take (the client has no
// sendOffsetsToTransaction that takes bare offsets).
async function txnOpen ({ brokers, auth, transactionalId, timeoutMs = 60000 }) {
  // The client's transaction timeout (InitProducerId's) is its request timeout.
  const producer = new Producer({ ...base({ brokers, auth }), transactionalId, idempotent: true, acks: -1,
    timeout: timeoutMs })
  return keep({ kind: 'txn', producer, brokers, auth, transaction: null, pending: [], consumers: new Map() })
}

async function txn ({ handle, action, topic, value, partition = 0, offset, group }) {
  const t = kept(handle)
  switch (action) {
    case 'init': // the client has no initTransactions: its first beginTransaction sends InitProducerId
      t.initialized = true
      return null
    case 'begin':
      // -1/-1 as Java's initTransactions sends: left alone, the client's first beginTransaction sends
      // InitProducerId(transactional id, producer id 0, epoch 0), which Kafka's coordinator answers
      // PRODUCER_FENCED whenever another producer id holds the transactional id.
      t.transaction = await t.producer.beginTransaction(t.begun ? {} : { producerId: -1n, producerEpoch: -1 })
      t.begun = true
      return null
    case 'send':
      // In order: each send() is a Produce request of its own, and two in flight may pass each other.
      t.pending.push(t.last = (t.last ?? Promise.resolve()).catch(() => {}).then(() => t.transaction.send({ messages: [{ topic, partition, value: bytes(value) }] })))
      return null
    case 'flush':
      await Promise.all(t.pending.splice(0))
      return null
    case 'commit':
    case 'abort': {
      await Promise.all(t.pending.splice(0))
      const transaction = t.transaction
      t.transaction = null
      try {
        await (action === 'commit' ? transaction.commit() : transaction.abort())
      } catch (error) {
        await transaction.cancel() // what an application does to use the producer again
        throw error
      }
      return null
    }
    case 'sendOffsets': {
      let consumer = t.consumers.get(group)
      if (!consumer) {
        consumer = new Consumer({ ...base({ brokers: t.brokers, auth: t.auth }), groupId: group })
        t.consumers.set(group, consumer)
        await consumer.findGroupCoordinator()
      }
      await t.transaction.addConsumer(consumer)
      // The message whose offset is committed: what addOffset reads of it (offset + 1 is committed).
      await t.transaction.addOffset({
        topic, partition, offset: BigInt(offset) - 1n, leaderEpoch: -1,
        metadata: { consumer: { groupId: group, generationId: consumer.generationId, memberId: consumer.memberId ?? '', coordinatorId: consumer.coordinatorId } }
      })
      return null
    }
    default:
      throw new Error(`unknown transaction action ${action}`)
  }
}

// groupProtocol 'consumer': KIP-848 (ConsumerGroupHeartbeat, the broker assigns), else classic.
async function memberOpen ({ brokers, auth, topic, group, sessionTimeout = 6000, heartbeatInterval = 1000,
  autoCommit = true, commitIntervalMs = 200, groupProtocol = 'classic', groupInstanceId = undefined }) {
  const membership = groupProtocol === 'consumer'
    ? { groupProtocol }
    : { sessionTimeout, heartbeatInterval, rebalanceTimeout: Math.max(10000, sessionTimeout) }
  if (groupInstanceId) membership.groupInstanceId = groupInstanceId
  const consumer = new Consumer({ ...base({ brokers, auth }), groupId: group, ...membership })
  const member = { kind: 'member', consumer, topic, values: [], generations: 0, errors: [] }
  consumer.on('consumer:group:join', () => { member.generations++ })
  consumer.on('consumer:heartbeat:error', payload => member.errors.push(String(payload?.error ?? payload)))
  member.stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest',
    autocommit: autoCommit ? commitIntervalMs : false, maxWaitTime: 200 })
  member.stream.on('data', m => member.values.push(b64(m.value)))
  member.stream.on('error', e => member.errors.push(String(e)))
  return keep(member)
}

function memberState ({ handle }) {
  const m = kept(handle)
  const mine = (m.consumer.assignments ?? []).find(a => a.topic === m.topic)
  return { values: m.values, assignment: [...(mine?.partitions ?? [])].sort((a, b) => a - b), generations: m.generations,
    errors: m.errors, restarts: [] }
}

async function closeOne (object) {
  if (object.kind === 'txn') {
    await Promise.allSettled([...object.consumers.values()].map(c => c.close(true)))
    await object.producer.close(true)
  } else {
    await object.stream?.close()
    await object.consumer.close(true)
  }
}

async function close ({ handle }) {
  const object = drop(handle)
  if (object) await closeOne(object)
  return null
}

async function closeAll () {
  await Promise.allSettled(everyKept().map(closeOne))
}

// Admin: one client per call, the method and its options as in the client's Admin API.
async function admin ({ brokers, auth, method, args = {} }) {
  const client = new Admin(base({ brokers, auth }))
  try {
    if (typeof client[method] !== 'function') throw new Error(`@platformatic/kafka's Admin has no ${method}`)
    return await client[method](revive(args))
  } finally {
    await client.close()
  }
}

export const ops = { produce, consume, groupConsume, readValues, txnOpen, txn, memberOpen, memberState, close, admin }
export { closeAll, sleep }
